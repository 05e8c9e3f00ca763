"""RedactGuard: core's detectors run over every part, request message and answer.

The detectors read a normalised view of the text (``_normal``) and what they find is redacted
in the text as written. A tool result is read together with the request's other tool results,
so a secret split between two results is found, and each result loses its own part of it.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable
from collections.abc import Sequence

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core.plugin import PII_DETECTORS
from agentkit_core.plugin import Detector
from agentkit_core.plugin import Guard
from agentkit_core.plugin import GuardDecision
from agentkit_core.plugin import GuardInput
from agentkit_core.plugin import Redacted

from ._normal import View

#: How much of the request's other tool results is read around a tool result, on each side:
#: a secret split between results is found when its other parts lie within this many
#: characters of the result's edges.
CONTEXT = 1024


class RedactGuard(Guard):
    """Replaces each personal datum or secret with ``[redacted <kind>]``.

    ``kinds`` picks the detectors (default: all of ``PII_DETECTORS``: ``api key``, ``card``,
    ``iban``, ``email``, ``phone``), applied in that order. ``input`` and ``output`` say which
    checks redact. Only text is redacted: a tool call's arguments are never given to a guard.
    The reason counts what was replaced by kind (``"redacted 1 email, 2 card"``), never a
    value. A redaction is settled: the placeholders match no detector, so a second pass
    changes nothing.

    The detectors read the text normalised (NFKC, invisible characters removed, dashes as
    ``-``, whitespace runs as one space), and a match is replaced over the whole span of the
    written text it came from. A tool result of a request is read between the request's other
    tool results (:data:`CONTEXT` characters of them on each side, joined with nothing
    between), and the parts of a match that lie in it are replaced in it.

    Redacting is a pure function of the text (and of the tool results around it), so the guard
    keeps the last ``cache`` results: a conversation's earlier messages, checked again on
    every request, cost a lookup.
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
        self._anchors = _anchors(self.detectors)
        for name, value in (("input", input), ("output", output), ("cache", cache)):
            _checked(name, value)
        self.input = input
        self.output = output
        self._cache: OrderedDict[str | tuple[str, str, str], GuardDecision] = OrderedDict()
        self._size = cache
        #: The last request a tool result was read in, how many of its messages were read
        #: before that result, and the text read from them.
        self._before: tuple[Sequence[Message], int, str] = ((), 0, "")

    def redact(self, text: str, before: str = "", after: str = "") -> GuardDecision:
        """Allow ``text`` when it holds nothing to hide, else rewrite it redacted.

        ``before`` and ``after`` are read with it (joined with nothing between), and only
        ``text``'s own part of a match that runs into them is replaced.
        """
        key = (before, text, after) if before or after else text
        found = self._cache.get(key)
        if found is not None:
            self._cache.move_to_end(key)
            return found
        decision = self._redaction(before, text, after)
        if self._size:
            self._cache[key] = decision
            if len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return decision

    def _redaction(self, before: str, text: str, after: str) -> GuardDecision:
        lo, hi = len(before), len(before) + len(text)
        view = View.of(before + text + after)
        if self._anchors is not None and self._anchors.search(view.text) is None:
            return GuardDecision.ALLOW  # no detector has a place to match: the usual text
        spans: list[tuple[int, int, str]] = []
        counts: dict[str, int] = {}
        for detector in self.detectors:
            found = detector.matches(view.text)
            for match in found:
                mine = [
                    (max(start, lo) - lo, min(end, hi) - lo, detector.placeholder)
                    for start, end in view.source(match.start(), match.end())
                    if start < hi and end > lo
                ]
                if mine:
                    spans += mine
                    counts[detector.kind] = counts.get(detector.kind, 0) + 1
            if found:  # the next detector reads the placeholders, as redact_pii's do
                view = view.edited((m.start(), m.end(), detector.placeholder) for m in found)
        if not spans:
            return GuardDecision.ALLOW
        return GuardDecision.rewrite(
            _replaced(text, spans), f"redacted {Redacted(text, counts).summary()}"
        )

    def check_input(self, inp: GuardInput) -> GuardDecision:
        """Redact an instruction part or a message of the request.

        A tool result is read between the request's other tool results.
        """
        if not self.input:
            return GuardDecision.ALLOW
        messages, index = inp.messages, inp.index
        size = len(messages)
        if 0 <= index < size and messages[index].role == "tool":
            after = ""  # a request's last message (a turn's new result) has nothing after it
            if index + 1 < size:
                after = "".join(_tool_texts(messages[index + 1 :]))[:CONTEXT]
            return self.redact(inp.text, self._read_before(inp), after)
        return self.redact(inp.text)

    def _read_before(self, inp: GuardInput) -> str:
        """The last :data:`CONTEXT` characters of the tool results before the one asked about.

        A request repeats the last one's messages before its new ones, so when it extends the
        request read last time (``GuardInput.extends``) and the result comes no earlier, only
        the tool results after those read are read. Otherwise they are all read, from the end.
        """
        messages, index = inp.messages, inp.index
        known, n, text = self._before
        if n <= index and inp.extends(known):
            new = text
            for message in messages[n:index]:  # a turn's result and call: no comprehension
                if message.role == "tool":
                    new += message.text
            if new is not text:
                text = new[-CONTEXT:]
        else:
            earlier = messages[:index]
            text = "".join(reversed(_tool_texts(reversed(earlier))))[-CONTEXT:]
        self._before = (messages, index, text)
        return text

    def check_output(self, message: Message) -> GuardDecision:
        """Redact an answer."""
        return self.redact(message.text) if self.output else GuardDecision.ALLOW

    def __repr__(self) -> str:
        kinds = [d.kind for d in self.detectors]
        return f"<RedactGuard kinds={kinds} input={self.input} output={self.output}>"


