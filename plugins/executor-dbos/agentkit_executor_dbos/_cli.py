"""The commands: ``agentkit worker``, ``submit``, ``result``, ``cancel`` and ``approve``.

A worker builds its agent as ``agentkit run`` does (``--model``, ``--tools MODULE:ATTR``, the
kit settings of the project's ``agentkit.toml``) and works the queue; ``submit`` enqueues a run
and prints its id; ``result`` prints a run's output (exit 0), or its error (exit 1), or that it
has not finished (exit 3). The executor's options come from ``executor_options`` of the file's
``[kit]`` table, with the command line's on top; the database comes from ``--database``, else
``AGENTKIT_DATABASE``, else that table, and there is no default (see ``_database``).
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar

from agentkit_core import ConfigError
from agentkit_core.cli import add_agent_arguments

if TYPE_CHECKING:
    from agentkit_core import AgentResult

#: The agent a worker serves and a submit names when neither says: the CLI kit's own name.
DEFAULT_AGENT = "cli"
#: ``agentkit result`` when the run has not finished within ``--wait``.
NOT_FINISHED = 3
#: The table DBOS keeps its runs in: a database without it never held one.
RUNS_TABLE = "workflow_status"
#: The environment variable naming the database when --database does not.
DATABASE_ENV = "AGENTKIT_DATABASE"

T = TypeVar("T")


def add_commands(cli: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the commands to ``cli``."""
    _add_worker(cli)
    _add_submit(cli)
    _add_result(cli)
    _add_cancel(cli)
    _add_approve(cli)


