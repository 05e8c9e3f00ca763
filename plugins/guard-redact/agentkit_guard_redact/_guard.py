"""RedactGuard: core's detectors run over every part, request message and answer."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from agentkit_core import PII_DETECTORS
from agentkit_core import ConfigError
from agentkit_core import Guard
from agentkit_core import GuardDecision
from agentkit_core import GuardInput
from agentkit_core import Message
from agentkit_core import redact_pii


class RedactGuard(Guard):
    """Replaces each personal datum or secret with ``[redacted <kind>]``.

    ``kinds`` picks the detectors (default: all of ``PII_DETECTORS``: ``api key``, ``card``,
    ``iban``, ``email``, ``phone``), applied in that order. ``input`` and ``output`` say which
    checks redact. Only text is redacted: a tool call's arguments are never given to a guard.
    The reason counts what was replaced by kind (``"redacted 1 email, 2 card"``), never a
    value. A redaction is settled: the placeholders match no detector, so a second pass
    changes nothing.

    Redacting is a pure function of the text, so the guard keeps the last ``cache`` results:
    a conversation's earlier messages, checked again on every request, cost a lookup.
    """

    name = "redact"

    def __init__(
        self,
        kinds: Sequence[str] | None = None,
        *,
        input: bool = True,
        output: bool = True,
        cache: int = 1024,
    ) -> None:
        chosen = list(PII_DETECTORS) if kinds is None else list(kinds)
        unknown = [k for k in chosen if k not in PII_DETECTORS]
        if isinstance(kinds, str) or unknown or not chosen:
            raise ConfigError(
                f"guard 'redact': kinds={kinds!r} must be a non-empty list of "
                f"{', '.join(map(repr, PII_DETECTORS))}"
                + (f" ({unknown[0]!r} is none of them)" if unknown else ""),
                value=kinds,
                source="guard_options['redact']",
            )
        self.detectors = tuple(PII_DETECTORS[k] for k in PII_DETECTORS if k in chosen)
        self.input = input
        self.output = output
        self._cache: OrderedDict[str, GuardDecision] = OrderedDict()
        self._size = cache

    def redact(self, text: str) -> GuardDecision:
        """Allow ``text`` when it holds nothing to hide, else rewrite it redacted."""
        found = self._cache.get(text)
        if found is not None:
            self._cache.move_to_end(text)
            return found
        out = redact_pii(text, self.detectors)
        decision = (
            GuardDecision.rewrite(out.text, f"redacted {out.summary()}")
            if out.changed
            else GuardDecision.ALLOW
        )
        if self._size:
            self._cache[text] = decision
            if len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return decision

    def check_input(self, inp: GuardInput) -> GuardDecision:
        """Redact an instruction part or a message of the request."""
        return self.redact(inp.text) if self.input else GuardDecision.ALLOW

    def check_output(self, message: Message) -> GuardDecision:
        """Redact an answer."""
        return self.redact(message.text) if self.output else GuardDecision.ALLOW

    def __repr__(self) -> str:
        kinds = [d.kind for d in self.detectors]
        return f"<RedactGuard kinds={kinds} input={self.input} output={self.output}>"
