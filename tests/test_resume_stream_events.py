"""Agent.resume_stream_events: a held run streamed on with the answers, from its session."""

from __future__ import annotations

import pytest

from agentkit_core import Agent
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import events as ev
from agentkit_core import tool
from agentkit_core.testing import ScriptedModel


@tool
def transfer(amount: int) -> str:
    """Move money."""
    return f"moved {amount}"


def ask(call: ToolCall) -> ToolDecision:
    return ToolDecision.ask("a person approves transfers")


async def test_a_held_run_streams_on_with_its_answers() -> None:
    wants = Message.assistant("", [ToolCall("c1", "transfer", '{"amount": 5}')])
    model = ScriptedModel([wants, "paid"])
    options = {"tools": [transfer], "before_tool_call": ask, "session": "memory://"}
    async with await Kit.open(model=model, **options) as kit:
        agent = Agent.from_config(kit.config())
        held = [e async for e in agent.run_stream_events("pay ann 5")]
        assert isinstance(held[-1], ev.RunSuspended)
        run_id = held[-1].run_id
        resumed = [e async for e in agent.resume_stream_events(run_id, {"c1": True})]
    kinds = [e.kind for e in resumed]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert {e.run_id for e in resumed} == {run_id}
    (answered,) = [e for e in resumed if isinstance(e, ev.ApprovalAnswered)]
    assert answered.call_id == "c1" and answered.approved
    (finished,) = [e for e in resumed if isinstance(e, ev.ToolFinished)]
    assert finished.call_id == "c1" and "moved 5" in str(finished.result)
    assert resumed[-1].result.output == "paid"  # type: ignore[attr-defined]
    seqs = [e.seq for e in resumed]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


async def held_and_resumed(answers: object, decide: object = ask) -> list[ev.RunEvent]:
    """A run held on its transfer, then resumed through its event stream with ``answers``.

    ``decide`` is the before_tool_call hook, asked at the run and again at the resume.
    """
    wants = Message.assistant("", [ToolCall("c1", "transfer", '{"amount": 5}')])
    model = ScriptedModel([wants, "done"])
    options = {"tools": [transfer], "before_tool_call": decide, "session": "memory://"}
    async with await Kit.open(model=model, **options) as kit:
        agent = Agent.from_config(kit.config())
        held = [e async for e in agent.run_stream_events("pay ann 5")]
        assert isinstance(held[-1], ev.RunSuspended)
        assert not [e for e in held if isinstance(e, ev.ToolFinished)]  # held: not ended yet
        return [e async for e in agent.resume_stream_events(held[-1].run_id, answers)]


@pytest.mark.parametrize("answers", [{"c1": False}, None], ids=["refused", "unanswered"])
async def test_a_refused_held_call_ends_in_one_tool_finished(answers: object) -> None:
    resumed = await held_and_resumed(answers)
    kinds = [e.kind for e in resumed]
    assert "tool_started" not in kinds  # a refused call never runs
    (finished,) = [e for e in resumed if isinstance(e, ev.ToolFinished)]
    assert finished.call_id == "c1" and finished.is_error
    assert "refused by a person" in str(finished.result)
    assert kinds.index("approval_answered") < kinds.index("tool_finished")


async def test_an_approved_held_call_starts_and_finishes() -> None:
    resumed = await held_and_resumed({"c1": True})
    calls = [
        (e.kind, e.call_id) for e in resumed if isinstance(e, ev.ToolStarted | ev.ToolFinished)
    ]
    assert calls == [("tool_started", "c1"), ("tool_finished", "c1")]
    kinds = [e.kind for e in resumed]
    assert kinds.index("approval_answered") < kinds.index("tool_started")


async def test_a_held_call_denied_at_resume_ends_in_one_tool_finished() -> None:
    asked: list[str] = []

    def ask_then_deny(call: ToolCall) -> ToolDecision:
        asked.append(call.id)
        if len(asked) == 1:
            return ToolDecision.ask("a person approves transfers")
        return ToolDecision.deny("transfers are closed")

    resumed = await held_and_resumed(None, ask_then_deny)
    assert "tool_started" not in [e.kind for e in resumed]
    (finished,) = [e for e in resumed if isinstance(e, ev.ToolFinished)]
    assert finished.is_error and "transfers are closed" in str(finished.result)
