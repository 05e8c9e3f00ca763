"""A recorder's flush into a store whose append never waits (``append_now``) is the awaited one.

``memory://`` offers ``append_now``, so a recorder's flush into it writes at once, with no lock
and no await; these tests hold that path to the awaited one (the same store reached only through
its async ``append``): the same records, the same refusals with the same errors, the batch kept
after a refusal, a conflict raised the same way. Item ids come from ``os.urandom`` in blocks;
they stay unique, in a forked child too.
"""

from __future__ import annotations

import math
import multiprocessing
import re
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Recorder
from agentkit_core import SessionConflict
from agentkit_core import Sessions
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core import hookimpl
from agentkit_core.plugin import EncodingError
from agentkit_core.plugin import NewItem
from agentkit_core.plugin import Price
from agentkit_core.plugin import SessionItem
from agentkit_core.plugin import encode_state
from agentkit_core.plugin import open_session_store

#: A manager of the tests' own (a hypothesis test takes no function-scoped fixture).
PM = PluginManager()


class Awaited:
    """A store that is the memory store, reached only through its awaited methods."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.url = store.url

    def __getattr__(self, name: str) -> Any:
        if name == "append_now":
            raise AttributeError(name)
        return getattr(self._store, name)

    async def create(self, items: Sequence[SessionItem]) -> bool:
        return bool(await self._store.create(items))

    async def append(self, items: Sequence[SessionItem]) -> bool:
        return bool(await self._store.append(items))

    async def item(self, item_id: str) -> SessionItem | None:
        return await self._store.item(item_id)  # type: ignore[no-any-return]

    async def leaf(self, session_id: str) -> SessionItem | None:
        return await self._store.leaf(session_id)  # type: ignore[no-any-return]

    async def path(self, item_id: str) -> list[SessionItem]:
        return await self._store.path(item_id)  # type: ignore[no-any-return]

    async def info(self, session_id: str) -> Any:
        return await self._store.info(session_id)

    async def sessions(self) -> list[Any]:
        return await self._store.sessions()  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        await self._store.aclose()


_text = st.text(max_size=6)
_scalar = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | _text
_metadata = st.dictionaries(_text, st.recursive(_scalar, st.lists, max_leaves=4), max_size=2)
_call = st.builds(ToolCall, _text, _text, _text)
_answer = st.builds(
    lambda text, calls, meta: Message("assistant", text, tuple(calls), metadata=meta),
    _text,
    st.lists(_call, max_size=2),
    _metadata,
)
_result = st.builds(
    lambda call, text, meta: Message("tool", text, tool_call_id=call, metadata=meta),
    _text,
    _text,
    _metadata,
)
#: A turn: a model answer (its usage maybe), the results, and whether each is flushed.
_turns = st.lists(
    st.tuples(
        _answer,
        st.none() | st.builds(Usage, st.integers(0, 9), st.integers(0, 9)),
        st.lists(_result, max_size=2),
        st.booleans(),
    ),
    min_size=1,
    max_size=4,
)


async def _record(sessions: Sessions, turns: list[Any]) -> tuple[list[Any], list[Any]]:
    """Record ``turns``; each flush's outcome, and the session's path as (kind, body text)."""
    ctx = Agent("a", "test", hooks=Hooks()).new_context()
    recorder = await Recorder.start(sessions, {"model": "m"})
    outcomes: list[Any] = []

    async def flush() -> None:
        try:
            await recorder.flush()
            outcomes.append("ok")
        except EncodingError as exc:
            outcomes.append((str(exc).replace(recorder.session_id, "S"), exc.path))

    for answer, usage, results, mark in turns:
        recorder.record_response(ctx, answer, model="m", usage=usage)
        if mark:
            await flush()
        recorder.record_messages(ctx, results, source="tool")
        await flush()
    outcomes.append(len(recorder._buffer))  # what a refusal kept for the next flush
    path = await sessions.path(recorder.session_id)
    run = re.escape(ctx.run_id)
    return outcomes, [(i.kind, re.sub(run, "R", i.body_json)) for i in path]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_turns)
async def test_the_flush_at_once_writes_and_refuses_what_the_awaited_one_does(
    turns: list[Any],
) -> None:
    memory = await open_session_store("memory://", manager=PM)
    assert hasattr(memory, "append_now")
    at_once, awaited = (
        Sessions(memory),
        Sessions(Awaited(await open_session_store("memory://", manager=PM))),
    )
    assert at_once._append_now is not None and awaited._append_now is None
    try:
        assert await _record(at_once, turns) == await _record(awaited, turns)
    finally:
        await at_once.aclose()
        await awaited.aclose()


async def test_nan_is_refused_at_the_flush_at_once_and_the_batch_kept() -> None:
    async with Sessions(await open_session_store("memory://", manager=PM)) as sessions:
        ctx = Agent("a", "test", hooks=Hooks()).new_context()
        recorder = await Recorder.start(sessions, {"model": "m"})
        leaf = recorder.leaf
        recorder.record_response(
            ctx, Message("assistant", "x", metadata={"s": math.nan}), model="m"
        )
        with pytest.raises(EncodingError, match=r"nothing was written to session") as raised:
            await recorder.flush()
        assert raised.value.path == 'body["message"].metadata["s"]'
        assert len(recorder._buffer) == 1 and recorder.leaf == leaf
        assert [i.id for i in await sessions.path(recorder.session_id)] == [leaf]


class DrawnRate:
    """Prices ``odd:`` models at a drawn rate per million input tokens (NaN and infinity too)."""

    AGENTKIT_NAME = "drawn-rate"

    def __init__(self, rate: float) -> None:
        self.rate = rate

    @hookimpl
    def agentkit_register_prices(self, register: Any) -> None:
        register("odd", lambda model: Price(self.rate, 1.0) if model.startswith("odd:") else None)


#: Where the drawn number goes: a usage count, the finish reason or the price.
_PLACES = ["input", "output", "cache_read", "cache_write", "reasoning", "finish", "price"]
#: A number where a count, a finish reason or a price goes: NaN and infinity drawn often.
_odd = st.sampled_from([math.nan, math.inf, -math.inf]) | st.floats() | st.integers(0, 9)


@pytest.mark.parametrize("where", range(7), ids=_PLACES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    answer=_answer,
    result=_result,
    odd=_odd | st.booleans(),
    reason=st.none() | _text,
    priced=st.booleans(),
)
@example(
    answer=Message("assistant", ""),
    result=Message("tool", "", tool_call_id="c"),
    odd=math.nan,
    reason=None,
    priced=False,
)
@example(
    answer=Message("assistant", ""),
    result=Message("tool", "", tool_call_id="c"),
    odd=math.inf,
    reason="stop",
    priced=True,
)
async def test_a_recorded_body_is_written_and_refused_as_encode_state_does(
    where: int, answer: Message, result: Message, odd: Any, reason: str | None, priced: bool
) -> None:
    """A response and a result the recorder checks as it builds them are encoded unwalked.

    Whatever one value is (a count, the finish reason or the price: a float, NaN, a bool, text),
    the text written is what ``encode_state`` writes for the body, and a body it refuses is
    refused.
    """
    values: list[Any] = [3, 2, 0, 0, 0, reason, 1.0]
    values[where] = odd
    manager = PluginManager(plugins=[DrawnRate(values[6])])
    ctx = Agent("a", "test", hooks=Hooks(), manager=manager).new_context()
    async with Sessions(await open_session_store("memory://", manager=PM)) as sessions:
        recorder = await Recorder.start(sessions, {"model": "m"})
        usage = Usage(values[0], values[1], 1, *values[2:5])
        model = "odd:m" if priced or where == 6 else "m"
        recorder.record_response(ctx, answer, model=model, usage=usage, finish_reason=values[5])
        recorder.record_tool_result(ctx, result)
        expected: list[str | None] = []
        for _, body, _, _ in recorder._buffer:
            try:
                expected.append(encode_state(body, root="body"))
            except EncodingError:
                expected.append(None)
        if None in expected:
            with pytest.raises(EncodingError, match="nothing was written"):
                await recorder.flush()
        else:
            await recorder.flush()
            written = [i.body_json for i in await sessions.path(recorder.session_id)]
            assert written[-2:] == expected


class _Field:
    def __init__(self, name: str) -> None:
        self.name = name


class Counting:
    """An attrs-like record whose one field counts its reads and is not encodable."""

    __attrs_attrs__ = (_Field("value"),)

    def __init__(self) -> None:
        self.reads = 0

    @property
    def value(self) -> object:
        self.reads += 1
        return object()


async def test_a_refused_body_is_tried_by_orjson_once_then_json_then_walked_for_its_path() -> None:
    """A refusal costs three reads of the body, not a second orjson try before json's."""
    async with Sessions(await open_session_store("memory://", manager=PM)) as sessions:
        head = await sessions.create({"model": "m"})
        body = Counting()
        with pytest.raises(EncodingError, match="nothing was written") as raised:
            await sessions.append(head.session_id, head.id, NewItem("user", {"b": body}))
        assert raised.value.path == 'body["b"].value'
        assert body.reads == 3


