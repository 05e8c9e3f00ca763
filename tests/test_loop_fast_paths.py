"""The loop's fast paths give what the full paths give (issue 34's turn).

Each fast path skips work a turn does not use: retry's first attempt without a layer when no
deadline is set, a lone tool call straight to the tool when no decision and no after_tool_call
hook reads it, ``check_call`` returning at once when no run sets a request or token limit, the
handoff scan only for a batch that called a handoff, no mark and no persist step for a run
nothing keeps, the turn's request made without a coroutine when no hook or fold awaits. The
option that switches each is drawn.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Budget
from agentkit_core import BudgetExceeded
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ModelSettings
from agentkit_core import PluginManager
from agentkit_core import ProviderError
from agentkit_core import Recorder
from agentkit_core import RunContext
from agentkit_core import Sessions
from agentkit_core import Tool
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import Usage
from agentkit_core import hookimpl
from agentkit_core import open_checkpointer
from agentkit_core import tool
from agentkit_core._recorder import NullRecorder
from agentkit_core._run_state import RunState
from agentkit_core._scope import RunScope
from agentkit_core._tool_calls import may_rerun
from agentkit_core._tool_calls import must_mark
from agentkit_core._turn import request_now
from agentkit_core._turn import turn_request
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import open_session_store
from agentkit_core.plugin import retry
from agentkit_core.testing import ScriptedModel

ANSWER = ModelResponse(Message.assistant("ok"))


async def _retried(failures: list[bool], attempts: int, deadline: float | None) -> Any:
    """What retry() makes of a model failing ``failures`` (retryable or not), then answering."""
    made = retry(attempts, base_delay=0.0, max_delay=0.0, rng=random.Random(0), deadline=deadline)
    sent: list[int] = []

    async def model(request: ModelRequest) -> ModelResponse:
        sent.append(1)
        if len(sent) <= len(failures):
            retryable = failures[len(sent) - 1]
            raise ProviderError(f"failure {len(sent)}", retryable=retryable)
        return ANSWER

    try:
        outcome: Any = await made.wrap_model(ModelRequest((Message.user("x"),)), model)
    except ProviderError as exc:
        outcome = (type(exc), str(exc), exc.retryable)
    return outcome, len(sent)


@settings(max_examples=60, deadline=None)
@given(failures=st.lists(st.booleans(), max_size=5), attempts=st.integers(1, 4))
def test_retry_without_a_deadline_attempts_as_with_one(failures: list[bool], attempts: int) -> None:
    fast = asyncio.run(_retried(failures, attempts, None))
    full = asyncio.run(_retried(failures, attempts, 1000.0))
    assert fast == full


@tool
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class _Identity:
    """An after_tool_call hook that leaves each result as it is: the full path, same result."""

    @hookimpl
    def agentkit_after_tool_call(self, ctx: Any, call: ToolCall, result: Any) -> Any:
        return result


ARGUMENTS = st.sampled_from(['{"a": 1, "b": 2}', '{"a": 1}', "{bad", "[1]", '{"a":1,"a":2}'])


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(["add", "missing"]), arguments=ARGUMENTS)
def test_a_lone_call_runs_alike_with_or_without_an_after_tool_call_hook(
    name: str, arguments: str
) -> None:
    async def transcript(hooks: Hooks) -> list[tuple[str, str, bool]]:
        call = ToolCall("c1", name, arguments)
        model = ScriptedModel([Message.assistant("", (call,)), "done"])
        result = await Agent("f", model, tools=[add], hooks=hooks).run("go")
        return [(m.role, m.text, m.is_error) for m in result.transcript]

    identity = Hooks.from_plugins(PluginManager(entry_points=False, plugins=[_Identity()]))
    assert identity.after_tool_call
    assert asyncio.run(transcript(Hooks())) == asyncio.run(transcript(identity))


LIMIT = st.one_of(st.none(), st.integers(0, 3))


@settings(max_examples=80, deadline=None)
@given(
    requests=st.tuples(LIMIT, LIMIT),
    tokens=st.tuples(LIMIT, LIMIT),
    others=st.tuples(LIMIT, LIMIT),
    prompt=st.integers(0, 5),
)
def test_check_call_fast_path_refuses_what_the_full_path_refuses(
    requests: tuple[int | None, int | None],
    tokens: tuple[int | None, int | None],
    others: tuple[int | None, int | None],
    prompt: int,
) -> None:
    """No request or token limit anywhere: no estimate asked, nothing refused; else the limits."""
    parent = RunScope(
        budget=Budget(max_requests=requests[0], max_tokens=tokens[0], max_tool_calls=others[0])
    )
    child = RunScope(
        parent=parent,
        budget=Budget(max_requests=requests[1], max_tokens=tokens[1], max_tool_calls=others[1]),
    )
    asked: list[int] = []

    def estimate() -> int:
        asked.append(prompt)
        return prompt

    try:
        child.check_call(estimate)
        refused = None
    except BudgetExceeded as exc:
        refused = exc.limit
    limited = any(x is not None for x in (*requests, *tokens))
    if not limited:
        assert (refused, asked) == (None, [])
    # the reference: the outermost run first, requests before tokens, as add_usage checks
    expected = None
    for r, t in ((requests[0], tokens[0]), (requests[1], tokens[1])):
        if expected is None and r is not None and r <= 0:
            expected = "request"
        elif expected is None and t is not None and prompt > t:
            expected = "token"
    assert refused == expected


@tool(side_effects=True)
async def send(text: str) -> str:
    """A tool that must not run twice: a batch calling it is marked in flight where kept."""
    return text.upper()


class _Kept(NullRecorder):
    """Writes nothing, but is not exactly NullRecorder: the run counts as kept (the full path)."""

    flushes = 0

    async def flush(self, *args: object, **kwargs: object) -> None:
        self.flushes += 1


CALLS = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["add", "missing"]), ARGUMENTS),
        st.tuples(st.just("send"), st.sampled_from(['{"text": "hi"}', '{"text": 1}', "{bad"])),
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=40, deadline=None)
@given(batches=st.lists(CALLS, min_size=1, max_size=3))
def test_a_run_nothing_keeps_runs_alike_without_its_marks_and_persists(
    batches: list[list[tuple[str, str]]],
) -> None:
    """Without a session or checkpointer the loop skips the in-flight mark and each persist."""

    async def transcript(kept: bool) -> tuple[object, list[tuple[str, str, bool]]]:
        turns: list[Message | str] = [
            Message.assistant(
                "",
                tuple(ToolCall(f"c{t}{i}", name, args) for i, (name, args) in enumerate(batch)),
            )
            for t, batch in enumerate(batches)
        ]
        agent = Agent("k", ScriptedModel([*turns, "done"]), tools=[add, send], hooks=Hooks())
        ctx = agent.new_context()
        recorder = ctx.recorder = _Kept() if kept else ctx.recorder
        result = await agent.run("go", ctx=ctx)
        if kept:  # the full path: a persist after each turn and at the end, and the marks
            assert isinstance(recorder, _Kept)
            assert recorder.flushes >= len(batches) + 1
        return result.output, [(m.role, m.text, m.is_error) for m in result.transcript]

    assert asyncio.run(transcript(False)) == asyncio.run(transcript(True))


TEXTS = st.lists(st.text(max_size=12), min_size=1, max_size=4)


@settings(max_examples=40, deadline=None)
@given(texts=TEXTS, temperature=st.one_of(st.none(), st.floats(0, 1)), sink=st.booleans())
def test_a_request_nothing_awaits_for_is_the_one_turn_request_makes(
    texts: list[str], temperature: float | None, sink: bool
) -> None:
    """No hook or fold shapes the request: request_now makes turn_request's, with no await."""
    agent = Agent("q", ScriptedModel(["done"]), tools=[add, send], hooks=Hooks())
    ctx = agent.new_context()
    state = RunState("go", [Message.user(t) for t in texts])
    specs = tuple(t.spec for t in (add, send))
    chosen: ModelSettings = {} if temperature is None else {"temperature": temperature}
    told: Any = None if not sink else (lambda event: None)
    now = request_now(agent, ctx, state, specs, chosen, told)
    full, folded = asyncio.run(turn_request(agent, ctx, state, specs, chosen, told))
    assert now is not None and not folded
    assert (now.messages, now.tools, now.output, now.settings, now.ctx, now.metadata) == (
        full.messages,
        full.tools,
        full.output,
        full.settings,
        full.ctx,
        full.metadata,
    )
    assert now.settings is not chosen  # each request its own copy, as turn_request's


