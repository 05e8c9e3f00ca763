"""The guard chain: guards run in order over what is sent to a model, what comes back, each turn.

A :class:`GuardChain` runs guards (:mod:`._guard`) in order, each seeing what the previous left,
reports every block, every rewrite and every allow that gives a reason as a :class:`Verdict`
under the ``"guard"`` namespace (recorded in the run's session and handed to its verdict
observer), and checks what each guard returns. A guard that raises blocks (fail closed) unless
the chain was told to let that guard fail open; either way the choice is recorded. What a guard
answered about a text is remembered for the run, so nothing is checked (or recorded) twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Final
from weakref import WeakKeyDictionary
from weakref import ref

from ._content import part_text
from ._errors import ConfigError
from ._errors import GuardBlocked
from ._errors import HookError
from ._guard import GUARD_NAMESPACE
from ._guard import ChainedGuard
from ._guard import Guard
from ._guard import GuardCheck
from ._guard import GuardDecision
from ._guard import GuardInput
from ._instructions import InstructionPart
from ._messages import JSONObject
from ._messages import JSONValue
from ._messages import Message
from ._messages import past
from ._messages import starts_with
from ._records import quick_init
from ._verdicts import Verdict

if TYPE_CHECKING:
    from ._context import RunContext
    from ._hooks import TurnInfo
    from ._models import ModelRequest

#: The method of a guard that answers each check.
_METHODS: Final[dict[str, str]] = {c: f"check_{c}" for c in ("input", "output", "turn")}


def _report_skipped(ctx: RunContext, message: Message, index: int) -> None:
    """Say, as a verdict, which parts of ``message`` no guard read: guards read text only."""
    if isinstance(message.content, str):
        return
    counts = Counter(
        str(part.get("type", "?") if isinstance(part, dict) else part.kind)
        for part in message.content
        if part_text(part) is None
    )
    if counts:
        skipped: dict[str, JSONValue] = dict(counts)
        listed = ", ".join(f"{n} {kind}" for kind, n in skipped.items())
        ctx.report_verdict(
            Verdict(
                GUARD_NAMESPACE,
                "input",
                "allow",
                subject="input",
                subject_id=f"message/{index}",
                rule="content-parts",
                plugin="agentkit",
                reason=f"guards read text only: skipped {listed} part(s) unchecked",
                details={"skipped": skipped},
            )
        )


def with_text(message: Message, text: str) -> Message:
    """``message`` with ``text`` as its text (its non-text content parts kept, after it)."""
    if isinstance(message.content, str):
        return replace(message, content=text)
    others = tuple(p for p in message.content if part_text(p) is None)
    return replace(message, content=({"type": "text", "text": text}, *others))


@dataclass
class _RunMemo:
    """What a chain's guards answered in one run, so nothing is checked (or recorded) twice.

    ``parts``: each guard's answer by (guard's position, part id, text). ``messages``: by a
    message's ``id``, the message (kept, so the id stays its own), its versions before each
    guard and after the last (None: every one is the message), and which guards rewrote it
    (bit ``k`` for guard ``k``).
    """

    parts: dict[tuple[int, str, str], GuardDecision] = field(default_factory=dict)
    messages: dict[int, tuple[Message, list[Message] | None, int]] = field(default_factory=dict)
    #: Whether the construction pass's verdicts were reported in this run.
    built_reported: bool = False
    #: The run's last request as the chain saw it, for the next, which mostly repeats it.
    last: _LastRequest | None = None
    #: Or, when no guard rewrote any of its messages, just them (see :data:`_Plain`): every
    #: version and every view is then the messages themselves.
    plain: _Plain | None = None


#: A request no guard rewrote: its messages, how many, the index of the first with text, and
#: (when a guard measures the whole) that message and its text, carried over to the next
#: request, which begins with these messages.
_Plain = tuple[Sequence[Message], int, int, Message | None, str]


@quick_init
@dataclass(frozen=True, slots=True)
class _LastRequest:
    """A request's messages, their versions (before each guard, after the last), the views.

    ``snapshots[k]`` is the request as guard ``k`` saw it, ``sent`` as the chain left it.
    ``rewrites`` has bit ``k`` set when guard ``k`` may have rewritten one of its messages
    (else the view after guard ``k`` is the view before it, shared); ``first`` is the index
    of its first message with text.
    """

    messages: Sequence[Message]
    versions: list[list[Message]]
    snapshots: list[tuple[Message, ...]]
    sent: tuple[Message, ...]
    rewrites: int
    first: int


def _unfolded(plain: _Plain, n: int) -> _LastRequest:
    """A request no guard rewrote (its messages, its first with text) as a :class:`_LastRequest`.

    Every version of each message, and each of the ``n`` guards' views, is the message itself.
    """
    messages, _, first, _, _ = plain
    msgs = tuple(messages)
    return _LastRequest(messages, [[m] * (n + 1) for m in msgs], [msgs] * n, msgs, 0, first)


def _stage(
    versions: list[list[Message]],
    k: int,
    same: int,
    before: tuple[Message, ...] | None,
    again: int,
) -> tuple[Message, ...]:
    """The request as guard ``k`` sees it.

    The last request's view (``before``) of the ``same`` leading messages, then the versions
    of the others; the message asked ``again`` (at or after guard ``k``) as it now stands.
    """
    if before is None or not same:
        return tuple([v[k] for v in versions])
    view = before[:same]
    if same < len(versions):
        view += tuple([v[k] for v in versions[same:]])
    if 0 <= again < same and view[again] is not versions[again][k]:
        view = (*view[:again], versions[again][k], *view[again + 1 :])
    return view


class GuardChain:
    """Guards run in order, each seeing what the previous left, with their verdicts reported.

    ``guards`` are :class:`Guard` objects, or :class:`ChainedGuard` entries naming their plugin;
    ``fail_open`` names the guards whose raising lets the text through (recorded as an allow
    with the error as its reason) instead of blocking. The chain's methods are what a run
    calls: :meth:`check_part` (a ``LiveInstructions(guard=...)``), :meth:`check_request`,
    :meth:`check_output` and :meth:`check_turn`.
    """

    def __init__(
        self, guards: Iterable[Guard | ChainedGuard], *, fail_open: Collection[str] = ()
    ) -> None:
        entries: list[ChainedGuard] = []
        for guard in guards:
            entry = guard if isinstance(guard, ChainedGuard) else _product_entry(guard)
            entries.append(entry)
        names = [e.name for e in entries]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ConfigError(
                f"two guards of the chain are named {twice[0]!r}; give each its own name (a "
                "product guard's name attribute)",
                value=twice[0],
                source="guards=",
            )
        if isinstance(fail_open, str | Mapping):  # its letters, or its keys whatever they say
            raise ConfigError(
                f"fail_open= takes a list of guard names, such as ['redact']; got {fail_open!r}",
                value=fail_open,
                source="GuardChain(fail_open=)",
            )
        only_named(fail_open, names, "guard_fail_open=")
        self.guards: tuple[ChainedGuard, ...] = tuple(
            replace(e, fail_open=e.fail_open or e.name in fail_open) for e in entries
        )
        #: Each run's remembered answers; a run's go when its context does.
        self._runs: WeakKeyDictionary[RunContext, _RunMemo] = WeakKeyDictionary()
        #: The run asked last and its memo, both weakly (the memo goes with its run): the next
        #: request is mostly the same run's.
        self._current: tuple[ref[RunContext], ref[_RunMemo]] | None = None
        #: The guards (with their positions) that have a check of their own, by check.
        self._asking: dict[GuardCheck, list[tuple[int, ChainedGuard]]] = {
            check: [(pos, e) for pos, e in enumerate(self.guards) if e.checks(check)]
            for check in ("input", "output", "turn")
        }
        #: Whether a guard checks whole turns: a run builds each turn's record only then.
        self.checks_turns = bool(self._asking["turn"])
        self._asks_input = [e.checks("input") for e in self.guards]
        #: Whether each guard only measures: asked about the request's first message alone.
        self._only_first = [_measures_only(e.guard) for e in self.guards]
        #: What the pass over a request nobody rewrote asks each guard with an input check
        #: about: the carried first message (a measuring guard), the new messages (all but a
        #: guard that only measures): 0 both, 1 the first alone, 2 the new alone; with the
        #: guard's check, bound.
        self._plain_plan = [
            (k, e, e.guard.check_input, 2 if not e.guard.measures_request else int(only))
            for k, e in self._asking["input"]
            for only in [self._only_first[k]]
        ]
        self._asks_any = any(self._asks_input)
        #: Whether a guard measures the whole request (its first message is asked each time).
        self._measures = any(e.guard.measures_request for e in self.guards)
        #: The construction pass's last verdicts by part id, with the part's text as left.
        self._built: dict[str, tuple[str, list[Verdict]]] = {}

    def __repr__(self) -> str:
        return f"GuardChain({', '.join(e.name for e in self.guards)})"

    @property
    def names(self) -> list[str]:
        """The guards' names, in the order they run."""
        return [e.name for e in self.guards]

    # ------------------------------------------------------------------ the four passes

    def check_part(self, part: InstructionPart, ctx: RunContext | None = None) -> InstructionPart:
        """``part`` as every guard's input check leaves it; a block raises :class:`GuardBlocked`.

        ``ctx`` is the run whose verdicts these are; None at construction, where nothing is
        reported (the run's first request reports the same verdicts). Within a run a part's
        text is checked once: later requests reuse the answers.
        """
        memo = self._memo(ctx)
        pending: list[Verdict] = []
        text = part.text
        for pos, entry in self._asking["input"]:
            if self._only_first[pos]:  # it allows every part
                continue
            key = (pos, part.id, text)
            decision = None if memo is None else memo.parts.get(key)
            if decision is None:
                inp = GuardInput(text, part.id)
                subject = f"instructions/{part.id}"
                decision = self._ask(entry, "input", subject, ctx, inp, pending)
                if memo is not None:
                    memo.parts[key] = decision
            text = decision.text if decision.action == "rewrite" else text
        if ctx is None:  # reported by each run's first request that carries the part
            self._built[part.id] = (text, pending)
        return part if text == part.text else replace(part, text=text)

    def check_request(self, ctx: RunContext | None, request: ModelRequest) -> ModelRequest:
        """``request`` with every message's text as the guards leave it, in chain order.

        Each guard sees every message of the request (``GuardInput.messages``) as the guards
        before it left them; a rewrite replaces that message's text. Messages without text (a
        tool call's arguments) are not given to the guards. Within a run, a message other than
        the first that an earlier request carried is not checked again: the versions the guards
        made of it then are reused (see :class:`GuardInput`). A guard that rewrote nothing
        leaves the next guard the very view it saw, so a request nobody rewrites costs one
        view, not one a guard.
        """
        memo = self._memo(ctx)
        msgs = request.messages
        answered: dict[tuple[int, int], GuardDecision] = {}  # by the plain pass, if it gave up
        if memo is not None:
            if not memo.built_reported:
                self._report_built(ctx, memo, msgs)
            plain = memo.plain
            if plain is not None:
                found = self._plain_request(ctx, memo, msgs, plain)
                if found is None:  # nobody rewrote anything
                    return request
                answered = found
                memo.last, memo.plain = _unfolded(plain, len(self.guards)), None
        last = None if memo is None else memo.last
        same = 0  # how many leading messages are the last request's (a transcript grows)
        if last is not None and starts_with(msgs, last.messages):
            same = len(last.messages)
        if last is not None and 0 <= last.first < same:
            first = last.first
        else:
            first = next((i for i, m in enumerate(msgs) if m.text), -1)
        again = first if self._measures else -1  # asked every request: the whole is measured
        # each message's versions: before each guard, and after the last
        versions: list[list[Message]] = [] if last is None else last.versions[:same]
        rewrites = last.rewrites if last is not None and same else 0
        todo: list[tuple[int, Message]] = []  # the messages to check, by index
        if 0 <= again < same:
            m = msgs[again]
            versions[again] = [m]
            todo.append((again, m))
        for i, m in enumerate(msgs[same:], same):
            known = None if memo is None or i == again else memo.messages.get(id(m))
            if known is not None and known[0] is m:
                versions.append(known[1] or [m] * (len(self.guards) + 1))
                rewrites |= known[2]
            else:
                versions.append([m])
                todo.append((i, m))
        marks = [0] * len(todo)  # which guards rewrote each message of todo
        snapshots = self._ask_request(
            ctx, memo, last, versions, todo, marks, same, first, rewrites, answered
        )
        for mark in marks:
            rewrites |= mark
        n = len(self.guards)
        if n and not rewrites >> (n - 1) & 1:
            sent = snapshots[-1]
        else:
            sent = _stage(versions, -1, same, None if last is None else last.sent, again)
        if memo is not None:
            for (i, m), mark in zip(todo, marks, strict=True):
                if i != again:
                    memo.messages[id(m)] = (m, versions[i], mark)
            if rewrites:
                memo.last = _LastRequest(msgs, versions, snapshots, sent, rewrites, first)
            else:
                carried = msgs[first] if self._measures and first >= 0 else None
                measured = "" if carried is None else carried.text
                memo.last, memo.plain = None, (msgs, len(msgs), first, carried, measured)
        if ctx is not None and self._asks_any:
            for i, m in todo:
                if not isinstance(m.content, str):  # a plain text has no part to skip
                    _report_skipped(ctx, m, i)
        if not rewrites or sent == msgs:
            return request
        return replace(request, messages=sent)

    def _ask_request(
        self,
        ctx: RunContext | None,
        memo: _RunMemo | None,
        last: _LastRequest | None,
        versions: list[list[Message]],
        todo: list[tuple[int, Message]],
        marks: list[int],
        same: int,
        first: int,
        carried: int,
        answered: dict[tuple[int, int], GuardDecision],
    ) -> list[tuple[Message, ...]]:
        """Ask each guard in turn about the messages ``todo``; the view each guard saw.

        Each message's version after a guard is appended to its ``versions``; a rewrite by
        guard ``k`` sets bit ``k`` of the message's mark (``marks``, in ``todo``'s order). A
        guard's view is the last one's when no earlier version of the request differs at that
        guard: bit ``k - 1`` is set neither in ``carried`` (the rewrites of the versions reused
        from earlier requests) nor in a mark. ``answered`` holds answers :meth:`_plain_request`
        already had, by (guard's position, message index): those guards are not asked again.
        """
        again = first if self._measures else -1
        asked: list[GuardInput | None] = [None] * len(todo)  # the last input about each
        texts = [m.text for _, m in todo]  # each message's text as the guards so far left it
        snapshots: list[tuple[Message, ...]] = []
        snapshot: tuple[Message, ...] = ()
        changed = True
        for k, entry in enumerate(self.guards):
            if changed:
                before = None if last is None else last.snapshots[k]
                snapshot = _stage(versions, k, same, before, again)
            snapshots.append(snapshot)
            changed = bool(carried >> k & 1)
            asks = self._asks_input[k]
            only = self._only_first[k]
            # a guard that does not measure the whole says the same of the same text
            reuse = memo is not None and not entry.guard.measures_request
            for j, (i, _) in enumerate(todo):
                message = versions[i][k]
                text = texts[j]
                if asks and text and (i == first or not only):
                    key = (k, "", text)
                    decision = (
                        memo.parts.get(key) if reuse and i == again and memo is not None else None
                    )
                    if decision is None:
                        decision = answered.get((k, i))
                    if decision is None:
                        inp = asked[j]
                        if inp is None or inp.messages is not snapshot or inp.text is not text:
                            inp = asked[j] = GuardInput(text, "", snapshot, i, i == first)
                        decision = self._ask(entry, "input", i, ctx, inp)
                        if reuse and i == again and memo is not None:
                            memo.parts[key] = decision
                    if decision.action == "rewrite":
                        message = with_text(message, decision.text)
                        texts[j] = message.text
                        marks[j] |= 1 << k
                        changed = True
                versions[i].append(message)
        return snapshots

    def _plain_request(
        self, ctx: RunContext | None, memo: _RunMemo, msgs: Sequence[Message], plain: _Plain
    ) -> dict[tuple[int, int], GuardDecision] | None:
        """Check ``msgs`` when they extend ``plain``, the last request, which no guard rewrote.

        Every guard then sees the request as it is: each is asked about the new messages (a
        measuring guard about the first too, as :meth:`_ask_request` asks; a guard that only
        measures about the first alone) and no version or view is built: None says nobody
        rewrote anything, and the memo keeps the request plain. On a rewrite (or messages that
        do not extend the last request, or a new message met before) this returns the answers
        so far, by (guard's position, message index), for the full pass to finish asking no
        guard twice.
        """
        prefix, same, first, carried, measured = plain
        new = past(msgs, prefix) if first >= 0 else None
        seen = memo.messages
        if new is None or not seen.keys().isdisjoint(map(id, new)):  # their versions are
            return {}  # reused, as the full pass does
        # the first message (``first < same``) is carried over: a guard that decides on the
        # text alone answered it before, an allow (the memo's parts), so only a measuring
        # guard is asked about it again; nobody rewrites, so each guard gets the same inputs
        fresh: list[GuardInput] = []
        odd: list[tuple[int, Message]] = []  # new messages with parts that are not text
        if self._asks_any:
            for i, m in enumerate(new, same):
                text = m.content
                if type(text) is not str:
                    odd.append((i, m))
                    text = m.text
                if text:
                    fresh.append(GuardInput(text, "", msgs, i, False))
        whole = GuardInput(measured, "", msgs, first, True) if measured else None
        inputs = (fresh, [], fresh) if whole is None else ([whole, *fresh], [whole], fresh)
        known: dict[tuple[int, int], GuardDecision] = {}
        for k, entry, check, which in self._plain_plan:
            for inp in inputs[which]:
                try:
                    decision, error = check(inp), None
                except Exception as exc:
                    decision, error = None, exc
                if decision is GuardDecision.ALLOW:
                    known[k, inp.index] = GuardDecision.ALLOW
                    continue
                known[k, inp.index] = self._judged(entry, "input", inp.index, ctx, decision, error)
                if known[k, inp.index].action == "rewrite":
                    return known
        for m in new:
            seen[id(m)] = (m, None, 0)  # every version is ``m``: listed if the full pass asks
        memo.plain = (msgs, same + len(new), first, carried, measured)
        if ctx is not None and self._asks_any:
            if carried is not None and not isinstance(carried.content, str):
                _report_skipped(ctx, carried, first)
            for i, m in odd:
                _report_skipped(ctx, m, i)
        return None

    def _report_built(
        self, ctx: RunContext | None, memo: _RunMemo, messages: Sequence[Message]
    ) -> None:
        """Report the construction pass's verdicts about the parts this request carries.

        A part the run checked itself (instructions composed before every request) is left
        to that pass; one whose text is not in the request's system message was not sent.
        """
        memo.built_reported = True
        system = messages[0].text if messages and messages[0].role == "system" else ""
        checked = {key[1] for key in memo.parts}
        for part_id, (text, verdicts) in self._built.items():
            if part_id in checked or text not in system:
                continue
            for verdict in verdicts:
                assert ctx is not None
                ctx.report_verdict(verdict)

    def _memo(self, ctx: RunContext | None) -> _RunMemo | None:
        """What the guards answered in ``ctx``'s run (None outside a run)."""
        if ctx is None:
            return None
        current = self._current
        if current is not None and current[0]() is ctx:
            memo = current[1]()
            if memo is not None:
                return memo
        memo = self._runs.get(ctx)
        if memo is None:
            memo = self._runs[ctx] = _RunMemo()
        self._current = (ref(ctx), ref(memo))
        return memo

    async def before_model_call(self, ctx: RunContext, request: ModelRequest) -> ModelRequest:
        """:meth:`check_request` as a ``before_model_call`` hook (for a chain of hooks)."""
        return self.check_request(ctx, request)

    def check_output(self, ctx: RunContext | None, message: Message, turn: int = 0) -> Message:
        """``message`` (an assistant message as it completed) as the guards leave it."""
        text = message.text
        for _, entry in self._asking["output"]:
            current = message if text == message.text else with_text(message, text)
            decision = self._ask(entry, "output", f"turn/{turn}", ctx, current)
            text = decision.text if decision.action == "rewrite" else text
        return message if text == message.text else with_text(message, text)

    def check_turn(self, ctx: RunContext | None, turn: TurnInfo) -> str | None:
        """The reason the run stops after ``turn`` (``"guard NAME: why"``), or None to go on."""
        for _, entry in self._asking["turn"]:
            decision = self._ask(entry, "turn", f"turn/{turn.turn}", ctx, turn)
            if decision.action == "block":
                return f"guard {entry.name!r} ({entry.plugin}): {decision.reason}"
        return None

    # ------------------------------------------------------------------ one guard, one check

    def _ask(
        self,
        entry: ChainedGuard,
        check: GuardCheck,
        subject: str | int,
        ctx: RunContext | None,
        argument: GuardInput | Message | TurnInfo,
        pending: list[Verdict] | None = None,
    ) -> GuardDecision:
        """``entry``'s answer to ``check`` of ``argument``, checked: :meth:`_judged`."""
        try:
            decision = getattr(entry.guard, _METHODS[check])(argument)
        except Exception as exc:
            return self._judged(entry, check, subject, ctx, None, exc, pending)
        if decision is GuardDecision.ALLOW:
            return decision
        return self._judged(entry, check, subject, ctx, decision, None, pending)

    def _judged(
        self,
        entry: ChainedGuard,
        check: GuardCheck,
        subject: str | int,
        ctx: RunContext | None,
        decision: object,
        error: Exception | None,
        pending: list[Verdict] | None = None,
    ) -> GuardDecision:
        """What ``entry`` answered to ``check`` (``decision``, or the ``error`` it raised), checked.

        ``subject`` is what the verdict names, or the index of the request's message it is
        about (named only when there is a verdict: a plain allow is most answers). Outside a
        run (``ctx`` None) the verdict goes to ``pending`` instead, when given. A block of the
        input or the output raises :class:`GuardBlocked`; the turn check's is returned (the run
        stops on it).
        """
        where = _METHODS[check]
        details: JSONObject = {}
        if error is not None:
            text = f"{type(error).__name__}: {error}"
            if entry.fail_open:
                decision = GuardDecision.allow(f"raised {text}; let through (fail open)")
            else:
                decision = GuardDecision.block(f"raised {text}; refused (fail closed)")
            details = {"error": type(error).__name__, "fail_open": entry.fail_open}
        subject_id = subject if isinstance(subject, str) else f"message/{subject}"
        stop = check == "turn"
        _check_decision(entry, where, decision, turn=stop)
        assert isinstance(decision, GuardDecision)
        if decision.action != "allow" or decision.reason:
            verdict = Verdict(
                GUARD_NAMESPACE,
                check,
                decision.action,
                subject=check,
                subject_id=subject_id,
                rule=entry.name,
                plugin=entry.plugin,
                reason=decision.reason,
                details=details,
            )
            if ctx is not None:
                ctx.report_verdict(verdict)
            elif pending is not None:
                pending.append(verdict)
        if decision.action == "block" and not stop:
            raise GuardBlocked(
                f"guard {entry.name!r} ({entry.plugin}) blocked the {check} at {subject_id}: "
                f"{decision.reason}",
                guard=entry.name,
                check=check,
                subject=subject_id,
                reason=decision.reason,
            )
        return decision


