"""The DBOS executor: an agent run is a DBOS workflow, its model and tool calls DBOS steps.

DBOS keeps the workflow's state in its system database (SQLite for one machine, PostgreSQL for
many workers sharing queues). A run interrupted at any point is recovered by the next worker
started with the same ``worker_id``: DBOS runs the workflow again from the start, and every step
already recorded returns its recorded result instead of running, so no completed model call or
tool call runs twice. A worker that dies is also taken over by the workers still serving the
queue (``_liveness``): they recover its runs without a restart.

A tool call that is neither ``idempotent`` nor free of ``side_effects`` is two steps: a marker
(recording which execution of the workflow started it), then the call. An execution that finds
the marker written by an earlier execution and the call not recorded knows the call was
interrupted mid-way: it does not run it again, and records a tool error saying its outcome is
unknown, which the model reads.

dbos is imported when a run starts, a worker serves or a handle is asked for, never at plugin
load.
"""

from __future__ import annotations

import asyncio
import functools
import math
import uuid
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar
from typing import final

from agentkit_core import Agent
from agentkit_core import AgentResult
from agentkit_core import Approval
from agentkit_core import ConfigError
from agentkit_core import RunError
from agentkit_core import StorageError
from agentkit_core import ToolCall
from agentkit_core import ToolResult
from agentkit_core.plugin import Executor
from agentkit_core.plugin import StepKind
from agentkit_core.plugin import StreamEvent
from agentkit_core.plugin import mask_url
from agentkit_core.plugin import replayed_step

from ._runtime import APPROVAL_TIMEOUT
from ._runtime import APPROVALS
from ._runtime import EXECUTION
from ._runtime import PENDING
from ._runtime import RUN_CONTEXT
from ._runtime import RUNTIME
from ._runtime import WORKFLOW
from ._runtime import RunNotFound
from ._runtime import failure
from ._runtime import held_event
from ._stream import STREAM

if TYPE_CHECKING:
    from dbos import DBOSClient
    from dbos import WorkflowStatus

T = TypeVar("T")

#: The default system database: a SQLite file in the working directory.
DEFAULT_DATABASE = "sqlite:///agentkit-runs.sqlite"
DEFAULT_QUEUE = "agentkit"


def check_database(url: Any, source: str = "executor_options['database']") -> str:
    """``url`` if DBOS can keep its state there (``sqlite:///PATH`` or ``postgresql://...``).

    ``source``: where the URL came from, for the error.
    """
    if not isinstance(url, str) or not url:
        raise ConfigError(
            f"{source} takes a database URL (sqlite:///runs.sqlite or "
            f"postgresql://user@host/db), got {url!r}",
            value=url,
            source=source,
        )
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme == "sqlite" and url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
        return url
    if scheme in ("postgresql", "postgres") and len(url) > len(scheme) + 3:
        return "postgresql" + url[len(scheme) :]
    hint = (
        f"write sqlite:///{url}"
        if not scheme
        else "DBOS keeps its state in SQLite (sqlite:///PATH) or PostgreSQL "
        "(postgresql://user@host:port/db)"
    )
    raise ConfigError(
        f"{source} {mask_url(url)!r} is not a database DBOS can use; {hint}",
        value=mask_url(url),
        source=source,
    )


def _check_name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f"executor_options[{what!r}] takes a non-empty name, got {value!r}",
            value=value,
            source=f"executor_options[{what!r}]",
        )
    return value


def check_run_id(run_id: object) -> str:
    """``run_id`` if a run can have it: non-blank text the database can store.

    A lone surrogate (what undecodable bytes in a shell's argument become) cannot be encoded
    for the database: refused by name here, not a UnicodeEncodeError from its driver.
    """
    if not isinstance(run_id, str):
        problem = "is not text"
    elif not run_id.strip():
        problem = "is empty"
    else:
        try:
            run_id.encode("utf-8")
        except UnicodeEncodeError:
            problem = "holds a lone surrogate, which no database text can hold"
        else:
            return run_id
    raise ConfigError(
        f"run id {run_id!r} {problem}; give the id agentkit submit printed (or, for a new "
        "run, none: one is made)",
        value=run_id,
        source="run_id",
    )


