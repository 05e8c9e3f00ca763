"""Per-turn overhead of recording a session on the agent loop.

The agent_loop scenario (``benchmarks/agent_loop/common.py``: three tools, a scripted model that
calls one tool per turn for 40 turns, then answers), run by one agent in alternation: without a
session (its recorder is the NullRecorder) and recording into a session, a new one per run, on
``memory://`` (the target's store) and, for scale, on SQLite at ``synchronous=normal`` (no fsync
per turn), with every installed plugin's hooks (an Agent's default) and with core only
(``hooks=Hooks()``). A turn's overhead is the time from the model returning to it being called
again, minus the time inside the tool, so it holds every recording call and the turn's append;
the median turn of each run is taken, and the ratio to the run without a session beside it.

The NullRecorder's own cost: the calls a turn makes on it (task, instructions, answer, result,
flush), timed alone and set against a turn without a session.

    python benchmarks/sessions/bench_recording.py [--runs 30] [--turns 40] [--write]

``--write`` writes ``RESULTS-recording.md`` beside this file.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "agent_loop"))

from bench_agentkit import Stamped  # noqa: E402
from common import ANSWER  # noqa: E402
from common import REC  # noqa: E402
from common import tools  # noqa: E402

from agentkit_core import Agent  # noqa: E402
from agentkit_core import Hooks  # noqa: E402
from agentkit_core import Message  # noqa: E402
from agentkit_core import PluginManager  # noqa: E402
from agentkit_core import Recorder  # noqa: E402
from agentkit_core import Sessions  # noqa: E402
from agentkit_core import ToolCall  # noqa: E402
from agentkit_core.plugin import NullRecorder  # noqa: E402
from agentkit_core.plugin import open_session_store  # noqa: E402

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

#: Issue 36's goal: microseconds a recorded turn may add on memory:// (against the layer's floor).
TARGET = 15.0

#: Where a recorded turn's time goes, measured once by taking each piece out in turn (append
#: replaced by a no-op; encoding replaced by a constant), and why the target is out of reach.
NOTE = """\
Where the time goes (issue 36, December 2026: cProfile, opcode counts per function and
valgrind's instruction counts over many 40-turn runs, and each piece taken out in turn). A
recorded turn writes two items in two appends: the answer before the tool runs (the in-flight
mark: a resume after a crash or a cancellation reads it so as not to run a tool that is not
idempotent twice), then the result. (Until the twelfth pass a `tool_call` item per call went
with the answer, repeating what its message holds: session schema 1.) With the appends taken out a
recorded turn adds about half of what it does; with the record calls taken out too, about a
seventh (the loop's bookkeeping: the mark's scan, `_persist` twice). No piece dominates: some
100 Python calls a turn at the twelfth pass, of which the NaN walk before encoding (about a
fifth of the opcodes), the bodies' encoding, an id, a `SessionItem` and the conversation's
state (for `working_context()` and resume) per item, and the stamp, the blob collection and
the compare-and-set per append.

Cut in the fifth pass: a runtime-protocol check of the store on every append, the blob
collection's generator context manager, `datetime.isoformat` (the second's text is made once a
second), `NewItem` slotted, a message's tagged dict from one generated dict display, a
response's usage in one `Usage`. Cut in the sixth: the orjson `default` tags a message record
in one call; a `SessionItem` (a frozen record without slots) writes its `__dict__` instead of
six `object.__setattr__` (0.45 µs, was 1.5; about 60 bytes more an item kept); `NewItem` and
`SessionItem` made positionally; item ids from `os.urandom` 64 at a time (a fifth of the
cost; fork-safe); the NaN walk checks floats and passes over empty containers without a call;
and `memory://` appends at once (`append_now`), so a flush into it takes no lock and makes no
await. Tried and dropped: picking the values the NaN walk looks at with `itertools.compress`
(fewer opcodes, more instructions). Cut in the ninth: `Sessions` calls orjson's encoding
itself (encode_state only when orjson refuses, for json's turn or the error's path), sets the
blob collection's context variable itself (no object and two calls an append), stamps the
microseconds without a format spec, slices the ids in C, and `SessionState.feed` tries a
turn's kinds first, reads a response's counts without five calls and settles a turn's one
call without a generator; `memory://`'s append makes two calls fewer. Tried and dropped: one
NaN walk and one encoding call a batch (a turn's batches hold one or two items: more
instructions, not fewer), and passing over a container whose values hold no float with
`set.issuperset(map(type, ...))` (it builds a set each time: the walk 50k instructions a turn
against the loop's 38.6k). Kept, and why: the encoding on `memory://` (it is the
check that refuses an unencodable body or a NaN at the append, so a failed append says so, and
it gives every reader what a durable store returns; keeping the objects would move the failure
to a read); the two appends (the first is the mark, which a cancelled request of `agentkit
serve`, whose default store is `memory://`, is resumed from); 128 random bits an id; the state
fed per item.

