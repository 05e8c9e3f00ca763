"""What a session holds at an item: the conversation, the instructions, the run in progress.

:class:`SessionState` is built by replaying a session's path, item by item, with the same rules
the agent loop follows for a :class:`~agentkit_core.plugin.WorkingContext`: a run's messages join
the conversation when the run finishes (its answer, or a should_stop_after_turn verdict); a run that
did not finish is *the run in progress*, and the tool calls of its last response that have no
result are *pending*; a new task abandons an unfinished run, as a new ``agent.run`` does. The
recorder feeds its own items to the same state as it writes them, so a live conversation and a
resumed one are the same object.

A provider's reasoning rides in ``Message.metadata["reasoning"]`` as ``{"model": <the
Model.name that produced it>, ...}``; :func:`strip_reasoning` drops another model's, so a
resumed conversation never sends one provider another's reasoning.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any
from typing import Final

from ._errors import ConfigError
from ._instructions import SEPARATOR
from ._instructions import InstructionPart
from ._instructions import Omission
from ._messages import JSONObject
from ._messages import Message
from ._messages import ToolCall
from ._messages import Usage
from ._requests import WorkingContext
from ._sessions import SessionHeader
from ._sessions import SessionItem
from ._verdicts import Verdict

#: The ``Message.metadata`` key a provider's reasoning rides under: ``{"model": name, ...}``.
REASONING: Final = "reasoning"
#: The body key of an item the recorder withheld because its run held a secret.
REDACTED: Final = "redacted"


def strip_reasoning(messages: Iterable[Message], model: str) -> list[Message]:
    """``messages`` without the reasoning another model produced (or whose producer is unknown).

    Reasoning is provider-specific and often bound to the model that wrote it (encrypted, or
    signed); sending it to another is at best waste and at worst an error. A message whose
    ``metadata["reasoning"]["model"]`` is ``model`` keeps it.
    """
    out = []
    for m in messages:
        reasoning = m.metadata.get(REASONING)
        if reasoning is not None and not (
            isinstance(reasoning, Mapping) and reasoning.get("model") == model
        ):
            metadata = {k: v for k, v in m.metadata.items() if k != REASONING}
            m = replace(m, metadata=metadata)
        out.append(m)
    return out


def instructions_hash(texts: Sequence[str]) -> str:
    """The key of one render: a digest of the system messages' texts, in order."""
    return hashlib.sha256(json.dumps(list(texts), ensure_ascii=False).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class RecordedInstructions:
    """An ``instructions`` item: the parts sent, what was left out, and the render's key.

    ``parts`` cover the request's leading system messages: ``messages`` groups them, one tuple
    of parts per system message, joined with the instruction separator.
    """

    hash: str
    messages: tuple[tuple[InstructionPart, ...], ...]
    omitted: tuple[Omission, ...] = ()

    @property
    def parts(self) -> tuple[InstructionPart, ...]:
        """Every part, in the order sent."""
        return tuple(p for group in self.messages for p in group)

    @property
    def prefix(self) -> tuple[Message, ...]:
        """The system messages these parts were sent as."""
        return tuple(Message.system(SEPARATOR.join(p.text for p in g)) for g in self.messages)

    def to_body(self, base: RecordedInstructions | None = None) -> JSONObject:
        """The item's body (``run`` is added by the recorder).

        With ``base``, the render in force, the body is a delta when both renders name their
        parts uniquely: ``base`` (its hash), ``order`` (every part id, in order), ``changed``
        (only the parts that are not in ``base`` as they are here), and ``omitted`` only when
        it differs from ``base``'s. A memory write is then recorded as that entry's part.
        """
        body: JSONObject = {"hash": self.hash}
        placed = [(p, i) for i, group in enumerate(self.messages) for p in group]
        old = _by_id(base) if base is not None else None
        new = _by_id(self)
        if old is None or new is None:
            body["parts"] = [_part_body(p, i) for p, i in placed]
            body["omitted"] = [_omission_body(o) for o in self.omitted]
            return body
        assert base is not None
        body["base"] = base.hash
        body["order"] = [p.id for p, _ in placed]
        body["changed"] = [_part_body(p, i) for p, i in placed if old.get(p.id) != (p, i)]
        if self.omitted != base.omitted:
            body["omitted"] = [_omission_body(o) for o in self.omitted]
        return body

    @classmethod
    def from_body(
        cls, body: Mapping[str, Any], base: RecordedInstructions | None = None
    ) -> RecordedInstructions:
        """The render a body records; a delta is read against ``base``, the render in force.

        A delta whose ``base`` is not the render given keeps the parts it carries (what it
        does not carry cannot be rebuilt).
        """
        if "base" in body:
            old = (_by_id(base) or {}) if base is not None and base.hash == body["base"] else {}
            changed = {str(p["id"]): _part_of(p) for p in body.get("changed") or ()}
            placed = [changed.get(str(i)) or old.get(str(i)) for i in body.get("order") or ()]
            found = [p for p in placed if p is not None]
            omitted = base.omitted if base is not None else ()
            if "omitted" in body:
                omitted = tuple(_omission_of(o) for o in body["omitted"])
        else:
            found = [_part_of(p) for p in body.get("parts") or ()]
            omitted = tuple(_omission_of(o) for o in body.get("omitted") or ())
        groups: dict[int, list[InstructionPart]] = {}
        for part, message in found:
            groups.setdefault(message, []).append(part)
        messages = tuple(tuple(groups[i]) for i in sorted(groups))
        return cls(str(body.get("hash", "")), messages, omitted)


def _by_id(
    recorded: RecordedInstructions,
) -> dict[str, tuple[InstructionPart, int]] | None:
    """Each part with its message, by id; None when two parts share an id (no delta then)."""
    found = {p.id: (p, i) for i, group in enumerate(recorded.messages) for p in group}
    return found if len(found) == sum(len(g) for g in recorded.messages) else None


def _part_body(part: InstructionPart, message: int) -> JSONObject:
    return {"id": part.id, "text": part.text, "source": part.source, "message": message}


def _part_of(p: Mapping[str, Any]) -> tuple[InstructionPart, int]:
    return InstructionPart(str(p["id"]), str(p["text"]), str(p["source"])), int(p.get("message", 0))


def _omission_body(o: Omission) -> JSONObject:
    return {
        "part": o.part,
        "source": o.source,
        "what": o.what,
        "reason": o.reason,
        "size": o.size,
        "by": o.by,
    }


def _omission_of(o: Mapping[str, Any]) -> Omission:
    return Omission(
        str(o["part"]),
        str(o["source"]),
        str(o["what"]),
        str(o["reason"]),
        int(o.get("size", 0)),
        str(o.get("by", "")),
    )


@dataclass
class SessionState:
    """A session at one item: what an agent continuing it is seeded with.

    ``conversation`` is the messages of the finished runs (what a ``WorkingContext`` would hold),
    ``instructions`` the render in force, ``header`` the header in force. ``run`` is the id of
    the run in progress (one that neither answered nor was stopped), ``task`` its task,
    ``run_messages`` its messages, ``turns`` its model calls and ``pending`` the calls of its
    last response that have no result: what ``agent.resume(run, approvals)`` settles. ``held``
    are those of them a before_tool_call hook asked a person about (``AgentResult.pending``).
    ``grants`` are the grant verdicts still in force (neither ended nor revoked), what a policy
    engine grants again after a restart (``PolicyEngine.regrant``).
    ``redacted`` is the first item withheld because a secret reached its run (the conversation
    cannot be rebuilt past it). ``leaf`` is the item the state is at.
    """

    session_id: str
    leaf: str | None = None
    header: SessionHeader = field(default_factory=SessionHeader)
    instructions: RecordedInstructions | None = None
    conversation: list[Message] = field(default_factory=list)
    run: str | None = None
    task: str = ""
    run_messages: list[Message] = field(default_factory=list)
    turns: int = 0
    pending: tuple[ToolCall, ...] = ()
    redacted: str | None = None
    #: What the run in progress spent, from its responses' usage and cost: by the model that
    #: answered, in US dollars, and the models no price was found for. A run resumed from the
    #: session goes on counting from it (its compactors' and judges' calls are not recorded).
    run_usage: dict[str, Usage] = field(default_factory=dict)
    run_cost: float = 0.0
    run_unpriced: set[str] = field(default_factory=set)
    #: The agent the run in progress was last handed to (a ``handoff`` item), "" for none: the
    #: run resumed from the session goes on under it.
    agent: str = ""
    #: The ids of the pending calls a hook answered "ask" for.
    _asked: set[str] = field(default_factory=set, repr=False)
    #: The ids of the pending calls a hook or the policy denied (a deny outweighs an ask).
    _denied: set[str] = field(default_factory=set, repr=False)
    #: The grants in force, by (scope, source).
    _grants: dict[tuple[str, str], Verdict] = field(default_factory=dict, repr=False)

    @classmethod
    def replay(cls, session_id: str, items: Iterable[SessionItem]) -> SessionState:
        """The state after ``items`` (a path, root first)."""
        state = cls(session_id)
        for item in items:
            state.feed(item.kind, item.body, item.id)
        return state

    # ------------------------------------------------------------------ reading

    @property
    def grants(self) -> tuple[Verdict, ...]:
        """The grant verdicts in force on the path, oldest first."""
        return tuple(self._grants.values())

    @property
    def held(self) -> tuple[ToolCall, ...]:
        """The pending calls waiting for a person's approval: asked about, and denied by none."""
        return tuple(c for c in self.pending if c.id in self._asked - self._denied)

    @property
    def decisions(self) -> dict[str, str]:
        """The decision on each pending call, by id, as the before_tool_call verdicts fold it.

        A deny outweighs an ask, an ask an allow; a call no verdict names was allowed.
        """
        return {
            c.id: "deny" if c.id in self._denied else "ask" if c.id in self._asked else "allow"
            for c in self.pending
        }

    def working_context(self, model: str | None = None) -> WorkingContext:
        """A ``WorkingContext`` that continues the conversation with a new task.

        Its messages are the conversation; with ``model``, without the reasoning another model
        produced (:func:`strip_reasoning`). It has no prefix, so the agent sends its own
        instructions, and a render other than the one in force on the session is recorded.
        (To send the instructions as recorded: ``WorkingContext(prefix=state.instructions.prefix,
        messages=...)``.)
        """
        self._check_whole("continue")
        messages = list(self.conversation)
        if model is not None:
            messages = strip_reasoning(messages, model)
        return WorkingContext(messages=messages)

    def run_transcript(self, run_id: str, model: str | None = None) -> list[Message]:
        """The transcript of the run in progress, to resume it, as a checkpoint holds it.

        The instructions as recorded (the system messages the run was sent), the conversation
        before the run, and the run's messages.
        """
        self._check_whole("resume")
        if self.run != run_id:
            now = f"run {self.run!r} is" if self.run else "no run is"
            raise ConfigError(
                f"cannot resume run {run_id!r} from session {self.session_id!r}: {now} in "
                "progress at its leaf (a run that answered or was stopped is finished; a new "
                "task abandons an unfinished one); continue the conversation with a new task",
                value=run_id,
                source="Agent.resume",
            )
        prefix = list(self.instructions.prefix) if self.instructions is not None else []
        messages = [*prefix, *self.conversation, *self.run_messages]
        return messages if model is None else strip_reasoning(messages, model)

    def _check_whole(self, what: str) -> None:
        if self.redacted is not None:
            raise ConfigError(
                f"cannot {what} session {self.session_id!r}: item {self.redacted!r} was withheld "
                "because a secret answer reached its run, so the conversation cannot be rebuilt "
                "past it; fork the session at an item before it and continue the fork",
                value=self.redacted,
                source="session",
            )

    # ------------------------------------------------------------------ replay

    def feed(self, kind: str, body: object, item_id: str | None = None) -> None:
        """Apply one item; ``item_id`` (None for an item not yet written) becomes the leaf."""
        if item_id is not None:
            self.leaf = item_id
        if type(body) is not dict and not isinstance(body, Mapping):
            return  # a kind or a shape this version does not rebuild from
        if body.get(REDACTED):
            if self.redacted is None:
                self.redacted = item_id or "(unwritten)"
            return
        # the kinds of every recorded turn first: a turn feeds three items
        if kind == "response":
            self._response(body)
        elif kind == "tool_call":
            return  # the call is in its response's message, fed already
        elif kind == "tool_result":
            message = body.get("message")
            if isinstance(message, Message):
                self._result(message)
        elif kind == "header":
            self.header = SessionHeader.from_body(body)
        elif kind == "instructions":
            self.instructions = RecordedInstructions.from_body(body, self.instructions)
        elif kind == "user":
            self._user(body)
        elif kind == "verdict":
            hook, decision = body.get("hook"), body.get("decision")
            if hook == "should_stop_after_turn" and decision == "stop":
                self._finish_run()
            elif hook == "before_tool_call" and decision in ("ask", "deny"):
                (self._asked if decision == "ask" else self._denied).add(str(body.get("call")))
            elif hook in ("grant", "revoke"):
                self._grant(body)
        elif kind == "fold":
            self._fold(body.get("fold"))
        elif kind == "handoff":
            self.agent = str(body.get("to") or "")

    def _grant(self, body: Mapping[str, object]) -> None:
        verdict = Verdict.from_body(body)
        key = (verdict.scope, verdict.subject)
        self._grants.pop(key, None)  # a new grant of a source replaces its old one
        if verdict.hook == "grant" and verdict.verdict == "allow":
            self._grants[key] = verdict

    def _user(self, body: Mapping[str, object]) -> None:
        message = body.get("message")
        if not isinstance(message, Message):
            return
        if body.get("source", "task") == "task":
            self._abandon_run()
            self.run = str(body.get("run") or "")
            self.task = message.text
            self.turns = 0
            self.agent = ""
        self.run_messages.append(message)

    def _response(self, body: Mapping[str, object]) -> None:
        message, counts, model = body.get("message"), body.get("usage"), body.get("model")
        if not isinstance(message, Message):
            return
        cost, repair = body.get("cost"), body.get("source") == "repair"
        # a dict asked first: an ABC's isinstance goes through abc's __instancecheck__
        if (type(counts) is dict or isinstance(counts, Mapping)) and isinstance(model, str):
            self._responded(message, model, counts, cost, repair)
        else:  # an answer without usage (or a model) spent nothing
            self._responded(message, "", None, cost, repair)

    def _responded(
        self,
        message: Message,
        model: str,
        counts: Mapping[str, object] | None,
        cost: object,
        repair: bool,
    ) -> None:
        """A response's effect on the state, from its parts once they are known to be sound.

        Replay calls it after reading a decoded (perhaps malformed) body; the recorder calls it
        with what it holds as it records a response, so the body it built is not read again.
        """
        self.run_messages.append(message)
        self.turns += 1
        if counts is not None:
            self._spent(model, counts, cost)
        if repair:
            return
        if message.tool_calls:
            if self._asked or self._denied:  # the last response's calls' (nearly always none)
                self._asked, self._denied = set(), set()
            self.pending = message.tool_calls
        else:
            self._finish_run()

    def _spent(self, model: str, counts: Mapping[str, object], cost: object) -> None:
        """Add a response's usage and cost to the run's, by the model that answered."""
        known = self.run_usage.get(model, _NONE_USED)
        i, o = counts.get("input_tokens"), counts.get("output_tokens")
        if type(i) is int and type(o) is int and len(counts) == 2:
            cr = cw = r = 0  # the two counts every answer has, and no other: two calls, not five
        else:  # each count an int, else (missing, or another type) 0
            i, o, cr, cw, r = [n if type(n) is int else 0 for n in map(counts.get, _COUNTED)]
        self.run_usage[model] = Usage(  # one Usage a response: this runs every recorded turn
            known.input_tokens + i,
            known.output_tokens + o,
            known.requests + 1,
            known.cache_read_tokens + cr,
            known.cache_write_tokens + cw,
            known.reasoning_tokens + r,
        )
        if isinstance(cost, (int, float)):
            self.run_cost += cost
        else:
            self.run_unpriced.add(model)

    def _result(self, message: Message) -> None:
        """What a call returned joins the run, and settles the call (as :meth:`_responded`).

        The pending calls are what is left unanswered, so dropping the result's id from them
        is all a result does: no set of the ids answered since the response is kept.
        """
        self.run_messages.append(message)
        pending, answered = self.pending, message.tool_call_id
        if len(pending) == 1:  # a turn's one call, answered or not: no generator for it
            if pending[0].id == answered:
                self.pending = ()
        elif pending:
            self.pending = tuple(c for c in pending if c.id != answered)

    def _finish_run(self) -> None:
        self.conversation.extend(self.run_messages)
        self._reset_run()

    def _abandon_run(self) -> None:
        self._reset_run()

    def _reset_run(self) -> None:
        self.run = None
        self.task = ""
        self.run_messages = []
        self.turns = 0
        self.pending = ()
        self.run_usage, self.run_cost, self.run_unpriced = {}, 0.0, set()
        self._asked, self._denied = set(), set()

    def _fold(self, fold: object) -> None:
        """Put a fold's summary in place of the messages it folded (a failed fold: nothing)."""
        if not isinstance(fold, Mapping):
            return
        summary, folded = fold.get("summary"), fold.get("folded")
        if not isinstance(summary, Message) or not isinstance(folded, Sequence) or not folded:
            return
        messages = [*self.conversation, *self.run_messages]
        # ``start`` counts the run's leading system messages, which the conversation has not
        at = fold.get("start")
        if isinstance(at, int) and self.instructions is not None:
            at -= len(self.instructions.messages)
        start = _find(messages, list(folded), at if isinstance(at, int) else None)
        if start is None:
            return  # the folded messages are not on this path (a fold of another run's view)
        messages[start : start + len(folded)] = [summary]
        split = min(start, len(self.conversation))
        self.conversation, self.run_messages = messages[:split], messages[split:]


_NONE_USED = Usage()


#: The token counts a response's ``usage`` records, in the order ``_spent`` adds them; a
#: count missing is 0.
_COUNTED = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


def _find(messages: list[Message], part: list[object], hint: int | None) -> int | None:
    """Where ``part`` occurs in ``messages`` as a contiguous run.

    At ``hint`` when it is there (equal messages can repeat), else its last occurrence.
    """
    n = len(part)
    if hint is not None and 0 <= hint and messages[hint : hint + n] == part:
        return hint
    for start in range(len(messages) - n, -1, -1):
        if messages[start : start + n] == part:
            return start
    return None