#: takeover_after is at least this many heartbeats: a worker that misses two is not taken for dead.
BEATS = 3
MIN_HEARTBEAT = 0.05


def check_liveness(heartbeat: Any, takeover_after: Any) -> tuple[float, float]:
    """``(heartbeat, takeover_after)`` in seconds, refused with the fix when they cannot work."""
    beat = _seconds(heartbeat, "heartbeat", MIN_HEARTBEAT)
    after = _seconds(takeover_after, "takeover_after", MIN_HEARTBEAT * BEATS)
    if after < BEATS * beat:
        raise ConfigError(
            f"executor_options['takeover_after'] ({takeover_after!r} s) must be at least "
            f"{BEATS} heartbeats ({BEATS} x {heartbeat!r} s), or a worker that misses a beat "
            "or two is taken for dead while it runs; raise takeover_after or lower heartbeat",
            value=takeover_after,
            source="executor_options['takeover_after']",
        )
    return beat, after


def _seconds(value: Any, name: str, least: float) -> float:
    source = f"executor_options[{name!r}]"
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < least
    ):
        raise ConfigError(
            f"{source} takes a number of seconds of at least {least:g}, got {value!r}",
            value=value,
            source=source,
        )
    return float(value)


@final
class DBOSExecutor(Executor):
    """Runs each agent run as a DBOS workflow whose model and tool calls are DBOS steps.

    Args:
        database: the DBOS system database: ``sqlite:///PATH`` (one machine) or
            ``postgresql://user@host:port/db`` (many workers sharing queues).
        queue: the queue :meth:`submit` enqueues on and :meth:`serve` takes runs from.
        concurrency: runs one worker process runs at once (None: no limit).
        step_timeout: seconds one step may take before the run fails with a
            ``StepTimeoutError`` naming the step; None for no limit.
        worker_id: this process's identity among the workers: a restarted worker with the same
            id recovers the runs the previous one left unfinished (default ``"local"``).
        app: the DBOS application name the workflows belong to.
        approval_timeout: seconds a suspended run waits in its workflow for approvals
            (:meth:`approve`) before it ends ``"suspended"`` (default a day).
        heartbeat: seconds between a serving worker's beats in the system database.
        takeover_after: seconds without a beat after which the serving workers take a worker
            for dead and recover its runs (at least 3 heartbeats). A worker stalled that long
            is taken over while it may still run: keep it above the longest stall.
    """

    name = "dbos"
    durable = True

    def __init__(
        self,
        *,
        database: str = DEFAULT_DATABASE,
        queue: str = DEFAULT_QUEUE,
        concurrency: int | None = None,
        step_timeout: float | None = None,
        worker_id: str = "local",
        app: str = "agentkit",
        approval_timeout: float = APPROVAL_TIMEOUT,
        heartbeat: float = 2.0,
        takeover_after: float = 30.0,
    ) -> None:
        from agentkit_core.plugin import InProcessExecutor

        self.database = check_database(database)
        self.queue = _check_name(queue, "queue")
        if concurrency is not None and (
            isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1
        ):
            raise ConfigError(
                f"executor_options['concurrency'] takes a whole number of at least 1 or None, "
                f"got {concurrency!r}",
                value=concurrency,
                source="executor_options['concurrency']",
            )
        self.concurrency = concurrency
        self.step_timeout = InProcessExecutor(step_timeout=step_timeout).step_timeout
        self.worker_id = _check_name(worker_id, "worker_id")
        self.app = _check_name(app, "app")
        waited = InProcessExecutor(step_timeout=approval_timeout).step_timeout
        assert waited is not None
        self.approval_timeout = waited
        self.heartbeat, self.takeover_after = check_liveness(heartbeat, takeover_after)
        self._client: DBOSClient | None = None

    def __repr__(self) -> str:
        return f"<DBOSExecutor {mask_url(self.database)} queue={self.queue!r}>"

    # ------------------------------------------------------------------ steps

    async def step(
        self,
        name: str,
        call: Callable[[], Awaitable[T]],
        *,
        kind: StepKind,
        idempotent: bool = True,
    ) -> T:
        """Run ``call`` as the DBOS step ``name`` of the current workflow (recorded once)."""
        from dbos import DBOS

        from agentkit_core.plugin import timed_step

        if DBOS.workflow_id is None:
            raise ConfigError(
                f"step {name!r} ran outside a DBOS workflow: a run on the dbos executor starts "
                "through executor.run(agent, task), executor.submit(task) or a worker "
                "(agentkit worker), not agent.run()",
                value=name,
                source="DBOSExecutor.step",
            )
        # Both step ids are drawn now, before any await, so tool calls run side by side get
        # the same ids in every execution of the workflow.
        marker = None if idempotent else DBOS.reserve_step()
        body_at = DBOS.reserve_step()
        execution = EXECUTION.get("")
        started = execution
        if marker is not None:
            started = await marker.run_async({"name": f"start {name}"}, _mark, execution)

        ran = False

        async def body() -> T:
            nonlocal ran
            ran = True
            if started != execution:  # an earlier execution started it and never finished
                result: Any = ToolResult.error(_unknown_outcome(name))
                return result  # type: ignore[no-any-return]
            stream = STREAM.get() if kind == "model" else None
            if stream is not None:  # a streamed run: the call's events go out as they come
                return await stream.during(timed_step(name, call, self.step_timeout))
            return await timed_step(name, call, self.step_timeout)

        result = await body_at.run_async({"name": name}, body)
        ctx = RUN_CONTEXT.get()
        if not ran and ctx is not None:
            replayed_step(ctx, name, kind, result)
        return result

    # ------------------------------------------------------------------ runs

    async def run(self, agent: Agent, task: str, *, run_id: str | None = None) -> AgentResult:
        """Run ``agent`` on ``task`` as a durable workflow in this process; wait for its result."""
        from dbos import DBOS
        from dbos import SetWorkflowID

        from ._workflow import agentkit_run

        if run_id is not None:
            check_run_id(run_id)
        self.register(agent)
        self._launch(queues=())
        with SetWorkflowID(run_id or str(uuid.uuid4())):
            handle: Any = await DBOS.start_workflow_async(agentkit_run, agent.name, task)
        result: AgentResult = await handle.get_result()
        return result

    def register(self, agent: Agent) -> None:
        """Serve ``agent`` (by its name) in this process's runs; its executor must be this."""
        if agent.executor is not self:
            raise ConfigError(
                f"agent {agent.name!r} runs on the {agent.executor.name!r} executor, not on "
                f"this dbos executor (database {mask_url(self.database)}): build it with "
                "executor=this executor (Kit(executor='dbos', ...) does)",
                value=agent,
                source="DBOSExecutor.register",
            )
        known = RUNTIME.agents.get(agent.name)
        if known is not None and known is not agent:
            raise ConfigError(
                f"an agent named {agent.name!r} is already served in this process; give each "
                "agent its own name=",
                value=agent.name,
                source="DBOSExecutor.register",
            )
        RUNTIME.agents[agent.name] = agent
        RUNTIME.owner = self
        RUNTIME.approval_timeout = self.approval_timeout

    async def serve(
        self, agents: Agent | Iterable[Agent], *, stop: asyncio.Event | None = None
    ) -> None:
        """Work the queue: run the queued runs of ``agents`` until ``stop`` is set (or forever).

        Before taking new runs, DBOS recovers the runs an earlier worker with this
        ``worker_id`` left unfinished. While serving, the worker beats every ``heartbeat``
        seconds and recovers the runs of any worker of its application whose beat is older than
        ``takeover_after``; :meth:`close` removes its beat.
        """
        from dbos import DBOS

        for agent in [agents] if isinstance(agents, Agent) else list(agents):
            self.register(agent)
        self._launch(queues=[self.queue])
        await DBOS.register_queue_async(
            self.queue, worker_concurrency=self.concurrency, on_conflict="always_update"
        )
        await asyncio.to_thread(
            functools.partial(
                RUNTIME.watch,
                heartbeat=self.heartbeat,
                takeover_after=self.takeover_after,
                in_flight=self._holds_runs,
            )
        )
        await (stop or asyncio.Event()).wait()

    def _launch(self, queues: Iterable[str]) -> None:
        from . import _workflow  # noqa: F401 - registers the workflow before DBOS launches

        # a database that cannot be opened fails here, in one line, rather than in DBOS's
        # launch, which logs its traceback first
        self.client()
        RUNTIME.launch(
            self, database=self.database, app=self.app, worker_id=self.worker_id, queues=queues
        )

    def close(self) -> None:
        """Stop DBOS in this process (runs in flight stay recorded for recovery)."""
        if RUNTIME.owner is self or RUNTIME.owner is None:
            RUNTIME.close()
        if self._client is not None:
            self._client.destroy()
            self._client = None

    def _holds_runs(self) -> bool:
        """Whether runs this worker started are unfinished (asked after DBOS stopped here)."""
        held = self.client().list_workflows(
            status="PENDING",
            executor_id=self.worker_id,
            application_name=self.app,
            limit=1,
            load_input=False,
            load_output=False,
        )
        return bool(held)

    # ------------------------------------------------------------------ from any process

    def client(self) -> DBOSClient:
        """A DBOS client on the database: it enqueues and reads runs without serving any."""
        if self._client is None:
            from dbos import DBOS
            from dbos import DBOSClient

            try:
                # a submit may come before any worker made the tables: make them (idempotent)
                DBOS.migrate(self.database)
                self._client = DBOSClient(system_database_url=self.database)
            except Exception as exc:
                raise StorageError(
                    f"cannot open the DBOS database {mask_url(self.database)}: {failure(exc)}; "
                    "check the URL and that the database's server is up"
                ) from exc
        return self._client

    async def submit(
        self, task: str, *, agent: str = "agent", run_id: str | None = None, stream: bool = False
    ) -> RunHandle:
        """Enqueue a run of the agent named ``agent`` on ``task``; a worker runs it.

        Returns its :class:`RunHandle` at once. A ``run_id`` already taken by the same
        submission (agent, task, ``stream``, queue) attaches to that run instead of starting
        another, so a retried submit runs once; taken by another is a ConfigError, and nothing
        is enqueued. ``stream=True`` streams its model calls and publishes their events for
        :meth:`RunHandle.stream`.
        """
        from dbos import EnqueueOptions

        if run_id is not None:
            check_run_id(run_id)
        options: EnqueueOptions = {
            "workflow_name": WORKFLOW,
            "queue_name": self.queue,
            "workflow_id": run_id or str(uuid.uuid4()),
        }
        args = (agent, task, True) if stream else (agent, task)
        handle: Any = await self.client().enqueue_async(options, *args)
        submitted = RunHandle(handle.get_workflow_id(), self)
        if run_id is not None:  # DBOS returns the run the id names, whatever its inputs
            held = await submitted.record(load_input=True)
            taken = _submission(held, self.queue)
            if taken != (agent, task, stream, self.queue):
                raise ConfigError(
                    f"run id {run_id!r} is taken by another submission ({_describe(*taken)}, "
                    f"{held.status}), so {_describe(agent, task, stream, self.queue)} was not "
                    "submitted; give another id, or none for a new one",
                    value=run_id,
                    source="run_id",
                )
        return submitted

    def handle(self, run_id: str) -> RunHandle:
        """The handle of the run ``run_id`` (submitted by any process)."""
        return RunHandle(check_run_id(run_id), self)

    async def cancel(self, run_id: str) -> str:
        """Cancel the run ``run_id`` from any process: it stops at its next step.

        Returns its status afterwards: ``"CANCELLED"``, or the status of a run that had
        finished (``"SUCCESS"``, ``"ERROR"``), which a cancel leaves as it was. An unknown id
        is a :class:`RunNotFound`.
        """
        handle = self.handle(run_id)
        await handle.record()
        await self.client().cancel_workflow_async(run_id)
        return await handle.status()

    async def approve(self, run_id: str, approvals: Any) -> None:
        """Answer the calls the suspended run ``run_id`` waits on, from any process.

        ``approvals`` takes what ``Agent.resume`` takes: a mapping of call id to True/False,
        the approved call ids, or :class:`~agentkit_core.Approval` values. A call left out is
        put to the policy and hooks again (refused when they still ask). An answer for a call
        the run does not wait on (one it denied or allowed itself, an unknown id, a run not
        waiting) is an :class:`~agentkit_core.ApprovalRefused`, and nothing is sent.
        """
        suspension, held = await self.handle(run_id)._held()
        answers = Approval.checked(approvals, held, run_id=run_id, source="DBOSExecutor.approve")
        given = list(answers.values())
        # the answers name the suspension they answer: sent twice (a retry, two people), the
        # second is stale once the run goes on, and never answers a later call reusing an id
        message = given if suspension is None else {"suspension": suspension, "answers": given}
        await self.client().send_async(run_id, message, APPROVALS)


