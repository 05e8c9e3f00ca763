"""A guard: what it is asked, and what it answers.

A :class:`Guard` answers three checks, each with a :class:`GuardDecision` (allow, rewrite with a
new text and a reason, or block with a reason):

* **input**: each instruction part on its own before the parts are joined, then every message
  of the whole request as it is about to be sent (a :class:`GuardInput`);
* **output**: each assistant message as it completes (streamed or not);
* **turn**: after each turn that ran tools (only allow or block: the turn already happened).

A :class:`ChainedGuard` is one guard of a chain (:mod:`._guard_chain`), with its name and
the plugin it came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import ClassVar
from typing import Final
from typing import Literal

from ._messages import Message
from ._messages import starts_with
from ._records import quick_init

if TYPE_CHECKING:
    from ._hooks import TurnInfo

#: The verdict namespace of every guard verdict.
GUARD_NAMESPACE: Final = "guard"

GuardAction = Literal["allow", "rewrite", "block"]
#: The three checks, as verdicts name them (``Verdict.hook``).
GuardCheck = Literal["input", "output", "turn"]


@quick_init
@dataclass(frozen=True, slots=True)
class GuardDecision:
    """What a guard answers: ``allow``, ``rewrite`` (``text`` replaces the text) or ``block``.

    ``reason`` says why, in words that never repeat a value the guard hid (``"redacted 1
    email"``, not the address). A rewrite and a block need one; an allow may give one, and is
    then recorded too.
    """

    action: GuardAction
    text: str = ""
    reason: str = ""

    ALLOW: ClassVar[GuardDecision]

    @classmethod
    def allow(cls, reason: str = "") -> GuardDecision:
        """Let the text through as it is."""
        return cls("allow", reason=reason)

    @classmethod
    def rewrite(cls, text: str, reason: str) -> GuardDecision:
        """Send (or keep) ``text`` in place of what was checked."""
        return cls("rewrite", text, reason)

    @classmethod
    def block(cls, reason: str) -> GuardDecision:
        """Refuse: the request is not sent, or the run ends on the message or turn."""
        return cls("block", reason=reason)


GuardDecision.ALLOW = GuardDecision("allow")


@quick_init
@dataclass(frozen=True, slots=True)
class GuardInput:
    """One text the input check is asked about.

    In the per-part pass ``part`` is the instruction part's id and ``messages`` is empty. In the
    pass over the whole request ``part`` is ``""``, ``messages`` is the request's messages as
    the guards before this one left them (a sequence: the request's own read-only view while
    no guard has rewritten one, else a tuple), ``index`` says which of them ``text`` is the text of,
    and ``first`` is true for the request's first message with text: that is where a guard
    that measures the whole request (a token limit, declaring ``Guard.measures_request``)
    does so, every request. Otherwise a guard decides on ``text`` alone: the chain remembers
    its answer for the rest of the run and does not ask again (nor record the verdict again).
    """

    text: str
    part: str = ""
    messages: Sequence[Message] = ()
    index: int = -1
    first: bool = False

    @property
    def whole(self) -> bool:
        """Whether this is the pass over the whole request (not one instruction part)."""
        return self.index >= 0

    def extends(self, prefix: Sequence[Message]) -> bool:
        """Whether ``messages`` begin with the (non-empty) ``prefix``, copying neither.

        For a guard that keeps what it worked out about an earlier request (a running total):
        a conversation's request repeats the last one's messages, and two requests of one run
        are told apart by their lengths, not by reading every message again.
        """
        return starts_with(self.messages, prefix)


class Guard:
    """A guard: three checks, each answering a :class:`GuardDecision`; the base allows all.

    Subclass it and override the checks you need. Every check must be **synchronous, cheap and
    a pure function of its input**: no I/O, no state that changes between calls. A guard runs
    on every instruction part, every message of every request and every answer, and its
    verdict for a text must be the same each time it sees it (the per-part pass runs at
    construction and again before every request). ``name`` is how verdicts and errors name the
    guard; a guard a plugin registered is named by its registration.

    * ``check_input(inp)``: a :class:`GuardInput`: one instruction part, or one message's text
      in the pass over the whole request. A rewrite replaces that part's or message's text
      (tool-call arguments are never given to a guard).
    * ``check_output(message)``: an assistant message as it completes. A rewrite replaces its
      text in the transcript; a block ends the run with :class:`GuardBlocked`.
    * ``check_turn(turn)``: a :class:`TurnInfo` after a turn that ran tools. Allow or block
      only: a block stops the run with the guard's reason; a rewrite is an error.
    """

    name: str = ""
    #: Whether ``check_input`` measures the whole request (``GuardInput.messages``) at its first
    #: message, as a token limit does: it is then asked about that message every request.
    #: Other guards decide on the text alone, and are asked about a text once a run.
    measures_request: ClassVar[bool] = False
    #: Whether such a guard only measures: its ``check_input`` allows every text but the first
    #: message's, so the chain asks it about nothing else (no instruction part either).
    measures_only: ClassVar[bool] = False

    def check_input(self, inp: GuardInput) -> GuardDecision:
        """Allow every input (override to check)."""
        return GuardDecision.ALLOW

    def check_output(self, message: Message) -> GuardDecision:
        """Allow every answer (override to check)."""
        return GuardDecision.ALLOW

    def check_turn(self, turn: TurnInfo) -> GuardDecision:
        """Allow every turn (override to check)."""
        return GuardDecision.ALLOW


@dataclass(frozen=True, slots=True)
class ChainedGuard:
    """One guard of a chain: the guard, its name, and the plugin it came from (or "product")."""

    name: str
    guard: Guard
    plugin: str = "product"
    fail_open: bool = False

    def checks(self, check: GuardCheck) -> bool:
        """Whether the guard has a check of its own for ``check`` (the base one allows all)."""
        where = f"check_{check}"
        return getattr(type(self.guard), where, None) is not getattr(Guard, where)