@settings(max_examples=80, deadline=None)
@given(
    calls=st.lists(
        st.tuples(st.sampled_from([None, "p:a", "p:b"]), st.integers(0, 9), st.integers(0, 9)),
        max_size=6,
    ),
    resumed=st.booleans(),
)
def test_usage_by_model_shares_the_total_only_when_it_is_the_same_sum(
    calls: list[tuple[str | None, int, int]], resumed: bool
) -> None:
    """One model making every call keeps the run's total as its own: the sums are still each
    model's calls added up (None: a bare model's call, counted in the total only)."""
    scope = RunScope()
    if resumed:  # a resumed run starts from what it had spent, its models' sums beside it
        scope.usage = Usage(5, 5, 1)
        scope.usage_by_model = {"p:a": scope.usage}
    expected = dict(scope.usage_by_model)
    for model, sent, got in calls:
        used = Usage(sent, got, 1)
        scope.add_usage(used, model)
        if model is not None:
            expected[model] = expected[model] + used if model in expected else used
    assert scope.usage_by_model == expected


def _per_batch(
    calls: list[ToolCall], tools: dict[str, Tool], decisions: list[ToolDecision | None]
) -> bool:
    """The mark's decision as it was made for each batch: every call's tool looked at."""
    runs = [d is None or d.kind == "allow" for d in decisions] or [True] * len(calls)
    return any(
        run and not may_rerun(tools.get(call.name)) for call, run in zip(calls, runs, strict=True)
    )


