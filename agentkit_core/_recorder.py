"""The recorder: every layer of a run writes the conversation's session through it.

A :class:`Recorder` writes one session. The agent loop, ``RunContext.elicit``, a child agent,
compaction and any plugin call its ``record_*`` methods, which only buffer; the loop's
durability points (:meth:`Recorder.flush`, after each turn, on a suspension, at the end) append
a turn's items to the store in one batch, a compare-and-set on the session's leaf. Without a
session the recorder is a :class:`NullRecorder`, whose methods do nothing, so no caller branches.

The recorder lives on the run's context (``ctx.recorder``), so one kit serves many
conversations: each run carries its own conversation's recorder. One run at a time records into
a recorder; a second concurrent run is refused, because two runs would interleave their items
on one path.

Secrets: once a person answered a ``secret=True`` question in a run (``ctx.secret_tainted``),
every item derived from it — responses, calls, results, verdicts, folds, instructions, child
runs — is recorded as ``{"redacted": "secret_taint", "run": ...}`` instead, and so is every
later item of the conversation, which the model's context then holds. A child's taint reaches
its parent's recorder. The elicitation itself records who answered, never a secret's value.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING
from typing import Any
from typing import ClassVar

from ._encoder import encode_state
from ._errors import SessionConflict
from ._errors import SessionNotFound
from ._messages import Content
from ._messages import JSONObject
from ._messages import JSONValue
from ._messages import Message
from ._messages import ToolCall
from ._messages import Usage
from ._pricing import run_prices
from ._requests import WorkingContext

if TYPE_CHECKING:
    from ._context import RunContext
    from ._executor import Executor
    from ._hooks import ToolDecision
    from ._instructions import InstructionPart
    from ._instructions import Omission
    from ._session_state import SessionState
    from ._sessions import Entry
    from ._sessions import SessionHeader
    from ._sessions import Sessions
    from ._sessions import SessionStore
    from ._verdicts import Verdict

#: ``(instructions text) -> (parts, omissions)`` when the parts join to that text, else None:
#: how a recorder learns the parts a request's instructions were composed from
#: (``Kit.parts_for``).
PartsFor = Callable[[str], "tuple[Sequence[InstructionPart], Sequence[Omission]] | None"]

#: The redacted body's reason.
SECRET_TAINT = "secret_taint"


async def _same(value: str | None) -> str | None:
    return value


def _awaited(recorder: Recorder) -> bool:
    """``_flush_now`` of a recorder whose own ``flush`` must be awaited: never done at once."""
    return False


class Recorder:
    """Writes one session: a conversation's record, as its runs happen.

    Open one with :meth:`start` (a new session), :meth:`resume` (continue at the leaf),
    :meth:`fork` (a new session based at any item of another) or :meth:`open` (continue a
    session by id, creating it when it is not there). ``state`` is the session at the
    recorder's leaf (:class:`SessionState`): :meth:`working_context` seeds a run that continues
    the conversation, and ``state.run`` / ``state.pending`` are the run in progress and the
    calls it holds for approval, which ``agent.resume(run, approvals)`` settles.

    ``parts`` (``Kit.parts_for``) names the instruction parts a request's instructions were
    joined from; without it, or when they do not join to what was sent, the instructions are
    recorded as one part.
    """

    #: False only for the :class:`NullRecorder`.
    enabled: ClassVar[bool] = True

    def __init__(
        self,
        sessions: Sessions,
        state: SessionState,
        *,
        parts: PartsFor | None = None,
        parent: Recorder | None = None,
    ) -> None:
        from ._sessions import new_id  # a plain run (a NullRecorder) never loads the sessions

        self._new_id = new_id  # for _add, three times a recorded turn
        self.sessions = sessions
        self.state = state
        self.parts_for = parts
        self._parent = parent
        self._leaf = state.leaf
        #: What is recorded and not yet appended, as entries (a NewItem's fields, no record).
        self._buffer: list[Entry] = []
        self._lock = asyncio.Lock()
        self._held = False  # what ``_lock.locked()`` says, read without a call twice a turn
        self._active: str | None = None
        self._sent: list[Content] | None = None
        self._tainted: bool = parent is not None and parent._tainted
        self._steps: Executor | None = None  # the durable executor of the recording run
        self._flushes = 0
        #: The id of the item recorded last (the id it is appended with), for the run's events.
        self.last_id: str | None = None

    # ------------------------------------------------------------------ opening

    @classmethod
    async def start(
        cls,
        sessions: Sessions | SessionStore,
        header: SessionHeader | Mapping[str, object] | None = None,
        *,
        session_id: str = "",
        parts: PartsFor | None = None,
    ) -> Recorder:
        """A recorder of a new session with ``header`` (``session_id`` picks its id)."""
        from ._session_state import SessionState  # a recorder's session modules load here
        from ._sessions import _as_header

        store = as_sessions(sessions)
        given = _as_header(header)
        head = await store.create(given, session_id=session_id)
        return cls(store, SessionState(head.session_id, head.id, given), parts=parts)

    @classmethod
    async def resume(
        cls,
        sessions: Sessions | SessionStore,
        session_id: str,
        *,
        header: SessionHeader | Mapping[str, object] | None = None,
        parts: PartsFor | None = None,
    ) -> Recorder:
        """A recorder that continues ``session_id`` at its leaf.

        With ``header``, a header that differs from the one in force (another model after a
        restart, another kit) is recorded before the next run's first item.
        """
        from ._session_state import SessionState

        store = as_sessions(sessions)
        path = await store.path(session_id)
        recorder = cls(store, SessionState.replay(session_id, path), parts=parts)
        recorder._header_changed(header)
        return recorder

    @classmethod
    async def fork(
        cls,
        sessions: Sessions | SessionStore,
        session_id: str,
        *,
        at: str | None = None,
        header: SessionHeader | Mapping[str, object] | None = None,
        new_id: str = "",
        parts: PartsFor | None = None,
    ) -> Recorder:
        """A recorder of a new session whose base is item ``at`` of ``session_id`` (its leaf).

        The original session is never changed. The fork's header is ``header``, or a copy of
        ``session_id``'s own.
        """
        from ._session_state import SessionState

        store = as_sessions(sessions)
        head = await store.fork(session_id, at=at, header=header, new_id=new_id)
        path = await store.path(head.session_id)
        return cls(store, SessionState.replay(head.session_id, path), parts=parts)

    @classmethod
    async def open(
        cls,
        sessions: Sessions | SessionStore,
        session_id: str,
        header: SessionHeader | Mapping[str, object] | None = None,
        *,
        parts: PartsFor | None = None,
    ) -> Recorder:
        """Continue session ``session_id``, or start it with ``header`` when it is not there.

        For a front that names its conversations: the conversation's id is the session's.
        """
        store = as_sessions(sessions)
        for _ in range(2):  # a process that created it between our read and our create
            try:
                return await cls.resume(store, session_id, header=header, parts=parts)
            except SessionNotFound as exc:
                if exc.item_id:
                    raise
            try:
                return await cls.start(store, header, session_id=session_id, parts=parts)
            except SessionConflict:
                continue
        return await cls.resume(store, session_id, header=header, parts=parts)

    def _header_changed(self, header: SessionHeader | Mapping[str, object] | None) -> None:
        if header is None:
            return
        from ._sessions import _as_header

        wanted = _as_header(header)
        if wanted.to_body() != self.state.header.to_body():
            self.record_header(wanted)

    # ------------------------------------------------------------------ reading

    @property
    def session_id(self) -> str:
        """The id of the session this recorder writes."""
        return self.state.session_id

    @property
    def leaf(self) -> str | None:
        """The newest item written (the next append names it)."""
        return self._leaf

    @property
    def tainted(self) -> bool:
        """Whether a secret reached the conversation, so what follows is recorded redacted."""
        return self._tainted

    def working_context(self, model: str | None = None) -> WorkingContext:
        """A ``WorkingContext`` continuing the conversation (see ``SessionState``)."""
        return self.state.working_context(model)

    # ------------------------------------------------------------------ the run's bracket

    async def begin(
        self, ctx: RunContext, task: Message | None = None, *, steps: Executor | None = None
    ) -> None:
        """Claim the recorder for ``ctx``'s run and write its first items (the task).

        Writing at once detects another process that continued the session meanwhile
        (:class:`SessionConflict`) before the model is called. A second run claiming the
        recorder while another records is a :class:`SessionConflict` naming both.

        ``steps`` is the run's executor when it is durable: each batch of the run is then its
        step, so a run replayed after a crash records each item once (see :meth:`_rewind`).
        """
        if self._active is not None and self._active != ctx.run_id:
            raise SessionConflict(
                f"session {self.session_id!r} is recording run {self._active!r}; run "
                f"{ctx.run_id!r} cannot record into it at the same time (their items would "
                "interleave): give each conversation its own recorder (ctx.recorder, "
                "Kit.recorder_for)",
                session_id=self.session_id,
            )
        self._active = ctx.run_id
        try:
            if steps is not None:
                await self._rewind(steps)
            model = ctx.invoker.model.name if ctx.invoker is not None else ""
            header = self.state.header
            if model and header.model and model != header.model:
                self.record_header(replace(header, model=model))
            if task is not None:
                self.record_user(ctx, task)
            await self.flush()
        except BaseException:
            self._active = self._steps = None
            raise

    def end(self, ctx: RunContext) -> None:
        """Release the recorder after ``ctx``'s run (its last flush is the loop's)."""
        if self._active == ctx.run_id:
            self._active = self._steps = None

    async def _rewind(self, steps: Executor) -> None:
        """Go back to the leaf the run began at the first time it ran (a step of its own).

        A run replayed after a crash finds the session holding what it recorded before (and
        this recorder, opened since, at its end): its replayed batches return the items they
        wrote, and a batch written but not recorded as its step is found in place
        (:meth:`_append_once`), so the path ends as an uninterrupted run's.
        """
        self._steps, self._flushes = steps, 0
        began = await steps.step("session:start", partial(_same, self._leaf), kind="session")
        if began is None or began == self._leaf:
            return
        from ._session_state import SessionState

        path = await self.sessions.path(self.session_id, to=began)
        self.state = SessionState.replay(self.session_id, path)
        for kind, body, _, _ in self._buffer:
            self.state.feed(kind, body)
        self._leaf, self._sent = began, None

    async def _append_once(self, after: str, batch: list[Entry]) -> str:
        """Append ``batch`` after ``after``, or find it there already; the new leaf's id.

        A batch is found when the items after ``after`` are the batch itself: an execution of
        the run that died between the append and the recording of its step wrote them.
        """
        try:
            return (await self.sessions._append(self.session_id, after, batch))[-1].id
        except SessionConflict:
            path = await self.sessions.path(self.session_id)
            at = next((i for i, item in enumerate(path) if item.id == after), len(path))
            tail = [(item.kind, item.body_json) for item in path[at + 1 :]]
            if not tail or tail != [(kind, encode_state(body)) for kind, body, _, _ in batch]:
                raise
            return path[-1].id

    async def flush(self) -> None:
        """Append what was recorded since the last flush, in one batch after the leaf.

        Raises what the store raises, with nothing of the batch written: a
        :class:`SessionConflict` when another writer moved the session on (the batch is dropped:
        it can never follow that leaf; resume the session again to go on from the new one), an
        :class:`EncodingError` naming the path in a body, or a store failure (the batch is kept
        for the next flush).
        """
        if self._flush_now():
            return
        async with self._lock:
            batch, self._buffer = self._buffer, []
            if not batch:
                return
            self._held = True
            try:
                if self._leaf is None:
                    raise SessionNotFound(
                        f"session {self.session_id!r} has no item to append after",
                        session_id=self.session_id,
                    )
                if self._steps is None:
                    leaf = (await self.sessions._append(self.session_id, self._leaf, batch))[-1].id
                else:
                    self._flushes += 1
                    leaf = await self._steps.step(
                        f"session:{self._flushes}",
                        partial(self._append_once, self._leaf, batch),
                        kind="session",
                    )
            except SessionConflict:
                raise
            except BaseException:
                self._buffer[:0] = batch
                raise
            finally:
                self._held = False
            self._leaf = self.state.leaf = leaf

    def _flush_now(self) -> bool:
        """:meth:`flush` done without an await, when it can be: whether it was.

        It can when nothing is buffered, or when the store's append never waits (``memory://``)
        and no other flush is under way: with no await, nothing comes between, so the lock is
        not needed. The loop flushes through here first, saving a turn its coroutines. Raises
        as :meth:`flush` does. A subclass that overrides :meth:`flush` alone is always awaited.
        """
        if not self._buffer:
            return True
        if self._steps is not None or self._leaf is None or self._held:
            return False
        made = self.sessions._append_entries_now(self.state.session_id, self._leaf, self._buffer)
        if made is None:
            return False
        self._buffer = []
        self._leaf = self.state.leaf = made[-1].id
        return True

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "flush" in vars(cls) and "_flush_now" not in vars(cls):
            cls._flush_now = _awaited  # type: ignore[method-assign,assignment]  # its flush rules

    # ------------------------------------------------------------------ recording

    def record(self, ctx: RunContext | None, kind: str, body: Mapping[str, object]) -> None:
        """Record an item of ``kind`` (a plugin's own kind is ``"namespace/name"``).

        ``body`` is a mapping of anything ``encode_state`` encodes; the run's id is added as
        ``"run"``. Under a secret, a redacted item is recorded instead. An unknown ``kind`` is
        refused here (:class:`ConfigError`), before anything is buffered.
        """
        from ._sessions import check_kind

        self._add(ctx, check_kind(kind), dict(body))

    def record_header(self, header: SessionHeader) -> None:
        """A header that replaces the one in force (another model, another kit)."""
        self._add(None, "header", header.to_body(), clean=True)

    def record_user(
        self, ctx: RunContext | None, message: Message, *, source: str = "task"
    ) -> None:
        """A message put into the conversation from outside the model.

        ``source`` is ``"task"`` (a run's task: it starts the run), ``"before_turn"`` (a hook
        added it) or ``"repair"`` (output coercion asked again).
        """
        clean = source == "task" and self._parent is None  # the person's own words
        self._add(ctx, "user", {"message": message, "source": source}, clean=clean)

    def record_instructions(self, ctx: RunContext | None, messages: Sequence[Message]) -> None:
        """The instructions a request was sent (its leading system messages), once per render.

        A render is keyed by a hash of the texts; the one in force on the session's path is not
        recorded again, after a restart either. A render after another is recorded as the
        parts that changed (``RecordedInstructions.to_body``).
        """
        contents = []
        for m in messages:
            if m.role != "system":
                break
            contents.append(m.content)
        if contents == self._sent or not contents:  # the same contents: the same texts
            return
        self._sent = contents
        texts = [m.text for m in messages[: len(contents)]]
        from ._instructions import InstructionPart
        from ._session_state import RecordedInstructions
        from ._session_state import instructions_hash

        key = instructions_hash(texts)
        if self.state.instructions is not None and self.state.instructions.hash == key:
            return
        found = self.parts_for(texts[0]) if self.parts_for is not None else None
        if found is not None:
            first, omitted = tuple(found[0]), tuple(found[1])
        else:
            first, omitted = (InstructionPart("instructions", texts[0], "prompt"),), ()
        rest = enumerate(texts[1:], start=1)
        groups = (first, *((InstructionPart(f"system.{i}", t, "request"),) for i, t in rest))
        render = RecordedInstructions(key, groups, omitted)
        self._add(ctx, "instructions", render.to_body(self.state.instructions))

    def record_response(
        self,
        ctx: RunContext | None,
        message: Message,
        *,
        model: str,
        usage: Usage | None = None,
        finish_reason: str | None = None,
        source: str = "model",
    ) -> None:
        """A model's answer and the model that produced it (its calls are in the message).

        ``model`` is the model that answered (in a fallback chain, the one that did); the
        item's ``cost`` is what the answer cost in US dollars, at the run's prices (its
        agent's plugin manager's), left out when its price is unknown.

        Reasoning the answer carries rides in ``message.metadata["reasoning"]``. ``source`` is
        ``"repair"`` for an answer output coercion rejected.
        """
        # the body's values checked for a float as they are put in: its encoding need not walk it
        finite = (
            type(message) is Message
            and type(model) is str
            and type(source) is str
            and (finish_reason is None or type(finish_reason) is str)
        )
        counts: dict[str, int] | None = None
        if usage is not None:  # the two counts every answer has, and only the others reported
            i, o = usage.input_tokens, usage.output_tokens
            counts = {"input_tokens": i, "output_tokens": o}
            finite = finite and type(i) is int and type(o) is int
            if usage.cache_read_tokens or usage.cache_write_tokens or usage.reasoning_tokens:
                for extra in ("cache_read_tokens", "cache_write_tokens", "reasoning_tokens"):
                    if n := getattr(usage, extra):
                        counts[extra] = n
                        finite = finite and type(n) is int
        body = {
            "message": message,
            "model": model,
            "usage": counts,
            "finish_reason": finish_reason,
            "source": source,
        }
        cost = None
        if usage is not None and ctx is not None and ":" in model:  # a bare name is not priced
            known = run_prices(ctx)  # the run's (its agent's); none: unknown
            cost = None if known is None else known.cost(usage, model)
            if cost is not None:
                body["cost"] = cost
                finite = finite and type(cost) is float and cost - cost == 0.0
        self._buffered(ctx, "response", body, finite=finite)
        # the state fed from what is in hand, as replay feeds it after checking the body
        self.state._responded(message, model, counts, cost, source == "repair")

    def record_tool_result(self, ctx: RunContext | None, message: Message) -> None:
        """What a call returned (a ``tool`` message naming the call)."""
        self._buffered(ctx, "tool_result", {"message": message}, finite=type(message) is Message)
        self.state._result(message)

    def record_messages(
        self, ctx: RunContext | None, messages: Sequence[Message], *, source: str, model: str = ""
    ) -> None:
        """Messages added to a run's transcript, each recorded as its role's kind."""
        for m in messages:
            if m.role == "assistant":
                self.record_response(ctx, m, model=model, source=source)
            elif m.role == "tool":
                self.record_tool_result(ctx, m)
            else:
                self.record_user(ctx, m, source=source)

    def record_verdict(self, ctx: RunContext | None, verdict: Verdict) -> None:
        """A decision (a policy's, a person's, a contested hook's, a guard's): a ``verdict`` item.

        Its body is :meth:`Verdict.to_body`. Report verdicts with :func:`report_verdict` (or
        ``ctx.report_verdict``), which records through here and tells the verdict observer.
        """
        self._add(ctx, "verdict", verdict.to_body())

    def record_elicitation(
        self,
        ctx: RunContext | None,
        question: str,
        schema: Mapping[str, JSONValue] | None,
        *,
        secret: bool,
        answer: object,
        by: str,
        error: str | None = None,
    ) -> None:
        """A question to a person, who answered (``by``) and the answer; a secret's is withheld."""
        body = {
            "question": question,
            "schema": schema,
            "secret": secret,
            "answer": None if secret else answer,
            "by": by,
            "error": error,
        }
        self._add(ctx, "elicitation", body)

    def record_fold(self, ctx: RunContext | None, fold: object) -> None:
        """What compaction folded, for a fold observer: ``ctx.recorder.record_fold(ctx, fold)``.

        ``fold`` is a dataclass (or mapping) with ``start``, ``folded`` (the messages replaced),
        ``summary`` (the message that replaced them; None when the fold failed), ``tokens_before``,
        ``tokens_after`` and ``error``. Resuming puts the summary in place of what it folded.
        """
        if dataclasses.is_dataclass(fold) and not isinstance(fold, type):
            fold = {f.name: getattr(fold, f.name) for f in dataclasses.fields(fold)}
        self._add(ctx, "fold", {"fold": fold})

    async def child(
        self,
        ctx: RunContext,
        agent: str,
        *,
        model: str = "",
        default: Recorder | None = None,
    ) -> Recorder:
        """A recorder of a new session for a child agent's run, linked both ways.

        The child's header names the parent session and run (``metadata["parent"]``); this
        session records a ``child`` item naming the child's. A secret in the child reaches
        this recorder. (``default`` is what a :class:`NullRecorder` returns instead.)
        """
        header = self.state.header
        link: JSONObject = {"session": self.session_id, "run": ctx.run_id, "agent": agent}
        child_header = replace(
            header, model=model or header.model, metadata={**header.metadata, "parent": link}
        )
        from ._session_state import SessionState

        head = await self.sessions.create(child_header)
        child = Recorder(
            self.sessions,
            SessionState(head.session_id, head.id, child_header),
            parts=self.parts_for,
            parent=self,
        )
        self._add(ctx, "child", {"session": child.session_id, "agent": agent})
        return child

    def run_transcript(self, run_id: str, model: str | None = None) -> list[Message]:
        """The run in progress at the leaf, to resume it (``SessionState.run_transcript``)."""
        return self.state.run_transcript(run_id, model)

    # ------------------------------------------------------------------ internals

    def _add(
        self, ctx: RunContext | None, kind: str, body: dict[str, Any], *, clean: bool = False
    ) -> None:
        """Buffer an item and feed it to the state, as replay reads it."""
        self._buffered(ctx, kind, body, clean)
        self.state.feed(kind, body)

    def _buffered(
        self,
        ctx: RunContext | None,
        kind: str,
        body: dict[str, object],
        clean: bool = False,
        *,
        finite: bool = False,
    ) -> None:
        """Buffer an item of a known kind (redacted under a secret) with the run and its id.

        ``finite``: the caller checked ``body`` holds no float outside its messages (the run's
        id is checked here), so its encoding need not walk it (``_encoder.encode_finite``).
        """
        run = ctx.run_id if ctx is not None else None
        if run is not None:
            body["run"] = run
            finite = finite and type(run) is str
        self.last_id = item = self._new_id()
        # ctx's own flag, not its ``secret_tainted`` property: a call less an item
        if not clean and (self._tainted or (ctx is not None and ctx._tainted)):
            from ._session_state import REDACTED

            self._taint()
            self._buffer.append((kind, {REDACTED: SECRET_TAINT, "run": run}, item, False))
        else:
            self._buffer.append((kind, body, item, finite))

    def _taint(self) -> None:
        recorder: Recorder | None = self
        while recorder is not None:
            recorder._tainted = True
            recorder = recorder._parent

    def __repr__(self) -> str:
        return f"<Recorder session={self.session_id!r} of {self.sessions.store.url}>"


class NullRecorder(Recorder):
    """The recorder without a session: every method does nothing.

    Callers need not branch; the agent loop does, on its hot path, for exactly this class.
    """

    enabled: ClassVar[bool] = False

    def __init__(self) -> None:
        self.parts_for = None
        self._leaf = None
        self._tainted = False
        self.last_id = None

    def _ignore(self, *args: object, **kwargs: object) -> None:
        return None

    async def _nothing(self, *args: object, **kwargs: object) -> None:
        return None

    record = record_header = record_user = record_instructions = record_response = _ignore
    record_tool_result = record_messages = record_verdict = _ignore
    record_elicitation = record_fold = end = _ignore
    begin = flush = _nothing

    @functools.cached_property
    def state(self) -> SessionState:  # type: ignore[override]  # read by few: made on first use
        """An empty session's state; its module loads only if something reads it."""
        from ._session_state import SessionState

        return SessionState("")

    @property
    def session_id(self) -> str:
        return ""

    def working_context(self, model: str | None = None) -> WorkingContext:
        return WorkingContext()

    async def child(
        self,
        ctx: RunContext,
        agent: str,
        *,
        model: str = "",
        default: Recorder | None = None,
    ) -> Recorder:
        return self if default is None else default

    def run_transcript(self, run_id: str, model: str | None = None) -> list[Message]:
        from ._errors import ConfigError

        raise ConfigError(
            f"cannot resume run {run_id!r}: there is no session to read it from",
            value=run_id,
            source="Agent.resume",
        )

    def __repr__(self) -> str:
        return "<NullRecorder>"


#: The recorder of a run without a session.
NULL_RECORDER: Recorder = NullRecorder()


def decision_verdict(call: ToolCall, decision: ToolDecision) -> Verdict:
    """The verdict of the before_tool_call hooks' fold on ``call``."""
    from ._verdicts import Verdict

    return Verdict(
        "hook",
        "before_tool_call",
        decision.kind,
        call.name,
        call.id,
        rule=decision.rule,
        plugin=decision.source,
        reason=decision.reason,
    )


def as_sessions(sessions: Sessions | SessionStore) -> Sessions:
    """``sessions`` as a :class:`Sessions` (a store is wrapped)."""
    from ._sessions import Sessions

    return sessions if isinstance(sessions, Sessions) else Sessions(sessions)
