"""The guard seam: the chain, the per-part pass, the request, output and turn checks, verdicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import GuardBlocked
from agentkit_core import GuardChain
from agentkit_core import HookError
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Recorder
from agentkit_core import Sessions
from agentkit_core import ToolCall
from agentkit_core import TurnInfo
from agentkit_core import UnknownNameError
from agentkit_core import hookimpl
from agentkit_core import tool
from agentkit_core._messages import TranscriptView
from agentkit_core._messages import past
from agentkit_core.plugin import Guard
from agentkit_core.plugin import GuardDecision
from agentkit_core.plugin import GuardInput
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import Verdict
from agentkit_core.plugin import build_guard_chain
from agentkit_core.plugin import open_session_store
from agentkit_core.testing import GuardConformance
from agentkit_core.testing import ScriptedModel


class Mask(Guard):
    """A reference guard: hides the word "secret", refuses the word "forbidden"."""

    name = "mask"

    def _check(self, text: str) -> GuardDecision:
        if "forbidden" in text:
            return GuardDecision.block("a forbidden word")
        if "secret" in text:
            return GuardDecision.rewrite(text.replace("secret", "[hidden]"), "hid 1 word")
        return GuardDecision.ALLOW

    def check_input(self, inp: GuardInput) -> GuardDecision:
        return self._check(inp.text)

    def check_output(self, message: Message) -> GuardDecision:
        return self._check(message.text)


class TestMask(GuardConformance):
    triggers = (("the secret is out", ("secret",)), ("a forbidden act", ()))

    def make_guard(self) -> Guard:
        return Mask()


class Upper(Guard):
    name = "upper"

    def check_input(self, inp: GuardInput) -> GuardDecision:
        return (
            GuardDecision.rewrite(inp.text.upper(), "shouted")
            if inp.text.islower()
            else (GuardDecision.ALLOW)
        )


class Wrong(Guard):
    name = "wrong"

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def check_input(self, inp: GuardInput) -> Any:
        return self.answer

    def check_turn(self, turn: TurnInfo) -> Any:
        return self.answer


class Raises(Guard):
    name = "raises"

    def check_input(self, inp: GuardInput) -> GuardDecision:
        raise RuntimeError("the detector broke")


class Tired(Guard):
    name = "tired"

    def check_turn(self, turn: TurnInfo) -> GuardDecision:
        return (
            GuardDecision.block("one turn of tools is enough")
            if turn.turn >= 1
            else (GuardDecision.ALLOW)
        )


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def agent(model: ScriptedModel, *guards: Guard, **options: Any) -> Agent:
    return Agent("guarded", model, "You help.", [lookup], guards=GuardChain(guards), **options)


# --------------------------------------------------------------------------- the request


async def test_the_request_is_sent_guarded_and_the_verdict_names_the_message() -> None:
    seen: list[Verdict] = []
    model = ScriptedModel(["ok"])
    result = await agent(model, Mask(), verdict_observer=seen.append).run("my secret plan")
    assert model.requests[0].messages[-1].text == "my [hidden] plan"
    assert result.transcript[1].text == "my secret plan"  # the conversation keeps what was typed
    assert [(v.namespace, v.hook, v.verdict, v.subject_id, v.rule, v.reason) for v in seen] == [
        ("guard", "input", "rewrite", "message/1", "mask", "hid 1 word")
    ]


async def test_guards_read_the_text_parts_and_say_they_skipped_the_others() -> None:
    from agentkit_core.content import AudioPart
    from agentkit_core.content import ImagePart
    from agentkit_core.content import Part
    from agentkit_core.content import TextPart

    seen: list[Verdict] = []
    model = ScriptedModel(["ok"])
    image = ImagePart(data=b"\x89PNG", media_type="image/png")
    audio = AudioPart(b"RIFF", "audio/wav")
    task: list[str | Part] = ["my secret", image, TextPart(" plan"), audio]
    await agent(model, Mask(), verdict_observer=seen.append).run(task)
    sent = model.requests[0].messages[-1]
    assert sent.text == "my [hidden] plan"
    assert sent.content[1:] == (image, audio)  # the parts the guards did not read, kept
    skipped = [v for v in seen if v.rule == "content-parts"]
    assert [(v.hook, v.verdict, v.subject_id, v.reason, v.details) for v in skipped] == [
        (
            "input",
            "allow",
            "message/1",
            "guards read text only: skipped 1 image, 1 audio part(s) unchecked",
            {"skipped": {"image": 1, "audio": 1}},
        )
    ]


async def test_guards_run_in_order_each_on_what_the_previous_left() -> None:
    model = ScriptedModel(["ok"])
    await agent(model, Mask(), Upper()).run("my secret plan")
    assert model.requests[0].messages[-1].text == "MY [HIDDEN] PLAN"


async def test_a_blocked_request_is_never_sent() -> None:
    model = ScriptedModel(["ok"])
    with pytest.raises(GuardBlocked, match=r"guard 'mask' \(product\) blocked the input") as err:
        await agent(model, Mask()).run("a forbidden act")
    assert (err.value.guard, err.value.check, err.value.subject) == ("mask", "input", "message/1")
    assert model.requests == []


async def test_tool_call_arguments_are_not_given_to_guards() -> None:
    model = ScriptedModel(
        [Message.assistant("", [ToolCall("c1", "lookup", '{"key": "secret"}')]), "done"]
    )
    await agent(model, Mask()).run("look it up")
    sent = model.requests[1].messages
    assert sent[2].tool_calls[0].arguments == '{"key": "secret"}'
    assert "value of [hidden]" in sent[3].text  # a tool result's text is guarded


# --------------------------------------------------------------------------- the output


async def test_a_rewritten_answer_replaces_the_message_in_the_transcript() -> None:
    result = await agent(ScriptedModel(["the secret is 42"]), Mask()).run("tell me")
    assert result.output == "the [hidden] is 42"
    assert result.transcript[-1].text == "the [hidden] is 42"


async def test_a_blocked_answer_ends_the_run_naming_the_guard() -> None:
    with pytest.raises(
        GuardBlocked, match=r"guard 'mask' \(product\) blocked the output at turn/1"
    ):
        await agent(ScriptedModel(["a forbidden answer"]), Mask()).run("tell me")


async def test_a_streamed_answer_is_guarded_as_it_completes() -> None:
    events = [e async for e in agent(ScriptedModel(["the secret"]), Mask()).run_stream("go")]
    assert events[-1].result is not None
    assert events[-1].result.output == "the [hidden]"
    with pytest.raises(GuardBlocked, match="blocked the output"):
        async for _ in agent(ScriptedModel(["forbidden"]), Mask()).run_stream("go"):
            pass


async def test_output_guards_run_before_the_output_guard_hooks() -> None:
    from agentkit_core import Hooks

    seen: list[str] = []

    def hook(message: Message) -> None:
        seen.append(message.text)

    a = Agent(
        "g",
        ScriptedModel(["the secret"]),
        guards=[Mask()],
        hooks=Hooks.of("user", output_guard=hook),
    )
    await a.run("go")
    assert seen == ["the [hidden]"]


# --------------------------------------------------------------------------- the turn


async def test_a_turn_block_stops_the_run_with_the_guard_named() -> None:
    seen: list[Verdict] = []
    model = ScriptedModel([Message.assistant("", [ToolCall("c1", "lookup", '{"key": "k"}')])])
    result = await agent(model, Tired(), verdict_observer=seen.append).run("go")
    assert result.status == "stopped"
    assert result.stop_reason == "guard 'tired' (product): one turn of tools is enough"
    assert [(v.hook, v.verdict, v.subject_id) for v in seen] == [("turn", "block", "turn/1")]


async def test_a_turn_is_recorded_for_the_guards_only_when_one_checks_turns() -> None:
    assert not GuardChain([Mask()]).checks_turns
    assert GuardChain([Mask(), Tired()]).checks_turns
    model = ScriptedModel([Message.assistant("", [ToolCall("c1", "lookup", '{"key": "k"}')])])
    result = await agent(model, Mask(), Tired()).run("go")
    assert result.status == "stopped"
    assert result.stop_reason == "guard 'tired' (product): one turn of tools is enough"


async def test_a_rewrite_from_the_turn_check_is_an_error() -> None:
    model = ScriptedModel([Message.assistant("", [ToolCall("c1", "lookup", '{"key": "k"}')])])
    wrong = Wrong(GuardDecision.rewrite("x", "y"))
    wrong.check_input = Guard.check_input.__get__(wrong)  # type: ignore[method-assign]
    with pytest.raises(HookError, match="answered rewrite to the turn check"):
        await agent(model, wrong).run("go")


# --------------------------------------------------------------------------- bad guards


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("allow", "returned str 'allow', not a GuardDecision"),
        (None, "returned NoneType None, not a GuardDecision"),
        (GuardDecision("maybe"), "answered the action 'maybe'"),  # type: ignore[arg-type]
        (GuardDecision("block"), "answered block without a reason"),
        (GuardDecision("rewrite", 3, "r"), "rewrote to int 3, not a str"),  # type: ignore[arg-type]
    ],
)
async def test_a_wrong_answer_is_an_error_naming_the_guard(answer: Any, problem: str) -> None:
    with pytest.raises(HookError, match=rf"guard 'wrong' \(product\) {problem}") as err:
        await agent(ScriptedModel(["ok"]), Wrong(answer)).run("go")
    assert err.value.plugin == "product"


async def test_a_guard_that_raises_blocks_and_the_choice_is_recorded() -> None:
    seen: list[Verdict] = []
    model = ScriptedModel(["ok"])
    with pytest.raises(GuardBlocked, match="raised RuntimeError: the detector broke; refused"):
        await agent(model, Raises(), verdict_observer=seen.append).run("go")
    assert model.requests == []
    assert seen[-1].verdict == "block"
    assert dict(seen[-1].details) == {"error": "RuntimeError", "fail_open": False}


async def test_a_fail_open_guard_lets_the_text_through_and_says_so() -> None:
    seen: list[Verdict] = []
    chain = GuardChain([Raises()], fail_open=["raises"])
    a = Agent("g", ScriptedModel(["ok"]), "You help.", guards=chain, verdict_observer=seen.append)
    assert (await a.run("go")).output == "ok"
    assert {(v.verdict, v.details["fail_open"]) for v in seen} == {("allow", True)}
    assert "let through (fail open)" in seen[0].reason


@pytest.mark.parametrize("fail_open", ["r", "raises", {"raises": False}, {"r": True}])
async def test_a_fail_open_given_as_a_string_or_a_table_is_refused(fail_open: Any) -> None:
    # "r" was the set of its letters and {"raises": False} of its keys: the guard named "r"
    # then failed open, as did "raises" though the table said False
    class R(Raises):
        name = "r"

    with pytest.raises(ConfigError, match=r"^fail_open= takes a list of guard names") as err:
        GuardChain([Raises(), R()], fail_open=fail_open)
    assert err.value.source == "GuardChain(fail_open=)"
    chain = GuardChain([Raises(), R()], fail_open=[])
    with pytest.raises(GuardBlocked):  # built right, the guard that raises still blocks
        await Agent("g", ScriptedModel(["ok"]), "You help.", guards=chain).run("go")


def test_a_chain_refuses_a_fail_open_name_it_does_not_have_and_a_name_twice() -> None:
    with pytest.raises(ConfigError, match=r"fail_open= names the guard 'redact'.*guards: mask"):
        GuardChain([Mask()], fail_open=["redact"])
    with pytest.raises(ConfigError, match="two guards of the chain are named 'mask'"):
        GuardChain([Mask(), Mask()])
    with pytest.raises(ConfigError, match=r"by name or agentkit_core\.plugin\.Guard objects"):
        GuardChain(["mask"])  # type: ignore[list-item]


# --------------------------------------------------------------------------- plugins and the kit


class Plugin:
    def __init__(self, name: str, *guards: str, priority: int = 0) -> None:
        self.AGENTKIT_NAME = name
        self.AGENTKIT_PRIORITY = priority
        self.guards = guards

    @hookimpl
    def agentkit_register_guards(self, register: Any) -> None:
        for name in self.guards:
            register(name, Mask if name.startswith("mask") else Upper)


def manager() -> PluginManager:
    return PluginManager(
        entry_points=False,
        plugins=[Plugin("late", "upper"), Plugin("early", "mask", "mask-2", priority=5)],
    )


def test_the_chain_is_in_plugin_order_then_the_products() -> None:
    class Mine(Guard):
        name = "mine"

    chain = build_guard_chain([Mine(), "upper", "mask-2", "mask"], manager=manager())
    assert chain.names == ["mask", "mask-2", "upper", "mine"]
    assert [e.plugin for e in chain.guards] == ["early", "early", "late", "product"]


def test_an_unknown_guard_lists_the_installed_ones() -> None:
    with pytest.raises(UnknownNameError, match=r"no guard named 'redcat'.*mask, mask-2, upper"):
        Kit(model="test", guards=["redcat"], manager=manager())
    with pytest.raises(ConfigError, match="guard_options= names the guard 'upper'"):
        Kit(model="test", guards=["mask"], guard_options={"upper": {}}, manager=manager())
    with pytest.raises(ConfigError, match="guard_fail_open= needs guards="):
        Kit(model="test", guard_fail_open=["mask"], manager=manager())


def test_a_part_a_guard_blocks_is_an_error_from_the_kit() -> None:
    with pytest.raises(ConfigError, match=r"guard 'mask' refused instructions/product: a forbid"):
        Kit(model="test", instructions="a forbidden prompt", guards=["mask"], manager=manager())


async def test_each_part_is_guarded_before_the_join_and_recorded_as_sent(pm) -> None:
    seen: list[Verdict] = []
    model = ScriptedModel(["ok"])
    kit = Kit(
        model=model,
        instructions="keep the secret",
        guards=["mask"],
        manager=manager(),
        verdict_observer=seen.append,
    )
    assert kit.config().instructions == "keep the [hidden]"
    assert [(p.id, p.text) for p in kit.parts()] == [("product", "keep the [hidden]")]
    async with Sessions(await open_session_store("memory://", manager=pm)) as sessions:
        recorder = await Recorder.start(sessions, parts=kit.parts_for)
        config = kit.config()
        run = Agent.from_config(config, recorder=recorder)
        await run.run("hello")
        await recorder.flush()
        items = await sessions.path(recorder.session_id)
    assert model.requests[0].messages[0].text == "keep the [hidden]"
    parts = [i.body for i in items if i.kind == "instructions"]
    assert parts and "secret" not in str(parts)
    verdicts = [i.body for i in items if i.kind == "verdict"]
    assert [
        (b["hook"], b["decision"], b["subject_id"], b["rule"], b["source"]) for b in verdicts
    ] == [("input", "rewrite", "instructions/product", "mask", "early")]
    assert [v.subject_id for v in seen] == ["instructions/product"]


def test_the_budget_is_measured_before_the_guards() -> None:
    class Longer(Guard):
        name = "longer"

        def check_input(self, inp: GuardInput) -> GuardDecision:
            if inp.whole:
                return GuardDecision.ALLOW
            return GuardDecision.rewrite(inp.text + " (checked)", "noted")

    kit = Kit(model="test", instructions="x" * 10, instruction_budget=10, guards=[Longer()])
    assert kit.config().instructions == "x" * 10 + " (checked)"


async def test_a_message_is_checked_once_a_run_and_its_rewrite_recorded_once() -> None:
    seen: list[Verdict] = []
    model = ScriptedModel(
        [Message.assistant("", [ToolCall("c1", "lookup", '{"key": "k"}')]), "done"]
    )
    await agent(model, Mask(), verdict_observer=seen.append).run("my secret plan")
    assert [m.text for m in model.requests[1].messages[:2]] == ["You help.", "my [hidden] plan"]
    assert [(v.hook, v.subject_id) for v in seen] == [("input", "message/1")]


class Counting(Guard):
    def __init__(self, name: str, measures: bool, only: bool = False) -> None:
        self.name = name
        self.measures_request = measures  # type: ignore[misc]
        self.measures_only = only  # type: ignore[misc]
        self.asked: list[tuple[int, bool, int]] = []

    def check_input(self, inp: GuardInput) -> GuardDecision:
        self.asked.append((inp.index, inp.first, len(inp.messages)))
        return GuardDecision.ALLOW


async def test_only_a_guard_measuring_the_request_is_asked_its_first_message_each_time() -> None:
    whole, text = Counting("whole", True), Counting("text", False)
    only = Counting("only", True, only=True)  # declares it allows every text but the first
    model = ScriptedModel(
        [Message.assistant("", [ToolCall("c1", "lookup", '{"key": "k"}')]), "done"]
    )
    await agent(model, whole, text, only).run("hi")
    assert whole.asked == [(0, True, 2), (1, False, 2), (0, True, 4), (3, False, 4)]
    assert text.asked == [(0, True, 2), (1, False, 2), (3, False, 4)]
    assert only.asked == [(0, True, 2), (0, True, 4)]


def test_a_kit_file_names_its_guards(tmp_path: Any) -> None:
    path = tmp_path / "agentkit.toml"
    path.write_text(
        '[kit]\nmodel = "test"\nguards = ["upper", "mask"]\nguard_fail_open = ["upper"]\n'
        "[kit.guard_options.mask]\n",
        encoding="utf-8",
    )
    chain = Kit.from_file(path, manager=manager()).config().guards
    assert chain is not None and chain.names == ["mask", "upper"]
    assert [e.fail_open for e in chain.guards] == [False, True]


class _Seen(Guard):
    """Measures the request (asked at its first message every time) and keeps what it saw."""

    name = "seen"
    measures_request = True

    def __init__(self) -> None:
        self.views: list[tuple[Message, ...]] = []

    def check_input(self, inp: GuardInput) -> GuardDecision:
        if inp.first:
            self.views.append(tuple(inp.messages))
        return GuardDecision.ALLOW


_step = st.tuples(
    st.sampled_from(["user", "tool", "assistant", "fork"]),
    st.sampled_from(["", "plain", "a secret", "secret secret", "Loud", "x"]),
)


class _Run:
    """A run's context, as far as the chain needs one: where verdicts go."""

    def __init__(self) -> None:
        self.verdicts: list[Verdict] = []

    def report_verdict(self, verdict: Verdict) -> None:
        self.verdicts.append(verdict)