def _add_worker(cli: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``agentkit worker``: work the queue with the agent ``agentkit run`` would build."""
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


def _add_submit(cli: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``agentkit submit``: enqueue a run."""
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


def _add_result(cli: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``agentkit result``: print a run's output or error."""
    result = cli.add_parser(
        "result",
        help="print a durable run's output (executor dbos)",
        description="Print the run's output (exit 0), or its error (exit 1); exit 3 when it "
        "has not finished within --wait seconds.",
    )
    _executor_arguments(result, queue=False)
    result.add_argument("run_id", metavar="RUN_ID")
    result.add_argument(
        "--wait",
        type=_seconds,
        default=0.0,
        metavar="SECONDS",
        help="wait this long (default 0; inf: until the run ends)",
    )
    result.add_argument(
        "--stream",
        action="store_true",
        help="print the text of a run submitted with --stream as it comes (until the run "
        "ends, or --wait seconds when given)",
    )
    result.set_defaults(func=_result)


def _add_cancel(cli: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``agentkit cancel``: cancel a run."""
    cancel = cli.add_parser(
        "cancel",
        help="cancel a durable run (executor dbos)",
        description="Cancel the run: it stops at its next step, whichever worker runs it.",
    )
    _executor_arguments(cancel, queue=False)
    cancel.add_argument("run_id", metavar="RUN_ID")
    cancel.set_defaults(func=_cancel)


def _add_approve(cli: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``agentkit approve``: list or answer the calls a run waits on."""
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


def _seconds(value: str) -> float:
    """A number of seconds of at least 0 (``inf``: no end); NaN or a negative is refused.

    Not read as 0: ``--wait -1`` means "forever" in some tools, and would return at once.
    """
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not seconds >= 0:
        raise argparse.ArgumentTypeError(
            f"must be a number of seconds of at least 0 (inf: until the run ends), got {value!r}"
        )
    return seconds


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
        help=f"the DBOS database: sqlite:///runs.sqlite or postgresql://user@host/db (default: "
        f"${DATABASE_ENV}, else executor_options.database of agentkit.toml; one is required)",
    )
    if queue:
        parser.add_argument("--queue", metavar="NAME", help="the queue (default 'agentkit')")


def _executor_options(
    args: argparse.Namespace, file_options: dict[str, Any], where: str
) -> tuple[dict[str, Any], str]:
    """``executor_options`` and where their database came from.

    The options are the file's (read from ``where``), then the command line's.
    """
    if args.executor != "dbos":
        raise ConfigError(
            f"--executor {args.executor!r}: agentkit {args.command_name} serves the dbos "
            "executor's queues; pass --executor dbos (an in-process run is agentkit run)",
            value=args.executor,
            source="--executor",
        )
    options = dict(file_options.get("executor_options") or {})
    options["database"], source = _database(args, options.get("database"), where)
    given = {
        "queue": getattr(args, "queue", None),
        "concurrency": getattr(args, "concurrency", None),
        "worker_id": getattr(args, "worker_id", None),
        "heartbeat": getattr(args, "heartbeat", None),
        "takeover_after": getattr(args, "takeover_after", None),
    }
    options.update({k: v for k, v in given.items() if v is not None})
    return options, source


def _database(args: argparse.Namespace, in_file: Any, where: str) -> tuple[str, str]:
    """The database URL the command works on, and where it came from.

    ``--database``, else ``AGENTKIT_DATABASE``, else the file's ``executor_options.database``.
    There is no default: submit and the workers must name the same database, and a file the
    command picked by itself in the working directory is one no worker reads.
    """
    from ._executor import check_database

    if args.database is not None:
        url, source = args.database, "--database"
    elif DATABASE_ENV in os.environ:
        url, source = os.environ[DATABASE_ENV].strip(), DATABASE_ENV
    elif in_file is not None:
        url, source = in_file, f"executor_options.database of {where}"
    else:
        raise ConfigError(
            f"agentkit {args.command_name} needs the DBOS database the runs are kept in (the "
            f"one submit and the workers share): pass --database URL or set {DATABASE_ENV} "
            "(sqlite:///runs.sqlite on one machine, postgresql://user@host/db for many), or set "
            "executor_options.database in agentkit.toml",
            value=None,
            source="--database",
        )
    return check_database(url, source), source


def _executor(args: argparse.Namespace, *, reading: bool = False) -> Any:
    """The executor the options name.

    ``reading``: for a command that reads or acts on runs already submitted, refused when its
    database holds none (see ``_check_holds_runs``).
    """
    from agentkit_core.cli import file_kit_options
    from agentkit_core.plugin import get_executor

    file_options, where = file_kit_options()
    options, source = _executor_options(args, file_options, where)
    executor: Any = get_executor("dbos", manager=args.plugin_manager, **options)
    # DBOS's client warns on stderr of what these commands report themselves, in their own
    # words (a server it cannot reach, a run id already taken on another queue)
    logging.getLogger("dbos").setLevel(logging.ERROR)
    if reading:
        try:
            _check_holds_runs(executor.database, source)
        except BaseException:
            executor.close()
            raise
    return executor


def _check_holds_runs(database: str, source: str) -> None:
    """Refuse a database that does not exist or has no DBOS tables: it holds no run.

    Opening DBOS's client on it would create the database and its tables (as ``submit`` and a
    worker must), so reading a run from a mistyped URL would leave an empty database behind
    and say only that the run is unknown.
    """
    import sqlalchemy as sa

    from agentkit_core.plugin import mask_url

    url = sa.make_url(database)
    if url.get_backend_name() == "sqlite":
        problem = _sqlite_problem(Path(url.database or ""))
    else:
        problem = _postgres_problem(database)
    if problem is None:
        return
    shown = mask_url(database)
    raise ConfigError(
        f"{source} {shown!r}: {problem}, so nothing was submitted there and there is no run "
        "to read (reading never creates a database); give the URL the run was submitted to "
        "(agentkit submit and agentkit worker create the database)",
        value=shown,
        source=source,
    )


def _sqlite_problem(path: Path) -> str | None:
    """What keeps the SQLite file ``path`` from holding runs; None when it may hold some."""
    import contextlib
    import sqlite3

    if not path.is_file():
        return f"the file {str(path)!r} does not exist"
    try:
        # read-only: connecting in the default mode would create what is missing
        with contextlib.closing(
            sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        ) as conn:
            found = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (RUNS_TABLE,)
            ).fetchone()
    except sqlite3.Error as exc:
        return f"the file {str(path)!r} cannot be read as SQLite ({exc})"
    return None if found else f"it holds no DBOS runs (no {RUNS_TABLE} table)"


def _postgres_problem(database: str) -> str | None:
    """What keeps the PostgreSQL database from holding runs; None when it may hold some.

    Connecting to a database that does not exist fails without a SQLSTATE, so whether it
    exists is asked of the server's ``postgres`` database, as DBOS does before creating one.
    """
    import sqlalchemy as sa

    from agentkit_core import StorageError
    from agentkit_core.plugin import mask_url

    try:
        held = _scalar(database, f"SELECT to_regclass('dbos.{RUNS_TABLE}')")
    except sa.exc.OperationalError as exc:
        failed = exc
    else:
        return None if held is not None else f"it holds no DBOS runs (no dbos.{RUNS_TABLE} table)"
    url = sa.make_url(database)
    if url.database:
        maintenance = url.set(database="postgres").render_as_string(hide_password=False)
        try:
            there = _scalar(
                maintenance, "SELECT 1 FROM pg_database WHERE datname = :name", name=url.database
            )
        except sa.exc.OperationalError:
            there = True  # no way to tell: report the first failure
        if there is None:
            return f"the database {url.database!r} does not exist"
    reason = " ".join(str(failed.orig).split())
    raise StorageError(
        f"cannot connect to the DBOS database {mask_url(database)}: {reason}; check the URL "
        "and that the server is up"
    ) from failed


def _scalar(database: str, query: str, **params: Any) -> Any:
    """The first value ``query`` gives on ``database`` (a connection of its own)."""
    import sqlalchemy as sa

    from ._liveness import engine_for

    engine = engine_for(database)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text(query), params).scalar()
    finally:
        engine.dispose()