Cut in the twelfth (+23.4 µs to +16.4 core only, quiet): no `tool_call` item (session
schema 2: a third of a turn's items); the recorder's entries are not checked again at the
append (its kinds are known, its taint decided as it records) and its response and result feed
the state from what it holds; a message's tool calls tagged in the message's own call and a
field that may hold a float walked alone; a result drops its id from the pending calls; with
only a session keeping the run, the in-flight mark is the session's flush; the instructions
check compares the system messages' contents. Cut in the thirteenth (+16.5 µs to about +14,
13 % fewer instructions a turn by valgrind): the loop appends the mark and the turn's batch
through the recorder's own flush at once when the store never waits (three coroutines a turn
fewer); a body the recorder builds is checked as it is built (its counts, price and strings), so
its encoding leaves out the walk for NaN around the message, whose tagger still checks it; the
blob collection is set up only for a batch that held a part (setting the context variable twice
a turn cost some 7k instructions); the approvals of the last answer's calls are cleared only
when there were some. What is left is spread thin: the two bodies' encoding (~2.2 µs), the
stamp (0.39 µs an append), the run's `Usage` made anew each response (0.46 µs), a
`SessionItem` (0.3 µs an item) and the frames from the flush to the store.

On a durable store the append itself dominates: SQLite at `synchronous=normal` above, and at
the default `synchronous=full` an fsync per append (about 0.2 ms on a quiet disk here), which
the run without a session does not pay; `bench_sqlite_session.py` sets it beside
openai-agents' `SQLiteSession`."""


def scenario(hooks: Hooks | None) -> Agent:
    """The agent_loop scenario's agent (``hooks=None``: every installed plugin's hooks)."""
    return Agent(
        "bench", Stamped(), "You are a benchmark.", tools("async"), hooks=hooks, max_turns=1000
    )


async def one_run(agent: Agent, sessions: Sessions | None, turns: int) -> float:
    """One run of ``turns`` turns, recorded into a new session of ``sessions`` when given.

    Returns the median turn's overhead in µs.
    """
    ctx = agent.new_context()
    if sessions is not None:
        ctx.recorder = await Recorder.start(sessions, {"model": "scripted"})
    REC.reset(turns)
    result = await agent.run("go", ctx=ctx)
    assert result.output == ANSWER, result.output
    return statistics.median(REC.overheads_us())


