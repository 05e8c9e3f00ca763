"""The fold's fast paths give what the plain rules give, whichever hooks are async.

A fold skips the checks for a chain hook that hands back the value it was given, makes the list
of kept returns only for the first one, and reads the CPU clock only for a slow call. None of
that may change a result or an error: the fold's outcome is compared with the rules written
out here, with every hook synchronous, every hook async, and the drawn mix.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
import warnings
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import HookError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import SlowHookWarning
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import ToolResult
from agentkit_core import TurnInfo
from agentkit_core.plugin import ModelRequest
from agentkit_core.testing import make_test_ctx

#: field -> its arguments after ctx, by name
ARGUMENTS: dict[str, tuple[str, ...]] = {
    "before_model_call": ("request",),
    "before_tool_call": ("call",),
    "after_tool_call": ("call", "result"),
    "output_guard": ("message",),
    "should_stop_after_turn": ("turn",),
    "before_turn": ("info",),
    "transform": ("transcript",),
}
START: dict[str, tuple[Any, ...]] = {
    "before_model_call": (ModelRequest((Message.user("q"),)),),
    "before_tool_call": (ToolCall("1", "x", "{}"),),
    "after_tool_call": (ToolCall("1", "x", "{}"), ToolResult("r")),
    "output_guard": (Message.assistant("m"),),
    "should_stop_after_turn": (TurnInfo(1),),
    "before_turn": (TurnInfo(1),),
    "transform": ([Message.user("u")],),
}
CHAINS = {"before_model_call", "after_tool_call", "output_guard", "transform"}
KINDS = ("allow", "ask", "deny")

#: What a hook does: no opinion, hand back its field's last argument, a new value the field
#: allows, a value it does not allow, or raise.
BEHAVIOURS = ("none", "same", "new", "wrong", "raise")


def new_value(field: str, i: int, last: Any) -> Any:
    return {
        "before_model_call": lambda: ModelRequest((Message.user(f"r{i}"),)),
        "before_tool_call": lambda: ToolDecision(KINDS[i % 3], f"h{i}"),
        "after_tool_call": lambda: ToolResult(f"r{i}"),
        "output_guard": lambda: Message.assistant(f"m{i}"),
        "should_stop_after_turn": lambda: f"stop {i}",
        "before_turn": lambda: [Message.user(f"t{i}")],
        "transform": lambda: [*last, Message.user(f"x{i}")],
    }[field]()


def act(field: str, behaviour: str, i: int, last: Any) -> Any:
    if behaviour == "raise":
        raise ValueError(f"hook {i}")
    if behaviour == "new":
        return new_value(field, i, last)
    return {"none": None, "same": last, "wrong": 7}[behaviour]


def implementation(field: str, behaviour: str, i: int, is_async: bool) -> Any:
    """A hook that names every argument of its field, as a plugin's usually does."""

    def sync(ctx: Any, *args: Any) -> Any:
        return act(field, behaviour, i, args[-1])

    async def coro(ctx: Any, *args: Any) -> Any:
        await asyncio.sleep(0)  # suspends: the fold really awaits it
        return sync(ctx, *args)

    fn = coro if is_async else sync
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ("ctx",)]
    params += [
        inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ARGUMENTS[field]
    ]
    fn.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return fn


def outcome(field: str, behaviours: list[str], asynchronous: list[bool]) -> tuple[Any, ...]:
    hooks = Hooks(
        **{
            field: tuple(
                (f"p{i}", implementation(field, b, i, a))
                for i, (b, a) in enumerate(zip(behaviours, asynchronous, strict=True))
            )
        }
    )
    run = getattr(hooks, f"run_{field}")
    try:
        out = asyncio.run(run(make_test_ctx(), *START[field]))
    except HookError as exc:
        return ("error", exc.plugin, exc.hook, type(exc.__cause__).__name__, exc.value)
    return ("ok", summary(field, out))


def summary(field: str, out: Any) -> Any:
    if field == "before_tool_call":
        return (out.kind, out.reason, out.source)
    if field == "should_stop_after_turn":
        return out and (out.reason, out.source)
    if field in ("before_turn", "transform"):
        return [m.text for m in out]
    return out