async def test_another_writer_is_a_conflict_after_the_flush_at_once_fails() -> None:
    async with Sessions(await open_session_store("memory://", manager=PM)) as sessions:
        ctx = Agent("a", "test", hooks=Hooks()).new_context()
        recorder = await Recorder.start(sessions, {"model": "m"})
        other = await sessions.append(recorder.session_id, recorder.leaf or "", NewItem("user", {}))
        recorder.record_user(ctx, Message.user("go"))
        with pytest.raises(SessionConflict, match="moved on"):
            await recorder.flush()
        assert recorder._buffer == []  # a batch that can never follow that leaf is dropped
        assert (await sessions.leaf(recorder.session_id)).id == other[-1].id


def _expected(turns: list[Any], run: str) -> tuple[list[tuple[str, str]] | None, Any, Any]:
    """What recording ``turns`` stores, from the schema (docs/sessions.md), not the recorder.

    The items after the header as (kind, body text), or None when a body cannot be encoded;
    the run's usage by model; the calls of the last answer with no result.
    """
    items: list[tuple[str, str]] = []
    used = Usage()
    pending: tuple[ToolCall, ...] = ()
    try:
        for answer, usage, results, _mark in turns:
            counts = None
            if usage is not None:
                counts = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
                used = Usage(
                    used.input_tokens + usage.input_tokens,
                    used.output_tokens + usage.output_tokens,
                    used.requests + 1,
                )
            response = {"message": answer, "model": "m", "usage": counts}
            response |= {"finish_reason": None, "source": "model", "run": run}
            items.append(("response", encode_state(response)))  # its calls are in its message
            pending = answer.tool_calls
            if not pending:  # an answer without calls ends the run: a later run starts anew
                used = Usage()
            for result in results:
                items.append(("tool_result", encode_state({"message": result, "run": run})))
            answered = {r.tool_call_id for r in results}
            pending = tuple(c for c in pending if c.id not in answered)
    except EncodingError:
        return None, None, None
    return items, ({"m": used} if used.requests else {}), pending


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_turns)
async def test_a_recorded_session_is_the_schema_s_items_and_state_on_memory_and_sqlite(
    turns: list[Any],
) -> None:
    """Random turns: each store holds the items the schema gives, and the state agrees."""
    import tempfile

    from agentkit_core.plugin import SessionState

    with tempfile.TemporaryDirectory() as tmp:
        for url in ("memory://", f"sqlite:///{tmp}/s.db"):
            async with Sessions(await open_session_store(url, manager=PM)) as sessions:
                ctx = Agent("a", "test", hooks=Hooks()).new_context()
                recorder = await Recorder.start(sessions, {"model": "m"})
                items, usage, pending = _expected(turns, ctx.run_id)
                try:
                    for answer, used, results, mark in turns:
                        recorder.record_response(ctx, answer, model="m", usage=used)
                        if mark:
                            await recorder.flush()
                        recorder.record_messages(ctx, results, source="tool")
                        await recorder.flush()
                except EncodingError:
                    assert items is None
                    continue
                path = await sessions.path(recorder.session_id)
                assert [(i.kind, i.body_json) for i in path[1:]] == items
                replayed = SessionState.replay(recorder.session_id, path)
                for state in (recorder.state, replayed):
                    assert state.run_usage == usage
                    assert state.pending == pending