def _measures_only(guard: Guard) -> bool:
    """Whether ``guard`` declares that it only measures the whole request."""
    return bool(guard.measures_request and guard.measures_only)


def _check_decision(entry: ChainedGuard, where: str, decision: object, *, turn: bool) -> None:
    """Refuse what a guard must not answer, naming it."""
    problem = ""
    if not isinstance(decision, GuardDecision):
        problem = f"returned {type(decision).__name__} {decision!r}, not a GuardDecision"
    elif decision.action not in ("allow", "rewrite", "block"):
        problem = f"answered the action {decision.action!r}"
    elif decision.action == "rewrite" and turn:
        problem = "answered rewrite to the turn check, which can only allow or block"
    elif decision.action == "rewrite" and not isinstance(decision.text, str):
        problem = f"rewrote to {type(decision.text).__name__} {decision.text!r}, not a str"
    elif decision.action != "allow" and not (isinstance(decision.reason, str) and decision.reason):
        problem = f"answered {decision.action} without a reason"
    if problem:
        raise HookError(
            f"guard {entry.name!r} ({entry.plugin}) {problem} from {where}; a check answers "
            "GuardDecision.allow(), .rewrite(text, reason) or .block(reason): report it to "
            "the guard's authors",
            plugin=entry.plugin,
            hook=f"guard {entry.name}.{where}",
            value=decision,
            allowed="GuardDecision",
        )


def only_named(given: Iterable[str], names: Sequence[str], where: str) -> None:
    """Refuse a guard ``where`` names that is not among ``names`` (the chain's guards)."""
    stray = sorted(set(given) - set(names))
    if stray:
        raise ConfigError(
            f"{where} names the guard {stray[0]!r}, which is not in the chain; its guards: "
            f"{', '.join(names) or 'none'}",
            value=stray[0],
            source=where,
        )


def _product_entry(guard: Guard) -> ChainedGuard:
    if not isinstance(guard, Guard):
        raise ConfigError(
            f"guards= takes installed guards by name or agentkit_core.plugin.Guard objects, got "
            f"{type(guard).__name__} {guard!r}",
            value=guard,
            source="guards=",
        )
    return ChainedGuard(guard.name or type(guard).__name__, guard)


def guard_error(exc: GuardBlocked, where: str) -> ConfigError:
    """A block of an instruction part at construction, as the configuration error it is."""
    return ConfigError(
        f"{where}: guard {exc.guard!r} refused {exc.subject}: {exc.reason}; change the part, "
        "or the guard's configuration",
        value=exc.subject,
        source=where,
    )