def _checked(name: str, value: object) -> None:
    """Refuse an ``input``, ``output`` (true or false) or ``cache`` (a count) of another kind.

    ``input=None`` would turn redaction off, and ``cache="big"`` fail every check later.
    """
    if name == "cache":
        fine = type(value) is int and value >= 0
        want = "a whole number of at least 0 (how many redacted texts are remembered)"
    else:
        fine = isinstance(value, bool)
        want = "True or False"
    if not fine:
        raise ConfigError(
            f"guard 'redact': {name}={value!r} must be {want}",
            value=value,
            source=f"guard_options['redact']['{name}']",
        )


def _anchors(detectors: Sequence[Detector]) -> re.Pattern[str] | None:
    """One pattern finding a place where any of ``detectors`` may match, or None if unsure.

    Every match of a detector overlaps one of its anchors, so a text in which no anchor is
    found has no match: one search says so, where each detector looks for its own anchors (the
    API-key detector for nineteen literals). None when a detector has no anchor, or one whose
    flags or groups would not mean the same inside the alternation.
    """
    parts: list[str] = []
    for detector in detectors:
        anchor = detector.anchor
        if anchor is None:
            return None
        if isinstance(anchor, tuple):
            parts += map(re.escape, anchor)
        elif anchor.groups or anchor.flags != re.UNICODE:
            return None
        else:
            parts.append(f"(?:{anchor.pattern})")
    return re.compile("|".join(parts))


def _tool_texts(messages: Iterable[Message]) -> list[str]:
    """The texts of the tool results among ``messages``, as many as make :data:`CONTEXT`."""
    texts: list[str] = []
    size = 0
    for message in messages:
        if size >= CONTEXT:
            break
        if message.role == "tool":
            texts.append(message.text)
            size += len(texts[-1])
    return texts


def _replaced(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with each span replaced by its placeholder; overlapping spans make one."""
    pieces: list[str] = []
    at = 0
    for start, end, placeholder in sorted(spans):
        if start < at:  # inside the span just replaced: widen it
            at = max(at, end)
            continue
        pieces += [text[at:start], placeholder]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)
