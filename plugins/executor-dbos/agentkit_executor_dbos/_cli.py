"""The commands: ``agentkit worker``, ``submit``, ``result``, ``cancel`` and ``approve``.

A worker builds its agent as ``agentkit run`` does (``--model``, ``--tools MODULE:ATTR``, the
kit settings of the project's ``agentkit.toml``) and works the queue; ``submit`` enqueues a run
and prints its id; ``result`` prints a run's output (exit 0), or its error (exit 1), or that it
has not finished (exit 3). The executor's options come from ``executor_options`` of the file's
``[kit]`` table, with the command line's on top.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar

from agentkit_core import ConfigError
from agentkit_core import add_agent_arguments

if TYPE_CHECKING:
    from agentkit_core import AgentResult

#: The agent a worker serves and a submit names when neither says: the CLI kit's own name.
DEFAULT_AGENT = "cli"
#: ``agentkit result`` when the run has not finished within ``--wait``.
NOT_FINISHED = 3

T = TypeVar("T")


def add_commands(cli: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the commands to ``cli``."""
    worker = cli.add_parser(
        "worker",
        help="work a durable run queue (executor dbos)",
        description="Run the queued runs of a DBOS queue. The agent is built as agentkit run "
        "builds it: kit settings from agentkit.toml, the options given here on top. A worker "
        "restarted with the same --worker-id first recovers the runs its predecessor left; the "
        "workers still serving recover a dead worker's runs once its beat is --takeover-after "
        "seconds old.",
    )
    _executor_arguments(worker)
    worker.add_argument(
        "--concurrency", type=int, metavar="N", help="runs this worker runs at once (at least 1)"
    )
    worker.add_argument(
        "--worker-id",
        default=None,
        help="this worker's identity (default 'local'); give each of several workers its own",
    )
    worker.add_argument(
        "--heartbeat",
        type=float,
        metavar="SECONDS",
        help="seconds between this worker's beats in the database (default 2)",
    )
    worker.add_argument(
        "--takeover-after",
        type=float,
        metavar="SECONDS",
        help="seconds without a beat after which the serving workers take a worker for dead "
        "and recover its runs (default 30; at least 3 heartbeats)",
    )
    add_agent_arguments(worker)
    worker.set_defaults(func=_worker)

    submit = cli.add_parser(
        "submit",
        help="enqueue a durable run and print its id (executor dbos)",
        description="Enqueue a run of TASK; a worker on the queue runs it. Prints the run id.",
    )
    _executor_arguments(submit)
    submit.add_argument("task", help="what the agent should do")
    submit.add_argument("--id", dest="run_id", help="the run's id (default: a new one)")
    submit.add_argument(
        "--agent",
        default=DEFAULT_AGENT,
        help=f"the name of the agent the workers serve (default {DEFAULT_AGENT!r})",
    )
    submit.add_argument(
        "--stream",
        action="store_true",
        help="stream the run's model calls and publish their events (agentkit result --stream)",
    )
    submit.set_defaults(func=_submit)

    result = cli.add_parser(
        "result",
        help="print a durable run's output (executor dbos)",
        description="Print the run's output (exit 0), or its error (exit 1); exit 3 when it "
        "has not finished within --wait seconds.",
    )
    _executor_arguments(result, queue=False)
    result.add_argument("run_id", metavar="RUN_ID")
    result.add_argument(
        "--wait", type=float, default=0.0, metavar="SECONDS", help="wait this long (default 0)"
    )
    result.add_argument(
        "--stream",
        action="store_true",
        help="print the text of a run submitted with --stream as it comes (until the run "
        "ends, or --wait seconds when given)",
    )
    result.set_defaults(func=_result)

    cancel = cli.add_parser(
        "cancel",
        help="cancel a durable run (executor dbos)",
        description="Cancel the run: it stops at its next step, whichever worker runs it.",
    )
    _executor_arguments(cancel, queue=False)
    cancel.add_argument("run_id", metavar="RUN_ID")
    cancel.set_defaults(func=_cancel)

    approve = cli.add_parser(
        "approve",
        help="list or answer the calls a durable run waits on (executor dbos)",
        description="With no --allow/--deny, print the calls RUN_ID waits on a person's "
        "approval for (id, tool, arguments; none: it is not waiting). Otherwise answer them: "
        "the run goes on in its worker. A call left out is put to the policy again.",
    )
    _executor_arguments(approve, queue=False)
    approve.add_argument("run_id", metavar="RUN_ID")
    approve.add_argument("--allow", action="append", default=[], metavar="CALL_ID")
    approve.add_argument("--deny", action="append", default=[], metavar="CALL_ID")
    approve.add_argument("--by", default="", help="who decides, for the record (human:alice)")
    approve.add_argument("--reason", default="", help="what the model reads for a refusal")
    approve.set_defaults(func=_approve)


