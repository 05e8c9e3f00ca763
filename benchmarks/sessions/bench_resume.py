"""Resuming a 10,000-item conversation with forks: session stores vs LangGraph's savers.

The conversation: 10,000 messages (user and assistant turns of ~250 bytes of text), then up to
50 forks, each at an earlier point of it with one message of its own. Resuming it is reading
what an agent continuing the main conversation needs: every message from the root to its leaf,
decoded.

- **agentkit**: a session of 10,000 items (appended 200 at a time) in session-sqlite /
  session-postgres, forks made with ``Sessions.fork`` at items spread along it. Resume is
  ``Sessions.path(session)`` and every item's ``body``.
- **LangGraph**: a ``StateGraph(MessagesState)`` thread on ``SqliteSaver`` / ``PostgresSaver``
  (langgraph-checkpoint-sqlite / -postgres), its messages added 200 per checkpoint with
  ``update_state`` (50 checkpoints: far fewer than one per message, which would be quadratic in
  storage for LangGraph; the choice favours it), forks made by LangGraph's own time travel
  (``update_state`` on an earlier ``checkpoint_id`` of the thread). Resume is
  ``get_state`` at the main leaf plus ``get_state_history`` of the thread, the history being
  how a LangGraph front finds the checkpoints, forks among them, to show or continue.

Both sides write the same text at the same durability (SQLite WAL at FULL, PostgreSQL at
``synchronous_commit=on``). Only the resume is timed: the median of ``repeats`` reads, measured
with 0, 10, 25 and 50 forks, to show which cost grows with the forks.

    python benchmarks/sessions/bench_resume.py [repeats] [--no-peer]

``--no-peer`` measures agentkit alone, with 0, 50, 500 and 2,000 forks.

Needs the venv of setup.sh and the PostgreSQL server binaries (.ci/setup.d/20-postgres.sh).
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".ci"))

from pgcluster import PgCluster  # noqa: E402

from agentkit_core import PluginManager  # noqa: E402
from agentkit_core import open_sessions  # noqa: E402
from agentkit_core.plugin import NewItem  # noqa: E402

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

MESSAGES = 10_000
PER_STEP = 200


def text(i: int) -> str:
    return f"message {i}: " + "lorem ipsum dolor " * 13


def role(i: int) -> str:
    return "user" if i % 2 == 0 else "assistant"


def median_seconds(read: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        read()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# ---------------------------------------------------------------------------- agentkit


async def agentkit_rows(url: str, repeats: int, steps: tuple[int, ...]) -> list[float]:
    """Resume seconds with each number of forks in ``steps``."""
    async with await open_sessions(url, manager=PM) as sessions:
        head = await sessions.create({"model": "bench"})
        sid, leaf, items = head.session_id, head.id, []
        for start in range(0, MESSAGES, PER_STEP):
            batch = [
                NewItem("user" if role(i) == "user" else "response", {"text": text(i)})
                for i in range(start, start + PER_STEP)
            ]
            written = await sessions.append(sid, leaf, batch)
            items += written
            leaf = written[-1].id
        rows, forks = [], 0
        for target in steps:
            while forks < target:
                at = items[(forks * 197) % MESSAGES].id
                fork = await sessions.fork(sid, at=at)
                await sessions.append(fork.session_id, fork.id, NewItem("user", {"text": "fork"}))
                forks += 1

            async def resume() -> None:
                path = await sessions.path(sid)
                assert len(path) == MESSAGES + 1
                for item in path:
                    item.body  # noqa: B018 - decoded, as a resume uses it

            times = []
            for _ in range(repeats):
                begin = time.perf_counter()
                await resume()
                times.append(time.perf_counter() - begin)
            rows.append(statistics.median(times))
        return rows


# ---------------------------------------------------------------------------- langgraph


def langgraph_rows(saver: Any, repeats: int) -> list[float]:
    from langchain_core.messages import AIMessage
    from langchain_core.messages import HumanMessage
    from langgraph.graph import END
    from langgraph.graph import START
    from langgraph.graph import MessagesState
    from langgraph.graph import StateGraph

    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda state: {})
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    graph = builder.compile(checkpointer=saver)
    thread: dict[str, Any] = {"configurable": {"thread_id": "bench"}}
    steps = []
    for start in range(0, MESSAGES, PER_STEP):
        batch = [
            (HumanMessage if role(i) == "user" else AIMessage)(content=text(i), id=f"m{i}")
            for i in range(start, start + PER_STEP)
        ]
        steps.append(graph.update_state(thread, {"messages": batch}, as_node="agent"))
    leaf = steps[-1]
    rows, forks = [], 0
    for target in (0, 10, 25, 50):
        while forks < target:
            at = steps[(forks * 197) % MESSAGES // PER_STEP]
            graph.update_state(at, {"messages": [HumanMessage("fork", id=f"f{forks}")]})
            forks += 1

        def resume(checkpoints: int = len(steps) + forks) -> None:
            state = graph.get_state(leaf)
            assert len(state.values["messages"]) == MESSAGES
            history = list(graph.get_state_history(thread))
            assert len(history) >= checkpoints

        rows.append(median_seconds(resume, repeats))
    return rows


def langgraph_sqlite(path: Path, repeats: int) -> list[float]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    try:
        return langgraph_rows(SqliteSaver(conn), repeats)
    finally:
        conn.close()


def langgraph_postgres(dsn: str, repeats: int) -> list[float]:
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(dsn) as saver:
        saver.setup()
        return langgraph_rows(saver, repeats)


def report(title: str, steps: tuple[int, ...], ours: list[float], peer: list[float] | None) -> None:
    print(f"\n{title}: resume of {MESSAGES:,} messages, seconds (median)", flush=True)
    print(f"  {'forks':>5}  {'agentkit':>9}  {'langgraph':>9}  ratio")
    for n, forks in enumerate(steps):
        if peer is None:
            print(f"  {forks:>5}  {ours[n]:9.4f}")
        else:
            print(f"  {forks:>5}  {ours[n]:9.4f}  {peer[n]:9.4f}  {ours[n] / peer[n]:5.3f}x")
    growth = f"agentkit {ours[-1] / ours[0]:.2f}x"
    if peer is not None:
        growth += f", langgraph {peer[-1] / peer[0]:.2f}x"
    print(f"  growth from {steps[0]} to {steps[-1]} forks: {growth}", flush=True)


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    peers = "--no-peer" not in sys.argv
    steps = (0, 10, 25, 50) if peers else (0, 50, 500, 2000)
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        ours = asyncio.run(agentkit_rows(f"sqlite:///{tmp / 'agentkit.db'}", repeats, steps))
        peer = langgraph_sqlite(tmp / "langgraph.db", repeats) if peers else None
        report("SQLite", steps, ours, peer)
    with PgCluster() as dsn:
        ours = asyncio.run(agentkit_rows(dsn, repeats, steps))
        peer = langgraph_postgres(dsn, repeats) if peers else None
        report("PostgreSQL", steps, ours, peer)


if __name__ == "__main__":
    main()
