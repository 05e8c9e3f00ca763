"""Answers to held tool calls: the one gate every way of resuming a run passes through.

A run suspends when the policy or a before_tool_call hook answers *ask* for a call. A person's
answer then settles that call, and only that call: a call they denied stays denied whatever
an answer says, one they allowed needs no answer, and an id the run does not hold names
nothing. :meth:`Approval.checked` is the gate: ``Agent.resume`` (and so a session's resume and
``agentkit run --resume --approve``) and a durable executor's ``approve`` pass every answer
through it before anything of the run moves; :func:`settle` then settles each held call once
the policy and hooks decided it again.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import TypeAlias

from ._errors import ApprovalRefused
from ._errors import ConfigError
from ._hooks import ToolDecision
from ._messages import ToolCall
from ._verdicts import Verdict

if TYPE_CHECKING:
    from ._context import RunContext
    from ._policy import PolicyEngine


@dataclass(frozen=True, slots=True)
class Approval:
    """An answer to a held call: run it (``approved``) or refuse it, and who said so.

    ``by`` names who decided, in the record's words: ``"human:alice"`` for a person,
    ``"policy"`` for the policy engine releasing a call it now decides itself. ``reason`` is
    what the model sees when the call is refused.
    """

    call: str
    approved: bool = True
    by: str = ""
    reason: str = ""

    def __post_init__(self) -> None:
        # an answer is read by what it says, never by truthiness: "false" is no yes
        if not isinstance(self.approved, bool):
            raise _unclear(self.call, self.approved)
        wrong = [
            f"{name}={value!r}"
            for name, value in (("call", self.call), ("by", self.by), ("reason", self.reason))
            if not isinstance(value, str)
        ]
        if wrong:
            raise ConfigError(f"Approval({', '.join(wrong)}): call, by and reason are text")

    @classmethod
    def checked(
        cls,
        approvals: Answers,
        held: Sequence[ToolCall],
        *,
        run_id: str,
        decisions: Mapping[str, str] | None = None,
        source: str = "Approval.checked",
    ) -> dict[str, Approval]:
        """The answers, in any shape ``Agent.resume`` takes, by call id, once checked.

        ``held`` are the run's pending calls and ``decisions`` what the run decided on each,
        by id (``"ask"``, ``"allow"``, ``"deny"``; without it every call in ``held`` is one
        waiting on an ask). An answer for any call but one waiting on an ask is an
        :class:`ApprovalRefused` naming the call and its verdict.
        """
        answers = answers_of(approvals)
        decided = decisions if decisions is not None else {}
        ids = {call.id for call in held}
        refused = {}
        for call_id in answers:
            verdict = decided.get(call_id, "ask") if call_id in ids else "unknown"
            if verdict != "ask":
                refused[call_id] = verdict
        if refused:
            raise _refusal(run_id, refused, held, decided, source)
        return answers


#: The shapes of answers ``Agent.resume`` takes: a mapping of call id to True/False, the
#: approved ids, or :class:`Approval` values.
Answers: TypeAlias = "Mapping[str, bool] | Iterable[str | Approval] | Approval | None"


def answers_of(approvals: Answers) -> dict[str, Approval]:
    """Answers in any of their shapes as one Approval per call id (not checked against a run).

    A call both approved and refused is a ConfigError: which was meant is unclear.
    """
    if approvals is None:
        return {}
    if isinstance(approvals, str | Approval):
        approvals = [approvals]
    if isinstance(approvals, Mapping):
        return {k: Approval(k, v) for k, v in approvals.items()}
    out: dict[str, Approval] = {}
    for given in approvals:
        answer = given if isinstance(given, Approval) else Approval(given)
        known = out.get(answer.call)
        if known is not None and known.approved != answer.approved:
            # which one was meant is unclear: neither is read (a later yes never beats a no)
            raise ConfigError(
                f"call {answer.call!r} is both approved and refused in one set of answers; "
                "answer it once: approve it or refuse it",
                value=answer.call,
                source="approvals",
            )
        out[answer.call] = answer
    return out


def _unclear(call: object, answer: object) -> ConfigError:
    return ConfigError(
        f"the answer for call {call!r} is {answer!r} ({type(answer).__name__}), which says "
        "neither yes nor no: answer True to run the call or False to refuse it"
    )


def _refusal(
    run_id: str,
    refused: Mapping[str, str],
    held: Sequence[ToolCall],
    decisions: Mapping[str, str],
    source: str,
) -> ApprovalRefused:
    names = {call.id: call.name for call in held}
    waiting = [call.id for call in held if decisions.get(call.id, "ask") == "ask"]
    parts = []
    for call_id, verdict in sorted(refused.items()):
        if verdict == "unknown":
            parts.append(f"{call_id!r} is not a call run {run_id!r} holds for approval")
        elif verdict == "deny":
            parts.append(
                f"{call_id!r} (tool {names[call_id]!r}) was denied, and a deny is never approved"
            )
        else:
            parts.append(f"{call_id!r} (tool {names[call_id]!r}) was allowed without asking")
    return ApprovalRefused(
        f"answers refused for run {run_id!r}: {'; '.join(parts)}. Only a call waiting on an ask "
        f"takes an answer; waiting: {', '.join(waiting) or 'none'}. Nothing of the run changed: "
        "answer the waiting calls only",
        refused=dict(refused),
        source=source,
    )


def refusal_verdicts(
    refused: ApprovalRefused, answers: Mapping[str, Approval], held: Sequence[ToolCall]
) -> list[Verdict]:
    """The ``approval`` verdicts that put each refused answer on the record."""
    names = {call.id: call.name for call in held}
    return [
        Verdict(
            "approval",
            "approval",
            "refused",
            names.get(call_id, ""),
            call_id,
            reason=f"an answer for a call whose verdict is {verdict}",
            by=answers[call_id].by or "person",
        )
        for call_id, verdict in sorted(refused.refused.items())
    ]


def decided_again(policy: PolicyEngine | None, call: ToolCall, scope: str) -> ToolDecision:
    """The policy's decision on an answered call now, with no side effect: a deny, or an ask.

    The person answered the ask the call was held on; what can have changed since is the
    policy (a rule added, a grant ended), and its deny outweighs the answer.
    """
    if policy is not None:
        now = policy.would(call, scope=scope)
        if now.kind == "deny":
            return now if now.source else replace(now, source=policy.name)
    return _ASKED


_ASKED = ToolDecision("ask", "held for approval")
_NO_ANSWER = ToolDecision("deny", "refused by a person", "approval")


def settle(
    ctx: RunContext, call: ToolCall, now: ToolDecision, answer: Approval | None
) -> ToolDecision | None:
    """What a held call comes to when its run resumes: None runs it, a deny refuses it.

    ``now`` is the decision on the call made again at resume: a deny stands whatever
    ``answer`` says; otherwise the answer decides, and with no answer an ask is refused and
    an allow runs. Each answer is reported as an ``approval`` verdict.
    """
    if answer is None:
        if now.kind != "ask":
            return None if now.kind == "allow" else now
        ctx.report_verdict(
            Verdict("approval", "approval", "deny", call.name, call.id, reason="no approval given")
        )
        return _NO_ANSWER
    by = answer.by or "person"
    if now.kind == "deny":
        why = f"{now.source or 'a hook'}: {now.reason or 'no reason given'}"
        reason = f"denied again at resume ({why}); an approval does not lift a deny"
        ctx.report_verdict(
            Verdict("approval", "approval", "deny", call.name, call.id, reason=reason, by=by)
        )
        return now
    approved = "allow" if answer.approved else "deny"
    ctx.report_verdict(
        Verdict("approval", "approval", approved, call.name, call.id, reason=answer.reason, by=by)
    )
    if answer.approved:
        return None
    if answer.by or answer.reason:
        return ToolDecision("deny", answer.reason or f"refused by {answer.by}", "approval")
    return _NO_ANSWER
