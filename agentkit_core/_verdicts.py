"""Verdicts: one record of a decision, whoever made it, and the one observer that sees them.

A policy engine deciding a tool call, a person approving one, a contested hook's fold, a guard
checking a part: each is a :class:`Verdict`, recorded in the conversation's session (a
``verdict`` item, through :meth:`Recorder.record_verdict`) and handed to the run's verdict
observer. :func:`report_verdict` does both, so every layer reports the same way and a front
sees policy, guard and approval verdicts through one callback.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Any
from typing import Final

from ._errors import HookError
from ._messages import JSONObject
from ._messages import JSONValue

if TYPE_CHECKING:
    from ._context import RunContext
    from ._recorder import Recorder

#: The hooks whose verdicts are about one tool call: their subject is the tool's name and their
#: subject id the call's id (``tool`` and ``call`` in the recorded body).
CALL_HOOKS: Final = frozenset({"before_tool_call", "approval"})


@dataclass(frozen=True, slots=True)
class Verdict:
    """One decision: who decided what about which subject, by which rule, and who approved.

    ``namespace`` says which layer decided: ``"policy"`` (a policy engine), ``"guard"``,
    ``"approval"`` (a person or a policy releasing a held call), ``"hook"`` (the fold of a
    contested hook). ``hook`` is the point it was decided at (``"before_tool_call"``,
    ``"approval"``, ``"should_stop_after_turn"``, ``"grant"``, a guard's check...), ``verdict``
    what was decided (``"allow"``, ``"ask"``, ``"deny"``; ``"stop"``; a guard's own words).
    ``subject`` is what it was about, a tool's name, a guard's check or a grant's source, and
    ``subject_id`` which one, a call's id or a part's id. ``rule`` is the rule or guard that
    decided, ``plugin`` the plugin it belongs to, ``by`` who approved (``"human:alice"``,
    ``"policy"``). ``tool_source`` is the label of the source a called tool came from,
    ``scope`` the conversation a grant belongs to, ``run`` the run it was decided in (filled in
    when reported in a run), ``details`` anything else the decider wants on the record.
    """

    namespace: str
    hook: str
    verdict: str
    subject: str = ""
    subject_id: str = ""
    rule: str = ""
    plugin: str = ""
    reason: str = ""
    by: str = ""
    tool_source: str = ""
    scope: str = ""
    run: str = ""
    details: Mapping[str, JSONValue] = field(default_factory=dict)

    @property
    def about_call(self) -> bool:
        """Whether the subject is one tool call (its tool's name and the call's id)."""
        return self.hook in CALL_HOOKS

    def to_body(self) -> JSONObject:
        """The ``verdict`` item's body (``docs/sessions.md``); the recorder adds ``run``.

        ``source`` is the plugin, as in every verdict body; a tool call's subject is written
        as ``tool`` and ``call``, any other as ``subject`` and ``subject_id``. Empty optional
        fields are left out.
        """
        body: JSONObject = {
            "namespace": self.namespace,
            "hook": self.hook,
            "decision": self.verdict,
            "reason": self.reason,
            "source": self.plugin,
            "rule": self.rule,
        }
        names = ("tool", "call") if self.about_call else ("subject", "subject_id")
        for key, value in zip(names, (self.subject, self.subject_id), strict=True):
            if value:
                body[key] = value
        for key in ("by", "tool_source", "scope"):
            value = getattr(self, key)
            if value:
                body[key] = value
        if self.details:
            body["details"] = dict(self.details)
        return body

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Verdict:
        """A verdict read back from an item's body (older bodies have no ``namespace``)."""

        def text(key: str) -> str:
            value = body.get(key)
            return value if isinstance(value, str) else ""

        details = body.get("details")
        return cls(
            namespace=text("namespace") or "hook",
            hook=text("hook"),
            verdict=text("decision"),
            subject=text("tool") or text("subject"),
            subject_id=text("call") or text("subject_id"),
            rule=text("rule"),
            plugin=text("source"),
            reason=text("reason"),
            by=text("by"),
            tool_source=text("tool_source"),
            scope=text("scope"),
            run=text("run"),
            details=dict(details) if isinstance(details, Mapping) else {},
        )


#: ``observer(verdict)``: told every verdict a run (or a kit outside a run) reports, after it
#: was recorded. Its return value is ignored. (The class itself, not its name: the alias is
#: published in another door than ``Verdict``, where the name would not resolve.)
VerdictObserver = Callable[[Verdict], object]


def report_verdict(
    verdict: Verdict,
    *,
    ctx: RunContext | None = None,
    recorder: Recorder | None = None,
    observer: VerdictObserver | None = None,
) -> Verdict:
    """Record ``verdict`` and hand it to the observer; returns it as recorded.

    In a run, pass ``ctx``: its recorder and its verdict observer are used, and the verdict is
    stamped with the run's id. Outside a run (a kit granting again after a restart), pass the
    ``recorder`` and ``observer`` instead. An observer that raises is reported as a
    :class:`HookError` naming it: a product's view of the verdicts failing is a bug to see, not
    one to swallow.
    """
    if ctx is not None:
        if not verdict.run:
            verdict = replace(verdict, run=ctx.run_id)
        recorder = ctx.recorder if recorder is None else recorder
        observer = ctx.verdict_observer if observer is None else observer
    if recorder is not None:
        recorder.record_verdict(ctx, verdict)
    if ctx is not None and ctx.trace.events is not None:
        ctx.trace.events.verdict(verdict, None if recorder is None else recorder.last_id)
    if observer is not None:
        try:
            observer(verdict)
        except Exception as exc:
            name = getattr(observer, "__qualname__", None) or type(observer).__qualname__
            raise HookError(
                f"the verdict observer {name} raised {type(exc).__name__}: {exc} (on a "
                f"{verdict.namespace} verdict {verdict.verdict!r} about {verdict.subject!r})",
                plugin="user",
                hook="verdict_observer",
            ) from exc
    return verdict