@settings(max_examples=150, deadline=None)
@given(st.lists(_step, min_size=1, max_size=14), st.booleans())
def test_a_run_sends_what_checking_every_request_whole_sends(
    steps: list[tuple[str, str]], instructed: bool
) -> None:
    """Within a run the chain checks only what is new and shares views between guards that
    rewrote nothing; every request it sends, and every view a guard sees, is still what a
    chain that checks each request whole (outside a run) sends and shows."""
    kept, whole = _Seen(), _Seen()
    run = GuardChain([Mask(), kept, Upper()])
    fresh = GuardChain([Mask(), whole, Upper()])
    ctx: Any = _Run()
    transcript = [Message.system("You help with the secret.")] if instructed else []
    for role, text in steps:
        if role == "fork":  # another transcript: a compaction or a handoff made a new list
            transcript = [*transcript[:-1], Message.user(text)]
        elif role == "tool":
            transcript.append(Message.tool("c", text))
        else:
            transcript.append(Message(role, text))
        sent = run.check_request(ctx, ModelRequest(TranscriptView(transcript)))
        expected = fresh.check_request(None, ModelRequest(tuple(transcript)))
        assert tuple(sent.messages) == tuple(expected.messages)
        assert kept.views == whole.views


class _Asked(Guard):
    """Rewrites "secret" (not measuring) or keeps every view it is asked with (measuring).

    ``only``: it allows every text but the first's, and declares so (``measures_only``)
    when ``declared``.
    """

    def __init__(self, name: str, measures: bool, only: bool = False, declared: bool = True):
        self.name = name
        self.measures_request = measures  # type: ignore[misc]
        self.only = only
        self.measures_only = only and declared  # type: ignore[misc]
        self.asked: list[tuple[str, int, bool, tuple[Message, ...]]] = []

    def check_input(self, inp: GuardInput) -> GuardDecision:
        self.asked.append((inp.text, inp.index, inp.first, tuple(inp.messages)))
        if self.only and not inp.first:
            return GuardDecision.ALLOW
        if "secret" in inp.text and not self.measures_request:
            return GuardDecision.rewrite(inp.text.replace("secret", "[hidden]"), "hid 1 word")
        return GuardDecision.allow("seen") if "note" in inp.text else GuardDecision.ALLOW