FLAGS = st.tuples(st.booleans(), st.booleans())  # side_effects, idempotent
VERDICTS = st.sampled_from([None, ToolDecision.allow(), ToolDecision.deny(), ToolDecision.ask()])


@settings(max_examples=200, deadline=None)
@given(
    flags=st.dictionaries(st.sampled_from(["a", "b", "c"]), FLAGS),
    batches=st.lists(
        st.lists(st.tuples(st.sampled_from(["a", "b", "c", "gone"]), VERDICTS), max_size=4),
        min_size=1,
        max_size=4,
    ),
    decided=st.booleans(),
    changed=st.dictionaries(st.sampled_from(["a", "b", "c"]), FLAGS),
)
def test_the_mark_decided_once_per_tool_set_is_the_per_batch_decision(
    flags: dict[str, tuple[bool, bool]],
    batches: list[list[tuple[str, ToolDecision | None]]],
    decided: bool,
    changed: dict[str, tuple[bool, bool]],
) -> None:
    """A tool set's scan serves every batch of its run; the next run scans it again.

    Batches run in a row under one run (the scan made at the first, kept for the rest), then
    the tools' flags change and the same batches run under a second run: each batch's answer
    is the one that looks at every call's tool (a tool not in the set may run again).
    """
    tools: dict[str, Tool] = {
        name: Tool(name, side_effects=effects, idempotent=idempotent)
        for name, (effects, idempotent) in flags.items()
    }
    for run_id in ("run-1", "run-2"):
        ctx = RunContext(run_id=run_id)
        for t, batch in enumerate(batches):
            calls = [ToolCall(f"c{t}{i}", name, "{}") for i, (name, _) in enumerate(batch)]
            decisions = [v for _, v in batch] if decided else []
            assert must_mark(calls, tools, decisions, ctx) == _per_batch(calls, tools, decisions)
        for name, (effects, idempotent) in changed.items():
            if name in tools:
                tools[name].side_effects, tools[name].idempotent = effects, idempotent


KEEPERS = st.sampled_from([None, "agent", "ctx", "store"])  # where the run's checkpointer is


@settings(max_examples=40, deadline=None)
@given(
    session=st.booleans(),
    keeper=KEEPERS,
    batches=st.lists(st.lists(FLAGS, min_size=1, max_size=3), min_size=1, max_size=3),
)
def test_a_batch_is_in_flight_for_each_keeper_before_its_calls_run(
    session: bool, keeper: str | None, batches: list[list[tuple[bool, bool]]]
) -> None:
    """What a call sees of its own batch as it starts, session and checkpointer drawn.

    A batch with a call that must not run twice is in each keeper before any call runs: the
    answer carrying the calls in the session, the calls pending in a RUNNING checkpoint
    (however the checkpointer is wired); a batch every call of which may run again is in
    neither. Real stores: ``memory://`` sessions and checkpoints.
    """

    async def seen() -> list[tuple[bool, bool]]:
        pm = PluginManager()
        sessions = Sessions(await open_session_store("memory://", manager=pm))
        cp = await open_checkpointer("memory://", manager=pm)
        found: list[tuple[bool, bool]] = []

        async def look(ctx: RunContext, call: str) -> str:
            """Note what each keeper holds of this call."""
            held = False
            if session:
                path = await sessions.path(ctx.recorder.session_id)
                held = any(
                    call in [c.id for c in i.body["message"].tool_calls]
                    for i in path
                    if i.kind == "response"
                )
            latest = await cp.port.latest(ctx.run_id, "agent")
            pending = (
                latest is not None
                and latest.status == "running"
                and call in [c["id"] for c in json.loads(latest.state)["pending"]]
            )
            found.append((held, pending))
            return "ok"

        tools = [
            tool(name=f"t{t}{i}", side_effects=effects, idempotent=idempotent)(look)
            for t, batch in enumerate(batches)
            for i, (effects, idempotent) in enumerate(batch)
        ]
        turns: list[Message | str] = [
            Message.assistant(
                "",
                tuple(
                    ToolCall(f"c{t}{i}", f"t{t}{i}", json.dumps({"call": f"c{t}{i}"}))
                    for i in range(len(b))
                ),
            )
            for t, b in enumerate(batches)
        ]
        agent = Agent(
            "k",
            ScriptedModel([*turns, "done"]),
            tools=tools,
            hooks=Hooks(),
            checkpointer=cp if keeper == "agent" else None,
        )
        ctx = agent.new_context()
        if session:
            ctx.recorder = await Recorder.start(sessions)
        if keeper == "ctx":
            ctx.checkpointer = cp
        elif keeper == "store":
            ctx.store = cp.port
        await agent.run("go", ctx=ctx)
        return found

    expected = []
    for batch in batches:
        tools = [Tool("t", side_effects=e, idempotent=i) for e, i in batch]
        marked = not all(may_rerun(t) for t in tools)
        expected += [(session and marked, keeper is not None and marked)] * len(batch)
    assert asyncio.run(seen()) == expected