@final
@dataclass(frozen=True)
class RunHandle:
    """A submitted run: its id, its status, and its result awaited from any process."""

    run_id: str
    executor: DBOSExecutor

    async def status(self) -> str:
        """DBOS's status of the run: ENQUEUED, PENDING, SUCCESS, ERROR, CANCELLED..."""
        return str((await self.record()).status)

    async def record(self, *, load_input: bool = False) -> WorkflowStatus:
        """DBOS's record of the run (status, queue, worker...); unknown: :class:`RunNotFound`."""
        found = await self.executor.client().list_workflows_async(
            workflow_ids=[self.run_id], load_input=load_input, load_output=False
        )
        if not found:
            raise RunNotFound.of(self.run_id, self.executor.database)
        return found[0]

    async def result(self, timeout: float | None = None) -> AgentResult:
        """The run's result, waiting for it (at most ``timeout`` seconds: then a TimeoutError).

        A run that failed raises its error; a cancelled run is a :class:`RunError`; an unknown
        id is a :class:`RunNotFound`. The TimeoutError says what the run waits on: a worker on
        its queue, or a person's approval.
        """
        from dbos._error import DBOSAwaitedWorkflowCancelledError

        await self.record()
        handle: Any = await self.executor.client().retrieve_workflow_async(self.run_id)
        cancelled = f"run {self.run_id!r} was cancelled"
        try:
            result: AgentResult = await asyncio.wait_for(handle.get_result(), timeout)
        except DBOSAwaitedWorkflowCancelledError as exc:
            raise RunError(cancelled) from exc
        except TimeoutError:
            # a short wait can end before DBOS's first poll saw the run end
            status = await self.status()
            if status == "CANCELLED":
                raise RunError(cancelled) from None
            if status in ("SUCCESS", "ERROR"):  # ended: its output, or its error raised
                ended: AgentResult = await handle.get_result()
                return ended
            raise TimeoutError(
                f"run {self.run_id!r} did not finish within {timeout} s: {await self.waits_on()}"
            ) from None
        return result

    async def waits_on(self) -> str:
        """What the unfinished run waits on, and what to do about it, for a message."""
        held = await self.record()
        queue = held.queue_name
        _, calls = held_event(await self.executor.client().get_event_async(self.run_id, PENDING, 0))
        if calls:
            listed = ", ".join(f"{c.id} ({c.name})" for c in calls)
            worker = f"its worker on queue {queue!r}" if queue else "its worker"
            return (
                f"it waits on a person's approval of {listed} (agentkit approve {self.run_id} "
                f"answers); then {worker} runs it on"
            )
        if held.status == "ENQUEUED":
            return (
                f"it is ENQUEUED on queue {queue!r}, which no worker has taken it from; wait "
                f"longer, or start a worker on queue {queue!r}"
            )
        if held.status == "PENDING":
            return (
                f"it is running (PENDING) on worker {held.executor_id!r} of queue {queue!r}; "
                "wait longer"
            )
        return f"it is {held.status}"

    def stream(self, timeout: float | None = None) -> AsyncIterator[StreamEvent]:
        """The run's events as the worker makes them, from any process, then its result.

        A run submitted with ``stream=True`` publishes each model call's ``"text"``,
        ``"tool_call"`` and ``"done"`` events; the last event is ``"result"`` (its
        :class:`AgentResult`), and a run that failed or was cancelled raises instead, as
        :meth:`result` does (``timeout`` bounds that wait). Reading starts at the first event,
        whenever it is called. A recovered run streams on: a replayed call publishes nothing
        again, and a call cut off by the crash publishes its events again from its start.
        """
        from ._stream import read

        executor = self.executor
        return read(executor.client, self.run_id, executor.database, lambda: self.result(timeout))

    async def cancel(self) -> str:
        """Cancel the run: it stops at its next step (see :meth:`DBOSExecutor.cancel`)."""
        return await self.executor.cancel(self.run_id)

    async def pending(self, wait: float = 0.0) -> list[ToolCall]:
        """The calls the run waits on a person's approval for (none: it is not waiting).

        ``wait`` seconds: how long to wait for the run to reach an approval. An unknown id is a
        :class:`RunNotFound`.
        """
        return (await self._held(wait))[1]

    async def _held(self, wait: float = 0.0) -> tuple[int | None, list[ToolCall]]:
        """Which suspension of the run the calls it waits on are of, and those calls."""
        event = await self.executor.client().get_event_async(self.run_id, PENDING, wait)
        suspension, calls = held_event(event)
        if not calls:
            await self.record()  # the event of a run that is not there is None too
        return suspension, calls

    async def approve(self, approvals: Any) -> None:
        """Answer the calls the run waits on (see :meth:`DBOSExecutor.approve`)."""
        await self.executor.approve(self.run_id, approvals)


def _submission(held: WorkflowStatus, queue: str) -> tuple[str, str, bool, str]:
    """The agent, task, ``stream`` and queue a run was submitted with, from its record.

    ``queue``: the queue of a run whose record has none (a cancel takes it off its queue).
    """
    args = list(held.input["args"]) if held.input else []
    agent, task, stream = (args + ["?", "?", False][len(args) :])[:3]
    return str(agent), str(task), bool(stream), held.queue_name or queue


def _describe(agent: str, task: str, stream: bool, queue: str) -> str:
    shown = task if len(task) <= 60 else task[:57] + "..."
    return f"{'streamed ' if stream else ''}task {shown!r} for agent {agent!r} on queue {queue!r}"


async def _mark(execution: str) -> str:
    """The marker step: which execution started the step after it."""
    return execution


def _unknown_outcome(name: str) -> str:
    tool = name.split(":")[1] if name.count(":") >= 2 else name
    return (
        f"the call {name!r} was interrupted mid-way (its worker stopped) and tool {tool!r} is "
        "not idempotent, so it was not run again: whether it acted is unknown. Check its "
        "effect before calling it again."
    )