def expected(field: str, behaviours: list[str]) -> tuple[Any, ...]:
    """The fields' rules, written out: what each hook gets, what is allowed, how they combine."""
    args = START[field]
    last = args[-1]
    found: list[tuple[str, Any]] = []
    for i, behaviour in enumerate(behaviours):
        if behaviour == "raise":
            return ("error", f"p{i}", f"agentkit_{field}", "ValueError", None)
        out = act(field, behaviour, i, last)
        if out is None:
            continue
        allowed = field in CHAINS if behaviour == "same" else behaviour == "new"
        if not allowed:
            return ("error", f"p{i}", f"agentkit_{field}", "NoneType", out)
        if field in CHAINS:
            last = list(out) if field == "transform" else out
        elif field == "should_stop_after_turn":
            return ("ok", (out, f"p{i}"))
        else:
            found.append((f"p{i}", out))
    if field in CHAINS:
        return ("ok", summary(field, last))
    if field == "should_stop_after_turn":
        return ("ok", None)
    if field == "before_turn":
        return ("ok", [m.text for _, out in found for m in out])
    best = ("allow", "", "")
    for source, out in found:
        if KINDS.index(out.kind) > KINDS.index(best[0]):
            best = (out.kind, out.reason, source)
    return ("ok", best)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(ARGUMENTS)),
    st.lists(st.tuples(st.sampled_from(BEHAVIOURS), st.booleans()), max_size=6),
)
def test_sync_async_and_mixed_hooks_fold_to_the_same_result_or_error(
    field: str, hooks: list[tuple[str, bool]]
) -> None:
    behaviours = [b for b, _ in hooks]
    want = expected(field, behaviours)
    assert outcome(field, behaviours, [a for _, a in hooks]) == want
    assert outcome(field, behaviours, [False] * len(hooks)) == want
    assert outcome(field, behaviours, [True] * len(hooks)) == want


def test_a_chain_hook_handing_back_what_it_got_leaves_it_the_same_object() -> None:
    request = START["before_model_call"][0]
    same = Hooks.of("a", before_model_call=[lambda request: request] * 3)
    assert asyncio.run(same.run_before_model_call(make_test_ctx(), request)) is request


# ---------------------------------------------------------------------- slow hooks


def blocking(seconds: float) -> Any:
    def hook(message: Message) -> None:
        time.sleep(seconds)

    return hook


async def test_the_slow_hook_is_named_among_fast_sync_and_async_ones() -> None:
    async def quick(message: Message) -> None:
        await asyncio.sleep(0)

    hooks = (
        Hooks.of("fast", output_guard=lambda message: None, slow=0.01)
        .merged(Hooks.of("blocker", output_guard=blocking(0.08)))
        .merged(Hooks.of("awaits", output_guard=quick))
        .merged(Hooks.of("also-fast", output_guard=lambda message: None))
    )
    ctx = make_test_ctx()
    with pytest.warns(SlowHookWarning, match=r"^hook agentkit_output_guard of plugin 'blocker' "):
        await hooks.run_output_guard(ctx, Message.assistant("x"))
    (span,) = ctx.trace.find("hook")
    assert span.attributes["plugin"] == "blocker" and span.attributes["held"] >= 0.08


def test_a_call_is_not_judged_by_another_threads_cpu_reading(monkeypatch) -> None:
    """Thread B has computed for 0.2 s; thread A read its own CPU clock last. B's hook only
    waits 0.02 s (under 5 x slow): A's reading must not make B's CPU time look like the call's.
    """
    from agentkit_core import _hooks

    hooks = Hooks.of("waits", output_guard=blocking(0.02), slow=0.01)
    computed, read = threading.Event(), threading.Event()
    caught: list[Any] = []

    def b() -> None:
        start = time.thread_time()
        while time.thread_time() - start < 0.2:
            pass
        computed.set()
        read.wait()
        ctx = make_test_ctx()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            asyncio.run(hooks.run_output_guard(ctx, Message.assistant("x")))
        caught.extend([*seen, *ctx.trace.find("hook")])

    def a() -> None:
        computed.wait()
        _hooks._read_cpu(time.perf_counter())
        monkeypatch.setattr(_hooks, "_cpu_fresh_until", float("inf"))  # B reads none of its own
        read.set()

    threads = [threading.Thread(target=b), threading.Thread(target=a)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert caught == []