_plain_step = st.tuples(
    st.sampled_from(["user", "tool", "assistant", "fork", "again"]),
    st.one_of(
        st.sampled_from(["", "plain", "a secret", "a note", "x"]),
        st.text("se\u017fcrt \u200b\uff53\u0301\n", max_size=9),  # long s, zero-width, fullwidth
    ),
)


class _Pin(Guard):
    """Rewrites the system message once: every later request of the run takes the full pass."""

    name = "pin"

    def check_input(self, inp: GuardInput) -> GuardDecision:
        if inp.text == "You help.":
            return GuardDecision.rewrite("You help!", "pinned")
        return GuardDecision.ALLOW


@settings(max_examples=150, deadline=None)
@given(st.lists(_plain_step, min_size=1, max_size=14))
def test_the_pass_over_requests_nobody_rewrote_is_the_full_pass(
    steps: list[tuple[str, str]],
) -> None:
    """While no guard rewrites, the chain asks each guard about the new messages without
    building versions or views; on a rewrite it hands over to the full pass. Every request
    sent, every question asked (text, index, first, view) and every verdict is what the full
    pass gives, which a run takes for good once a guard rewrote one of its messages: here a
    last guard that rewrites the system message, which the others never see. A guard
    declaring it only measures is asked less, and nothing else changes."""
    runs = []
    for plain, declared in ((True, True), (False, True), (True, False)):
        guards = [_Asked("a", False), _Asked("m", True), _Asked("o", True, True, declared)]
        guards.append(_Asked("b", False))
        chain = GuardChain([*guards, *([] if plain else [_Pin()])])
        ctx: Any = _Run()
        transcript: list[Message] = [Message.system("You help.")]
        sent = []
        for role, text in steps:
            if role == "fork" and len(transcript) > 1:  # a new list, the system message kept
                transcript = [*transcript[:-1], Message.user(text)]
            elif role == "again" and len(transcript) > 1:  # the same message object again
                transcript.append(transcript[-1])
            elif role == "tool":
                transcript.append(Message.tool("c", text))
            else:
                transcript.append(Message(role if role in ("user", "assistant") else "user", text))
            request = chain.check_request(ctx, ModelRequest(TranscriptView(transcript)))
            sent.append(tuple(request.messages)[1:])
            assert request.messages[0].text == ("You help." if plain else "You help!")
        verdicts = [v for v in ctx.verdicts if v.rule != "pin"]
        runs.append((sent, [g.asked for g in guards], verdicts))
    assert runs[0] == runs[1]
    undeclared = runs[2]  # the same guards, "o" not declaring: only "o" is asked more
    del runs[0][1][2], undeclared[1][2]
    assert runs[0] == undeclared


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 6),
    st.integers(0, 6),
    st.sampled_from(["view", "copy", "tuple", "other"]),
    st.integers(-8, 8),
    st.slices(8),
)
def test_a_view_reads_as_its_tuple_and_tells_what_extends_a_prefix(
    n: int, m: int, prefix_kind: str, index: int, cut: slice
) -> None:
    """The chain's and the guards' reads of a request: an index, a slice, and ``past`` (the
    messages past the last request's, or None when they do not begin with them) are what the
    tuple of the messages gives, for a view of the same list, of a copy, a tuple, or a prefix
    with another message in it."""
    items = [Message.user(str(k)) for k in range(6)]
    view = TranscriptView(items, n)
    whole = tuple(items[:n])
    if -n <= index < n:
        assert view[index] is whole[index]
    else:
        with pytest.raises(IndexError):
            view[index]
    assert view[cut] == whole[cut]
    prefix: Sequence[Message] = {
        "view": lambda: TranscriptView(items, m),
        "copy": lambda: TranscriptView(list(items), m),
        "tuple": lambda: tuple(items[:m]),
        "other": lambda: (*items[: m - 1], Message.user("other"))[:m],
    }[prefix_kind]()
    extends = 0 < m <= n and tuple(prefix) == whole[:m]
    found = past(view, prefix)
    assert (None if found is None else tuple(found)) == (whole[m:] if extends else None)
