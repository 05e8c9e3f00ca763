"""A worker for the tests: a deterministic model and two tools that log what they did.

``python runs_app.py DATABASE LOGDIR [WORKER_ID [CONCURRENCY]]`` serves the agent ``"runs"`` on
the queue ``"runs"`` (``RUNS_QUEUE`` names another) until killed (with ``RUNS_DIRECT=RUN_ID``,
also runs that run itself, as ``executor.run`` does). The model answers as a function of the
request (how many answers it already gave), so a run recovered after a crash asks the same
things; a model call and each tool write what they are doing to ``LOGDIR/<run id>.progress``
(the test kills the worker when a given line appears) and the side effect of ``charge`` to
``LOGDIR/<run id>.effects`` (what the test counts); each model and tool call span ends as a
line ``<name> ran`` or ``<name> replayed`` of ``LOGDIR/<run id>.spans``. With
``RUNS_SESSION=PATH`` the agent records the session ``"runs"`` in that SQLite file, and each
append to it writes ``session append N`` (the run's Nth append, in any process) to the progress
file, then waits a moment: a kill there lands between the append and DBOS recording the step
that made it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from agentkit_core import Agent
from agentkit_core import Checkpointer
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Recorder
from agentkit_core import RunContext
from agentkit_core import Sessions
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import Usage
from agentkit_core import tool
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import SessionInfo
from agentkit_core.plugin import SessionItem
from agentkit_core.plugin import SessionStore
from agentkit_core.plugin import Span
from agentkit_core.plugin import SpanExporter
from agentkit_core.plugin import StoreBridge
from agentkit_core.plugin import StreamEvent

#: The model's answers, one per turn: (tool, arguments) or the final text.
SCRIPT: list[tuple[str, dict[str, object]] | str] = [
    ("lookup", {"key": "a"}),
    ("charge", {"amount": 1}),
    ("lookup", {"key": "b"}),
    ("charge", {"amount": 2}),
    "charged 1 and 2",
]
LOGS = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(".")
DELAY = float(os.environ.get("RUNS_DELAY", "0.15"))
WORKER = os.environ.get("RUNS_WORKER", str(os.getpid()))


def note(run_id: str, line: str, kind: str = "progress") -> None:
    with open(LOGS / f"{run_id}.{kind}", "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


class TurnModel:
    """Answers ``SCRIPT[n]`` where n is how many answers the request already holds."""

    name = "turns"

    async def request(self, request: ModelRequest) -> ModelResponse:
        turn = sum(1 for m in request.messages if m.role == "assistant")
        run_id = request.ctx.run_id if request.ctx is not None else "?"
        note(run_id, f"model {turn + 1} start")
        await asyncio.sleep(DELAY)
        step = SCRIPT[turn]
        if isinstance(step, str):
            message = Message.assistant(step)
        else:
            name, args = step
            # RUNS_SAME_IDS: every call has one id, as some providers' models give
            call_id = "call" if os.environ.get("RUNS_SAME_IDS") else f"call_{turn + 1}"
            message = Message.assistant("", [ToolCall(call_id, name, json.dumps(args))])
        note(run_id, f"model {turn + 1} done")
        return ModelResponse(message, Usage(10, 5, 1), "stop", self.name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The answer's words as text deltas, or its calls, then the answer."""
        response = await self.request(request)
        for call in response.message.tool_calls:
            yield StreamEvent("tool_call", tool_call=call)
        for word in response.message.text.split():
            await asyncio.sleep(DELAY / 5)
            yield StreamEvent("text", text=word + " ")
        yield StreamEvent("done", response=response)


@tool(idempotent=True)
async def lookup(key: str, ctx: RunContext) -> str:
    """Look a key up (no effect: safe to run again)."""
    note(ctx.run_id, f"lookup {key} start")
    await asyncio.sleep(DELAY)
    note(ctx.run_id, f"lookup {key} done")
    return f"value of {key}"


@tool
async def charge(amount: int, ctx: RunContext) -> str:
    """Charge an amount (an effect: must happen once)."""
    note(ctx.run_id, f"charge {amount} start")
    await asyncio.sleep(DELAY)
    note(ctx.run_id, f"charge {amount} by {WORKER}", "effects")
    note(ctx.run_id, f"charge {amount} effect")
    await asyncio.sleep(DELAY)
    note(ctx.run_id, f"charge {amount} done")
    return f"charged {amount}"


def ask_about_charges(ctx: RunContext, call: ToolCall) -> ToolDecision:
    """With RUNS_ASK set, every charge waits for a person's approval."""
    if call.name == "charge":
        return ToolDecision("ask", "a charge needs a person", "runs")
    return ToolDecision("allow")


