"""The policy seam: an engine that allows, asks or denies each tool call, naming the rule.

A :class:`PolicyEngine` is what ``Agent(policy=...)`` (and ``Kit(policy=...)``) runs: the agent
asks it about every call before the before_tool_call hooks, folds its decision with theirs (deny
over ask over allow; the engine first, so the product's hooks come last), and offers the model
only the tools the engine does not remove. An engine plugin implements four methods
(:meth:`~PolicyEngine.evaluate`, :meth:`~PolicyEngine.removes`,
:meth:`~PolicyEngine.compile_grant`, and ``name``); this base class keeps everything the
decisions leave behind, the same for every engine:

* **Verdicts**: each decision in a run is reported (``ctx.report_verdict``) under the
  namespace ``"policy"`` with the rule that decided.
* **Deferred approvals**: a call the engine asked about is held per run until
  :meth:`~PolicyEngine.release` turns the approvals a person (or the policy) gave into
  :class:`Approval` values for ``agent.resume``; in another process the held calls are decided
  again, without side effects, from the checkpoint's or the session's pending calls.
* **Grants**: a :class:`Grant` (a skill's ``allowed-tools``, read by the model) adds allow rules
  to one conversation, its *grant scope* (:func:`grant_scope`), until the conversation's next
  user message ends it; a call only an ended grant allowed is refused, naming how to get the
  grant back.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Protocol
from typing import runtime_checkable

from ._approvals import Approval as Approval
from ._errors import ConfigError
from ._hooks import ToolDecision
from ._messages import JSONObject
from ._messages import ToolCall
from ._verdicts import Verdict

if TYPE_CHECKING:
    from ._context import RunContext

#: Who released a call the policy itself decided on release (``Approval.by``).
BY_POLICY = "policy"


def grant_scope(ctx: RunContext) -> str:
    """The conversation ``ctx``'s run belongs to, which is where a grant made in it lives.

    ``ctx.grant_scope`` when a front names its conversations itself; else the session the run
    records into; else the run alone (``"run:<id>"``), so without a session a grant lasts for
    the run that made it and its resumption.
    """
    if ctx.grant_scope:
        return ctx.grant_scope
    if ctx.recorder.enabled:
        return ctx.recorder.session_id
    return f"run:{ctx.run_id}"


#: Entries of a grant an engine would not take, each with the reason.
Refusals = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Deferred:
    """A call the engine asked a person about, held until it is released."""

    call: ToolCall
    decision: ToolDecision
    #: The label of the source the called tool came from, when the engine knew it.
    source: str | None = None


@dataclass(frozen=True, slots=True)
class Grant:
    """Allow rules a source the model read (a skill) asks to add to one conversation.

    ``source`` names the grant (``"skill:release"``); a second grant of one source in one scope
    replaces the first. ``tools`` are the entries as the source wrote them (``"bash(git
    status:*)"``, ``"read_file"``); the engine turns each into a rule or refuses it. A source
    the product does not trust (``trusted`` false, the default) grants nothing. ``digest`` says
    what the grant was made from, so a restart grants it again only if that has not changed.
    ``reread`` tells the model how to get the grant back after it ended. ``scope`` is the
    conversation (:func:`grant_scope`), ``run`` the run whose task the grant belongs to.
    """

    source: str
    tools: tuple[str, ...]
    trusted: bool = False
    digest: str = ""
    reread: str = ""
    scope: str = ""
    run: str = ""


@dataclass(frozen=True, slots=True)
class GrantReport:
    """What an engine did with a :class:`Grant`: the entries it granted and those it refused.

    ``refused`` pairs each entry with the reason. ``error`` is set when nothing was granted
    again after a restart because the source changed or is gone (``replayed`` is true for a
    grant made again from a session's record). ``verdict`` is what was (or would be) recorded.
    """

    grant: Grant
    granted: tuple[str, ...] = ()
    refused: Refusals = ()
    replayed: bool = False
    error: str = ""
    verdict: Verdict | None = None


@runtime_checkable
class Grantor(Protocol):
    """Something that grants when the model reads it (a skills catalogue).

    ``current_grant(source)`` is the grant reading ``source`` would make now (its digest and
    entries as they stand), or None when ``source`` is not this grantor's or is gone: how a
    restart checks that a recorded grant still describes what the model read.
    """

    def current_grant(self, source: str) -> Grant | None: ...


@dataclass(slots=True)
class _Held:
    """A grant in force in one scope, as the engine compiled it."""

    grant: Grant
    rules: object
    granted: tuple[str, ...]
    ended: bool = False


class PolicyEngine(abc.ABC):
    """Decides each tool call, allow, ask or deny, and names the rule that decided.

    Subclass it and implement :meth:`evaluate`, :meth:`removes` and :meth:`compile_grant`;
    set :attr:`name` to the plugin's name (it is the verdicts' ``plugin``). Everything else is
    here: :meth:`check` (a decision in a run, reported and held), :meth:`would` (the same
    decision with no side effect), :meth:`offers`, :meth:`deferred` / :meth:`release` /
    :meth:`forget`, and the grants (:meth:`grant`, :meth:`end_grants`, :meth:`revoke`,
    :meth:`regrant`). One engine serves any number of runs and conversations.
    """

    #: The engine's name in verdicts and decisions (its plugin's).
    name: str = "policy"

    def __init__(self) -> None:
        self._held: dict[str, dict[str, Deferred]] = {}
        self._grants: dict[str, dict[str, _Held]] = {}
        self._labels: dict[str, str] = {}

    # ------------------------------------------------------------------ what an engine implements

    @abc.abstractmethod
    def evaluate(
        self, call: ToolCall, source: str | None, grants: Sequence[object]
    ) -> ToolDecision:
        """Decide ``call`` by the engine's rules and the granted rule sets ``grants``.

        ``source`` is the label of the source the called tool came from (``"tools"``,
        ``"mcp:#1 time"``), or None when it is not known: read a rule that names a source
        cautiously then. ``grants`` are what :meth:`compile_grant` returned for the grants in
        force. Return a ToolDecision whose ``rule`` names the rule that decided (``"default"``
        when none did) and whose ``reason`` says why in words the model and a person read.
        Must be pure: no state changes, no I/O (it also answers :meth:`would`).
        """

    @abc.abstractmethod
    def removes(self, name: str, source: str) -> bool:
        """Whether the tool ``name`` from the source labelled ``source`` is never offered.

        True for a tool a rule denies whatever its arguments (a bare deny). Called for every
        tool every turn: make it cheap.
        """

    @abc.abstractmethod
    def compile_grant(self, grant: Grant) -> tuple[object, tuple[str, ...], Refusals]:
        """``grant``'s entries as this engine's rules: ``(rules, granted, refused)``.

        ``rules`` is whatever :meth:`evaluate` takes in ``grants``; ``granted`` the entries it
        became; ``refused`` each entry it would not take with the reason (an unknown tool, a
        specifier the engine cannot read). Only a trusted grant reaches here.
        """

    # ------------------------------------------------------------------ deciding

    def would(
        self,
        call: ToolCall,
        *,
        source: str | None = None,
        scope: str = "",
    ) -> ToolDecision:
        """The decision :meth:`check` would make on ``call``, with no side effect.

        Nothing is recorded, held or granted. ``source`` defaults to the label the engine last
        saw the tool offered under (:meth:`offers`); ``scope`` is the conversation whose grants
        apply (:func:`grant_scope`).
        """
        if source is None:
            source = self._labels.get(call.name)
        return self._decide(call, source, scope)

    def check(self, ctx: RunContext, call: ToolCall, source: str | None = None) -> ToolDecision:
        """Decide ``call`` in ``ctx``'s run: report the verdict, and hold an ask for release."""
        if source is None:
            source = self._labels.get(call.name)
        decision = self._decide(call, source, grant_scope(ctx))
        ctx.report_verdict(
            Verdict(
                "policy",
                "before_tool_call",
                decision.kind,
                call.name,
                call.id,
                rule=decision.rule,
                plugin=self.name,
                reason=decision.reason,
                tool_source=source or "",
            )
        )
        if decision.kind == "ask":
            self._held.setdefault(ctx.run_id, {})[call.id] = Deferred(call, decision, source)
        return decision

    def offers(self, name: str, source: str) -> bool:
        """Whether the model is offered the tool ``name`` of source ``source`` (not removed).

        The engine remembers the label, so a later decision on a call of ``name`` knows it.
        """
        self._labels[name] = source
        return not self.removes(name, source)

    def _decide(self, call: ToolCall, source: str | None, scope: str) -> ToolDecision:
        held = self._grants.get(scope)
        if not held:
            return self._own(self.evaluate(call, source, ()))
        live = [g.rules for g in held.values() if not g.ended]
        decision = self._own(self.evaluate(call, source, live))
        if decision.kind != "ask":
            return decision
        for g in held.values():
            if g.ended and self.evaluate(call, source, [*live, g.rules]).kind == "allow":
                how = g.grant.reread or f"read {g.grant.source} again"
                return ToolDecision(
                    "deny",
                    f"only the grant of {g.grant.source} allowed {call.name!r}, and it ended at "
                    f"the user's next message; {how} to use it again",
                    self.name,
                    f"ended:{g.grant.source}",
                )
        return decision

    def _own(self, decision: ToolDecision) -> ToolDecision:
        return decision if decision.source else replace(decision, source=self.name)

    # ------------------------------------------------------------------ deferred approvals

    def deferred(
        self, run_id: str, calls: Sequence[ToolCall] | None = None, *, scope: str = ""
    ) -> list[Deferred]:
        """The calls of run ``run_id`` held for a person.

        Without ``calls``, those this engine held in this process. With ``calls`` (the pending
        calls of a checkpoint, ``state["pending"]``, or of a session, ``recorder.state.held``,
        in another process), each is decided again without side effects under ``scope`` and
        those that ask are held now.
        """
        if calls is not None:
            held = {}
            for call in calls:
                source = self._labels.get(call.name)
                decision = self._decide(call, source, scope)
                if decision.kind == "ask":
                    held[call.id] = Deferred(call, decision, source)
            self._held[run_id] = held
        return list(self._held.get(run_id, {}).values())

    def release(
        self,
        run_id: str,
        approvals: Iterable[Approval] = (),
        *,
        calls: Sequence[ToolCall] | None = None,
        scope: str = "",
    ) -> list[Approval]:
        """The answers ``agent.resume(run_id, answers)`` takes, for the calls held in ``run_id``.

        Each approval must name a held call and who gave it (``by``). A held call is decided
        again first: one the policy now denies is refused whatever the approval says (a deny
        is never approved), one it now allows without an approval is released ``by="policy"``,
        and one that still asks and has no approval is left out (the resumed run refuses it).
        ``calls`` and ``scope`` are :meth:`deferred`'s, for another process. The run's held
        calls are forgotten.
        """
        held = {d.call.id: d for d in self.deferred(run_id, calls, scope=scope)}
        given: dict[str, Approval] = {}
        for approval in approvals:
            if not isinstance(approval, Approval):
                raise ConfigError(
                    f"release() takes Approval values, got {type(approval).__name__} "
                    f"{approval!r}; write Approval('call-id', by='human:alice')",
                    value=approval,
                    source="PolicyEngine.release",
                )
            if approval.call not in held:
                raise ConfigError(
                    f"approval of {approval.call!r} names no call held in run {run_id!r}; held: "
                    f"{', '.join(held) or 'none'}",
                    value=approval.call,
                    source="PolicyEngine.release",
                )
            if not approval.by.strip():
                raise ConfigError(
                    f"approval of {approval.call!r} does not say who gave it; the record must: "
                    f"Approval({approval.call!r}, by='human:<name>')",
                    value=approval,
                    source="PolicyEngine.release",
                )
            given[approval.call] = approval
        answers: list[Approval] = []
        for call_id, deferred in held.items():
            now = self._decide(deferred.call, deferred.source, scope)
            answer = given.get(call_id)
            if now.kind == "deny":
                why = f"{now.rule}: {now.reason}" if now.rule else now.reason
                answers.append(Approval(call_id, False, BY_POLICY, f"denied by {why}"))
            elif answer is not None:
                answers.append(answer)
            elif now.kind == "allow":
                answers.append(Approval(call_id, True, BY_POLICY, f"allowed by {now.rule}"))
        self.forget(run_id)
        return answers

    def forget(self, run_id: str) -> None:
        """Drop what the engine keeps for run ``run_id``: its held calls, its run-scoped grants.

        The agent calls it when a run ends without a call held.
        """
        self._held.pop(run_id, None)
        self._grants.pop(f"run:{run_id}", None)

    # ------------------------------------------------------------------ grants

    def grant(self, grant: Grant, ctx: RunContext | None = None) -> GrantReport:
        """Add ``grant``'s rules to its scope (replacing that source's earlier grant there).

        An untrusted grant adds nothing and refuses every entry. The grant verdict is reported
        through ``ctx`` when given (under ``"policy"``, hook ``"grant"``, its details holding
        the entries granted and refused, the digest and how to read it again).
        """
        report, rules = self._compile(grant)
        scope = self._grants.setdefault(grant.scope, {})
        if report.granted:
            scope[grant.source] = _Held(grant, rules, report.granted)
        else:
            scope.pop(grant.source, None)
        if ctx is not None and report.verdict is not None:
            ctx.report_verdict(report.verdict)
        return report

    def _compile(self, grant: Grant) -> tuple[GrantReport, object]:
        if grant.trusted:
            rules, granted, refused = self.compile_grant(grant)
        else:
            why = (
                f"{grant.source} is not trusted: the product must trust where it came from "
                "before its allowed-tools grant anything"
            )
            rules, granted, refused = None, (), tuple((t, why) for t in grant.tools)
        details: JSONObject = {
            "tools": list(granted),
            "refused": [{"entry": t, "reason": r} for t, r in refused],
            "digest": grant.digest,
            "reread": grant.reread,
        }
        reason = f"granted {', '.join(granted) or 'nothing'}"
        if refused:
            reason += f"; refused {', '.join(t for t, _ in refused)}"
        verdict = Verdict(
            "policy",
            "grant",
            "allow" if granted else "deny",
            grant.source,
            grant.digest,
            plugin=self.name,
            reason=reason,
            scope=grant.scope,
            run=grant.run,
            details=details,
        )
        return GrantReport(grant, granted, refused, verdict=verdict), rules

    def grants(self, scope: str) -> list[tuple[Grant, tuple[str, ...], bool]]:
        """The grants ``scope`` holds: each with the entries granted and whether it ended."""
        return [(g.grant, g.granted, g.ended) for g in self._grants.get(scope, {}).values()]

    def end_grants(self, scope: str, run: str, ctx: RunContext | None = None) -> list[Verdict]:
        """End the grants of ``scope`` made for another run than ``run``: a user message came.

        An ended grant no longer allows anything; a call only it would have allowed is refused
        with a reason naming how to read it again, until a new grant of its source replaces it.
        Returns the ``revoke`` verdicts, reported through ``ctx`` when given.
        """
        ended = []
        for held in self._grants.get(scope, {}).values():
            if not held.ended and held.grant.run != run:
                held.ended = True
                ended.append(self._revoked(held.grant, "ended at the user's next message"))
        return self._report(ended, ctx)

    def revoke(
        self, scope: str, source: str | None = None, ctx: RunContext | None = None
    ) -> list[Verdict]:
        """Remove the grants of ``scope`` (only ``source``'s, when given); a front ends one.

        Unlike an ended grant, a revoked one is forgotten. Returns the ``revoke`` verdicts,
        reported through ``ctx`` when given.
        """
        held = self._grants.get(scope, {})
        names = [source] if source is not None else list(held)
        gone = [held.pop(n) for n in names if n in held]
        if not held:
            self._grants.pop(scope, None)
        return self._report([self._revoked(g.grant, "revoked") for g in gone], ctx)

    def _revoked(self, grant: Grant, reason: str) -> Verdict:
        return Verdict(
            "policy",
            "revoke",
            "revoke",
            grant.source,
            grant.digest,
            plugin=self.name,
            reason=reason,
            scope=grant.scope,
        )

    @staticmethod
    def _report(verdicts: list[Verdict], ctx: RunContext | None) -> list[Verdict]:
        if ctx is None:
            return verdicts
        return [ctx.report_verdict(v) for v in verdicts]

    def regrant(
        self,
        records: Iterable[Verdict],
        current: Callable[[str], Grant | None],
        *,
        scope: str,
    ) -> list[GrantReport]:
        """Grant again, after a restart, what the session's record says was granted.

        ``records`` are the grant verdicts in force on the session's path
        (``recorder.state.grants``); ``current(source)`` is the grant reading that source would
        make now (a :class:`Grantor`'s ``current_grant``). A record is granted again, for its
        own run and nothing wider than it was, only when the source is still there, still
        trusted and its digest unchanged; otherwise nothing is granted and the report's
        ``error`` says why, with a ``deny`` verdict to record. A replayed grant records nothing
        new: its verdict is already on the path.
        """
        reports = []
        for record in records:
            now = current(record.subject)
            tools = record.details.get("tools", ())
            recorded = (
                tuple(t for t in tools if isinstance(t, str))
                if isinstance(tools, (list, tuple))
                else ()
            )
            grant = Grant(
                record.subject,
                recorded,
                trusted=now is not None and now.trusted,
                digest=record.subject_id,
                reread=now.reread if now is not None else "",
                scope=scope,
                run=record.run,
            )
            if now is None:
                error = f"{record.subject} is gone, so its grant was not made again"
            elif now.digest != record.subject_id:
                error = (
                    f"{record.subject} changed since it was read (digest {record.subject_id[:12]}"
                    f" then, {now.digest[:12]} now), so its grant was not made again; reading "
                    "it again grants by what it says now"
                )
            elif not now.trusted:
                error = f"{record.subject} is no longer trusted, so its grant was not made again"
            else:
                narrowed = replace(grant, tools=tuple(t for t in recorded if t in now.tools))
                report, rules = self._compile(narrowed)
                if report.granted:
                    self._grants.setdefault(scope, {})[grant.source] = _Held(
                        narrowed, rules, report.granted
                    )
                reports.append(replace(report, replayed=True, verdict=None))
                continue
            verdict = Verdict(
                "policy",
                "grant",
                "deny",
                record.subject,
                now.digest if now is not None else "",
                plugin=self.name,
                reason=error,
                scope=scope,
                run=record.run,
                details={"tools": [], "regrant": True},
            )
            reports.append(GrantReport(grant, replayed=True, error=error, verdict=verdict))
        return reports