async def measure(runs: int, turns: int, url: str, hooks: Hooks | None) -> dict[str, float]:
    """Median per-turn overhead without and with a session on ``url``, and their ratios.

    ``hooks=None``: every installed plugin's hooks, as an Agent has by default.
    """
    agent = scenario(hooks)
    sessions = Sessions(await open_session_store(url, manager=PM))

    async def once(recorded: bool) -> float:
        return await one_run(agent, sessions if recorded else None, turns)

    try:
        for _ in range(3):  # warm-up
            await once(False)
            await once(True)
        bare: list[float] = []
        recorded: list[float] = []
        for _ in range(runs):
            bare.append(await once(False))
            recorded.append(await once(True))
        path = await sessions.path((await sessions.sessions())[-1].id)
        assert len(path) == 3 + 2 * turns + 1, len(path)  # header, task, instructions, turns...
    finally:
        await sessions.aclose()
    ratios = sorted(b / a for a, b in zip(bare, recorded, strict=True))
    added = sorted(b - a for a, b in zip(bare, recorded, strict=True))
    return {
        "bare": statistics.median(bare),
        "recorded": statistics.median(recorded),
        "added": statistics.median(added),
        "added_low": added[0],
        "added_high": added[-1],
        "ratio": statistics.median(ratios),
        "q1": ratios[len(ratios) // 4],
        "q3": ratios[(3 * len(ratios)) // 4],
        "low": ratios[0],
        "high": ratios[-1],
    }


def null_cost() -> float:
    """Microseconds of the NullRecorder calls one turn makes (the loop's, nothing else)."""
    null = NullRecorder()
    ctx = Agent("a", "test").new_context()
    answer = Message.assistant("", [ToolCall("c1", "add", "{}")])
    result = [Message.tool("c1", "5")]
    sent = (Message.system("x"), Message.user("go"))
    number = 20_000

    async def turns(calls: bool) -> float:
        t0 = time.perf_counter()
        for _ in range(number):
            if calls:
                null.record_instructions(ctx, sent)
                null.record_response(ctx, answer, model="m", usage=None, finish_reason="stop")
                null.record_messages(ctx, result, source="tool")
                await null.flush()
        return time.perf_counter() - t0

    best = min(asyncio.run(turns(True)) for _ in range(7))
    empty = min(asyncio.run(turns(False)) for _ in range(7))
    return (best - empty) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    started = datetime.now(UTC)
    loads = [os.getloadavg()[0]]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for setup, hooks in (("every plugin installed", None), ("core only", Hooks())):
            for store, url in (
                ("memory://", "memory://"),
                (
                    "sqlite, synchronous=normal",
                    f"sqlite:///{tmp}/{len(rows)}.db?synchronous=normal",
                ),
            ):
                t0 = time.perf_counter()
                row = asyncio.run(measure(args.runs, args.turns, url, hooks))
                label = f"{setup} | {store}"
                print(f"{label}: {row} ({time.perf_counter() - t0:.1f} s)", flush=True)
                rows.append((label, row))
    null = null_cost()
    loads.append(os.getloadavg()[0])
    bare = rows[0][1]["bare"]
    print(f"NullRecorder calls per turn: {null:.2f} us ({null / bare:.1%} of a turn)")
    if args.write:
        write(rows, null, args, started, loads)


def write(rows: list[tuple[str, dict[str, float]]], null: float, args: argparse.Namespace,
          started: datetime, loads: list[float]) -> None:  # fmt: skip
    memory, core = rows[0][1], rows[2][1]
    met = {True: "met", False: "missed"}
    lines = [
        "# Sessions: per-turn overhead of recording on the agent loop",
        "",
        f"Measured {started:%Y-%m-%d %H:%M} UTC on {platform.machine()}, 2 CPUs (shared), Python "
        f"{platform.python_version()}, load average {min(loads):.1f}–{max(loads):.1f}, by "
        f"`python benchmarks/sessions/bench_recording.py --runs {args.runs} --turns "
        f"{args.turns} --write`.",
        "",
        __doc__.split("\n\n")[1].replace("\n", " "),
        "",
        "| agentkit | store | µs/turn without a session | µs/turn recording | µs added (range) "
        "| ratio (median) | middle half | range |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, row in rows:
        lines.append(
            f"| {label} | {row['bare']:.1f} | {row['recorded']:.1f} | **+{row['added']:.1f}** "
            f"({row['added_low']:.1f}–{row['added_high']:.1f}) | {row['ratio']:.2f}x | "
            f"{row['q1']:.2f}–{row['q3']:.2f}x | {row['low']:.2f}–{row['high']:.2f}x |"
        )
    lines += [
        "",
        f"Recording on `memory://`: **+{memory['added']:.1f} µs** a turn with every plugin "
        f"installed, **+{core['added']:.1f} µs** core only (target ≤ +{TARGET:.0f} µs: "
        f"{met[memory['added'] <= TARGET]} installed, {met[core['added'] <= TARGET]} core only).",
        "",
        f"The NullRecorder's calls of one turn: **{null:.2f} µs**, "
        f"{null / memory['bare']:.1%} of a turn without a session.",
        "",
        NOTE,
    ]
    (HERE / "RESULTS-recording.md").write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