class FileStore:
    """A key-value store of one file per key: the runs' checkpoints."""

    def __init__(self, root: Path) -> None:
        self.root = root

    async def get(self, key: str) -> str | None:
        path = self.root / quote(key, safe="")
        return path.read_text(encoding="utf-8") if path.exists() else None

    async def put(self, key: str, value: str) -> None:
        path = self.root / quote(key, safe="")
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(value, encoding="utf-8")
        os.replace(tmp, path)


def checkpointer(logs: Path) -> Checkpointer:
    root = logs / "checkpoints"
    root.mkdir(exist_ok=True)
    return Checkpointer(StoreBridge(FileStore(root)))


class SpanLines(SpanExporter):
    """Writes each model and tool call span's end to ``LOGDIR/<run id>.spans``."""

    def on_end(self, span: Span) -> None:
        if span.name in ("model_call", "tool_call") and span.run_id:
            how = "replayed" if span.attributes.get("replayed") else "ran"
            note(span.run_id, f"{span.name} {how}", "spans")


class NotingStore:
    """A session store that notes each append of a run in its progress file, then waits."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self.url = store.url

    async def append(self, items: Sequence[SessionItem]) -> bool:
        written = await self.store.append(items)
        body = items[-1].body
        run_id = body.get("run") if isinstance(body, dict) else None
        if written and isinstance(run_id, str):
            progress = LOGS / f"{run_id}.progress"
            lines = progress.read_text(encoding="utf-8").splitlines() if progress.exists() else []
            note(run_id, f"session append {sum(line.startswith('session') for line in lines) + 1}")
            await asyncio.sleep(DELAY)
        return written

    async def create(self, items: Sequence[SessionItem]) -> bool:
        return await self.store.create(items)

    async def item(self, item_id: str) -> SessionItem | None:
        return await self.store.item(item_id)

    async def leaf(self, session_id: str) -> SessionItem | None:
        return await self.store.leaf(session_id)

    async def path(self, item_id: str) -> list[SessionItem]:
        return await self.store.path(item_id)

    async def info(self, session_id: str) -> SessionInfo | None:
        return await self.store.info(session_id)

    async def sessions(self) -> list[SessionInfo]:
        return await self.store.sessions()

    async def aclose(self) -> None:
        await self.store.aclose()


async def recorder(path: str | None) -> Recorder | None:
    """The recorder of the session ``"runs"`` in the SQLite file ``path`` (None: no session)."""
    if not path:
        return None
    from agentkit_session_sqlite import open_store

    sessions = Sessions(NotingStore(await open_store(f"sqlite:///{path}")))
    return await Recorder.open(sessions, "runs", {"model": "turns"})


def agent(executor: object, recorder: Recorder | None = None) -> Agent:
    # no installed plugins: their hooks (an untrusted-output frame with a fresh id) would make
    # an interrupted run's transcript differ from an uninterrupted one's for reasons not ours
    return Agent(
        "runs",
        TurnModel(),
        tools=[lookup, charge],
        executor=executor,  # type: ignore[arg-type]
        manager=PluginManager(entry_points=False),
        checkpointer=checkpointer(LOGS),
        recorder=recorder,
        exporters=[SpanLines()],
        hooks=Hooks.of("runs", before_tool_call=ask_about_charges)
        if os.environ.get("RUNS_ASK")
        else None,
    )


def main() -> None:
    from agentkit_executor_dbos import DBOSExecutor

    worker_id = sys.argv[3] if len(sys.argv) > 3 else "local"
    concurrency = int(sys.argv[4]) if len(sys.argv) > 4 else None
    liveness = {  # RUNS_HEARTBEAT / RUNS_TAKEOVER_AFTER: seconds, for the takeover tests
        option: float(os.environ[name])
        for option, name in (
            ("heartbeat", "RUNS_HEARTBEAT"),
            ("takeover_after", "RUNS_TAKEOVER_AFTER"),
        )
        if name in os.environ
    }
    executor = DBOSExecutor(
        database=sys.argv[1],
        queue=os.environ.get("RUNS_QUEUE", "runs"),
        worker_id=worker_id,
        concurrency=concurrency,
        **liveness,  # type: ignore[arg-type]
    )
    print("serving", flush=True)
    direct = os.environ.get("RUNS_DIRECT")  # also run this run id in-process (executor.run)

    async def work() -> None:
        served = agent(executor, await recorder(os.environ.get("RUNS_SESSION")))
        serving = asyncio.ensure_future(executor.serve(served))
        await asyncio.sleep(0)  # serve launches DBOS, listening to the queue
        if direct:
            await executor.run(served, "charge twice", run_id=direct)
        await serving

    asyncio.run(work())


if __name__ == "__main__":
    time.sleep(0)
    main()