def _run(work: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run``, imported here: listing plugins builds these commands' parsers."""
    import asyncio

    return asyncio.run(work)


def _executor_arguments(parser: argparse.ArgumentParser, *, queue: bool = True) -> None:
    parser.add_argument(
        "--executor", default="dbos", help="the run executor (dbos: the one these commands serve)"
    )
    parser.add_argument(
        "--database",
        metavar="URL",
        help="the DBOS database: sqlite:///runs.sqlite or postgresql://user@host/db (default: "
        "executor_options.database of agentkit.toml, else sqlite:///agentkit-runs.sqlite)",
    )
    if queue:
        parser.add_argument("--queue", metavar="NAME", help="the queue (default 'agentkit')")


def _executor_options(args: argparse.Namespace, file_options: dict[str, Any]) -> dict[str, Any]:
    """``executor_options``: the file's, then the command line's."""
    if args.executor != "dbos":
        raise ConfigError(
            f"--executor {args.executor!r}: agentkit {args.command_name} serves the dbos "
            "executor's queues; pass --executor dbos (an in-process run is agentkit run)",
            value=args.executor,
            source="--executor",
        )
    options = dict(file_options.get("executor_options") or {})
    given = {
        "database": args.database,
        "queue": getattr(args, "queue", None),
        "concurrency": getattr(args, "concurrency", None),
        "worker_id": getattr(args, "worker_id", None),
        "heartbeat": getattr(args, "heartbeat", None),
        "takeover_after": getattr(args, "takeover_after", None),
    }
    options.update({k: v for k, v in given.items() if v is not None})
    return options


def _executor(args: argparse.Namespace) -> Any:
    from agentkit_core import file_kit_options
    from agentkit_core import get_executor

    options = _executor_options(args, file_kit_options()[0])
    return get_executor("dbos", manager=args.plugin_manager, **options)


def _worker(args: argparse.Namespace) -> int:
    from agentkit_core import Agent
    from agentkit_core import Kit
    from agentkit_core import kit_options_from_args

    from ._executor import DBOSExecutor

    args.command_name = "worker"
    options = kit_options_from_args(args)
    options["executor"] = "dbos"
    options["executor_options"] = _executor_options(args, options)

    async def serve() -> None:
        import asyncio
        import signal

        async with await Kit.open(**options) as kit:
            agent = Agent.from_config(kit.config())
            executor = agent.executor
            assert isinstance(executor, DBOSExecutor)
            print(
                f"agentkit worker {executor.worker_id!r}: agent {agent.name!r} on queue "
                f"{executor.queue!r} of {executor!r}",
                file=sys.stderr,
                flush=True,
            )
            # SIGTERM (a supervisor's stop, a redeploy) stops it as Ctrl-C does: closed, so its
            # beat is removed when it holds no run, rather than left for a takeover
            stop = asyncio.Event()
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
            try:
                await executor.serve(agent, stop=stop)
            finally:
                executor.close()

    _run(serve())
    return 0


def _submit(args: argparse.Namespace) -> int:
    args.command_name = "submit"
    executor = _executor(args)
    if not args.task.strip():
        raise ConfigError(
            'the task is empty; say what the agent should do, as in agentkit submit "..."',
            value=args.task,
            source="TASK",
        )
    try:
        handle = _run(
            executor.submit(args.task, agent=args.agent, run_id=args.run_id, stream=args.stream)
        )
    finally:
        executor.close()
    print(handle.run_id)
    return 0


def _result(args: argparse.Namespace) -> int:
    args.command_name = "result"
    executor = _executor(args)

    async def read() -> int:
        import asyncio

        handle = executor.handle(args.run_id)
        streamed = False

        async def follow() -> AgentResult:
            nonlocal streamed
            async for event in handle.stream():
                if event.kind == "text":
                    print(event.text, end="", flush=True)
                    streamed = True
                elif event.kind == "result":
                    result: AgentResult = event.result
            return result

        try:
            if args.stream:
                try:
                    result = await asyncio.wait_for(follow(), args.wait or None)
                except TimeoutError:
                    raise TimeoutError(
                        f"run {args.run_id!r} did not finish within {args.wait} s"
                    ) from None
            else:
                result = await handle.result(timeout=max(args.wait, 0.001))
        except TimeoutError as exc:
            print(f"agentkit: {exc}", file=sys.stderr)
            return NOT_FINISHED
        except Exception as exc:
            print(
                f"agentkit: run {args.run_id!r} failed: {type(exc).__name__}: {exc}",
                file=sys.stderr,
            )
            return 1
        print("" if streamed else result.output)
        return 0

    try:
        return _run(read())
    finally:
        executor.close()


def _cancel(args: argparse.Namespace) -> int:
    args.command_name = "cancel"
    executor = _executor(args)
    try:
        _run(executor.cancel(args.run_id))
    finally:
        executor.close()
    print(f"cancelled {args.run_id}", file=sys.stderr)
    return 0


def _approve(args: argparse.Namespace) -> int:
    from agentkit_core import Approval

    args.command_name = "approve"
    executor = _executor(args)
    answers = [Approval(c, True, args.by) for c in args.allow]
    answers += [Approval(c, False, args.by, args.reason) for c in args.deny]

    async def act() -> None:
        handle = executor.handle(args.run_id)
        if answers:
            await handle.approve(answers)
            return
        for call in await handle.pending():
            print(f"{call.id}\t{call.name}\t{call.arguments}")

    try:
        _run(act())
    finally:
        executor.close()
    return 0