def _ids_in_child(queue: Any) -> None:
    from agentkit_core._sessions import new_id

    queue.put([new_id() for _ in range(100)])


def test_item_ids_are_unique_and_a_forked_child_draws_its_own() -> None:
    from agentkit_core._sessions import new_id

    mine = [new_id() for _ in range(1000)]  # several blocks of the pool
    assert len(set(mine)) == 1000
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in mine)
    new_id()  # the pool holds ids read before the fork
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_ids_in_child, args=(queue,))
    child.start()
    theirs = queue.get(timeout=30)
    child.join(30)
    after = [new_id() for _ in range(100)]
    assert len(set(theirs) | set(after)) == 200


class CountingFlushes(Recorder):
    """A recorder that overrides ``flush`` alone: the loop must await it, never go around it."""

    flushes = 0

    async def flush(self) -> None:
        type(self).flushes += 1
        await super().flush()


async def test_a_recorder_overriding_flush_is_awaited_at_every_durability_point() -> None:
    """The loop appends at once only through the recorder's own flush; an override is awaited."""
    from agentkit_core import tool
    from agentkit_core.testing import ScriptedModel

    @tool(side_effects=True)
    async def send(text: str) -> str:
        """Send ``text``: must not run twice, so its batch is marked in flight."""
        return text.upper()

    turns = [
        Message.assistant("", (ToolCall(f"c{i}", "send", '{"text": "hi"}'),)) for i in range(3)
    ]
    async with Sessions(await open_session_store("memory://", manager=PM)) as sessions:
        recorder = await CountingFlushes.start(sessions, {"model": "m"})
        assert recorder._flush_now() is False  # its flush rules
        CountingFlushes.flushes = 0
        agent = Agent("a", ScriptedModel([*turns, "done"]), tools=[send], hooks=Hooks())
        ctx = agent.new_context()
        ctx.recorder = recorder
        assert (await agent.run("go", ctx=ctx)).output == "done"
        path = await sessions.path(recorder.session_id)
    # begin, each turn's mark and persist, the answer's persist
    assert CountingFlushes.flushes == 1 + 2 * len(turns) + 1
    assert [i.kind for i in path].count("tool_result") == len(turns)