def _worker(args: argparse.Namespace) -> int:
    from agentkit_core import Agent
    from agentkit_core import Kit
    from agentkit_core.cli import file_kit_options
    from agentkit_core.cli import kit_options_from_args
    from agentkit_core.plugin import mask_url

    from ._executor import DBOSExecutor

    args.command_name = "worker"
    options = kit_options_from_args(args)
    options["executor"] = "dbos"
    options["executor_options"], _ = _executor_options(args, options, file_kit_options()[1])

    async def serve() -> None:
        import asyncio
        import signal

        async with await Kit.open(**options) as kit:
            agent = Agent.from_config(kit.config())
            executor = agent.executor
            assert isinstance(executor, DBOSExecutor)
            print(
                f"agentkit worker {executor.worker_id!r}: agent {agent.name!r} on queue "
                f"{executor.queue!r} of {mask_url(executor.database)}",
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
    executor = _executor(args, reading=True)

    async def read() -> int:
        import asyncio

        handle = executor.handle(args.run_id)
        # an unknown run or a database that cannot be read is an error of the command (exit
        # 2), not the run's failure (exit 1)
        await handle.record()
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
                        f"run {args.run_id!r} did not finish within {args.wait} s: "
                        f"{await handle.waits_on()}"
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
    executor = _executor(args, reading=True)

    async def cancel() -> tuple[str, str]:
        handle = executor.handle(args.run_id)
        return await handle.status(), await handle.cancel()

    try:
        before, after = _run(cancel())
    finally:
        executor.close()
    if after != "CANCELLED":  # a finished run stays as it finished
        print(
            f"agentkit: run {args.run_id!r} had already finished ({after}); nothing was cancelled",
            file=sys.stderr,
        )
        return 1
    done = "was already cancelled" if before == "CANCELLED" else "cancelled"
    print(f"agentkit: run {args.run_id!r} {done}", file=sys.stderr)
    return 0


def _approve(args: argparse.Namespace) -> int:
    from agentkit_core import Approval

    args.command_name = "approve"
    executor = _executor(args, reading=True)
    answers = [Approval(c, True, args.by) for c in args.allow]
    answers += [Approval(c, False, args.by, args.reason) for c in args.deny]

    async def act() -> None:
        handle = executor.handle(args.run_id)
        if answers:
            await handle.approve(answers)
            given = [f"{'allowed' if a.approved else 'denied'} {a.call}" for a in answers]
            print(
                f"agentkit: run {args.run_id!r}: {', '.join(given)}; its worker runs it on",
                file=sys.stderr,
            )
            return
        calls = await handle.pending()
        for call in calls:
            print(f"{call.id}\t{call.name}\t{call.arguments}")
        if not calls:  # stdout stays empty for a script; a person reads why
            status = await handle.status()
            print(
                f"agentkit: run {args.run_id!r} waits on no call (it is {status})", file=sys.stderr
            )

    try:
        _run(act())
    finally:
        executor.close()
    return 0
