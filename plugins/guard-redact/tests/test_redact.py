"""The redaction guard in a kit: parts, requests and answers redacted, verdicts recorded."""

from __future__ import annotations

import string
from pathlib import Path

import agentkit_guard_redact
import pytest
from agentkit_guard_redact import RedactGuard
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core.plugin import PII_DETECTORS
from agentkit_core.plugin import GuardInput
from agentkit_core.plugin import InstructionPart
from agentkit_core.plugin import iban_valid
from agentkit_core.plugin import luhn_valid
from agentkit_core.testing import ScriptedModel

EMAIL = "jane.doe@example.org"
CARD = "4111 1111 1111 1111"


def manager() -> PluginManager:
    pm = PluginManager(entry_points=False)
    pm.register(agentkit_guard_redact, name="redact")
    return pm


async def test_a_kit_redacts_parts_requests_and_answers_and_records_no_value(
    tmp_path: Path,
) -> None:
    import agentkit_session_sqlite

    pm = manager()
    pm.register(agentkit_session_sqlite, name="session-sqlite")
    model = ScriptedModel([f"sure, I wrote to {EMAIL}"])
    async with await Kit.open(
        model=model,
        instructions=f"Escalate to {EMAIL}.",
        guards=["redact"],
        manager=pm,
        session=f"sqlite:///{tmp_path / 'sessions.db'}",
    ) as kit:
        assert kit.parts()[0].text == "Escalate to [redacted email]."
        result = await Agent.from_config(kit.config()).run(f"my card is {CARD}")
        await kit.recorder.flush()
        items = await kit._sessions.path(kit.session_id)  # type: ignore[union-attr]
    sent = model.requests[0].messages
    assert [m.text for m in sent] == ["Escalate to [redacted email].", "my card is [redacted card]"]
    assert result.output == "sure, I wrote to [redacted email]"
    verdicts = [i.body for i in items if i.kind == "verdict"]
    assert [(b["hook"], b["subject_id"], b["reason"]) for b in verdicts] == [
        ("input", "instructions/product", "redacted 1 email"),
        ("input", "message/1", "redacted 1 card"),
        ("output", "turn/1", "redacted 1 email"),
    ]
    assert all(b["rule"] == "redact" and b["source"] == "redact" for b in verdicts)
    recorded = str([i.body for i in items if i.kind in ("verdict", "instructions", "response")])
    assert EMAIL not in recorded and CARD not in recorded
    # the session keeps the user's message as typed; the request sent was the redacted one
    assert any(CARD in str(i.body) for i in items if i.kind == "user")


async def test_a_streamed_answer_is_redacted_when_it_completes() -> None:
    agent = Agent("a", ScriptedModel([f"mail {EMAIL}"]), guards=[RedactGuard()])
    events = [e async for e in agent.run_stream("go")]
    assert events[-1].result is not None and events[-1].result.output == "mail [redacted email]"


def test_kinds_pick_the_detectors_and_a_bad_kind_is_refused() -> None:
    guard = RedactGuard(kinds=["email"])
    assert guard.check_input(GuardInput(f"{EMAIL} {CARD}")).text == f"[redacted email] {CARD}"
    with pytest.raises(ConfigError, match="'passport' is none of them"):
        RedactGuard(kinds=["passport"])
    assert RedactGuard(output=False).check_output(Message.assistant(EMAIL)).action == "allow"


# --------------------------------------------------------------------------- properties


def _luhn(body: str) -> str:
    return next(body + d for d in string.digits if luhn_valid(body + d))


def _iban(bban: str) -> str:
    return next(f"GB{c:02d}{bban}" for c in range(2, 99) if iban_valid(f"GB{c:02d}{bban}"))


secrets = st.one_of(
    st.text(string.digits, min_size=15, max_size=15).map(lambda b: _luhn("5" + b)),
    st.text(string.ascii_uppercase, min_size=4, max_size=4).flatmap(
        lambda bank: st.text(string.digits, min_size=14, max_size=14).map(lambda n: _iban(bank + n))
    ),
    st.builds(
        "{}@{}.org".format,
        st.from_regex(r"[a-z]{1,8}", fullmatch=True),
        st.from_regex(r"[a-z]{1,8}", fullmatch=True),
    ),
)
prose = st.text(string.ascii_letters + " ,.;!?\n", max_size=40)


@given(st.lists(st.tuples(prose, secrets), max_size=4), prose)
def test_no_valid_card_iban_or_email_survives_and_redaction_is_settled(
    pieces: list[tuple[str, str]], tail: str
) -> None:
    guard = RedactGuard(cache=0)
    text = "".join(f"{p} {s} " for p, s in pieces) + tail
    decision = guard.check_input(GuardInput(text))
    out = decision.text if decision.action == "rewrite" else text
    for kind in ("card", "iban", "email"):
        assert PII_DETECTORS[kind].find(out) == [], kind
    assert all(s not in out for _, s in pieces)
    assert guard.check_input(GuardInput(out)).action == "allow"  # idempotent


@given(prose)
def test_text_without_pii_is_never_touched_or_lengthened(text: str) -> None:
    decision = RedactGuard(cache=0).check_output(Message.assistant(text))
    assert decision.action == "allow"


@given(st.lists(st.tuples(st.from_regex(r"[a-z]{1,6}", fullmatch=True), prose), max_size=5))
def test_part_ids_are_kept(parts: list[tuple[str, str]]) -> None:
    from agentkit_core import GuardChain

    chain = GuardChain([RedactGuard(cache=0)])
    for pid, text in parts:
        part = InstructionPart(pid, f"{text} {EMAIL}", "product")
        guarded = chain.check_part(part)
        assert (guarded.id, guarded.source) == (pid, "product")
        assert EMAIL not in guarded.text


def test_a_whole_request_of_pii_is_redacted_once_per_text() -> None:
    guard = RedactGuard()
    messages = (Message.system("s"), Message.user(EMAIL))
    first = guard.check_input(GuardInput(EMAIL, "", messages, 1))
    assert guard.check_input(GuardInput(EMAIL, "", messages, 1)) is first  # cached
