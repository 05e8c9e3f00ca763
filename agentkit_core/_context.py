"""RunContext, the run's scope with its services, and the Invoker that calls the model.

The scope itself (id, parent, budget, usage, trace, taint) is :class:`RunScope`, a primitive;
what this module adds is what the loop gives a run: the invoker and its middleware chain, the
checkpointer, the recorder, the policy, the guardrail, the elicitor.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import fields
from dataclasses import replace
from types import EllipsisType
from typing import TYPE_CHECKING
from typing import Any
from typing import Generic
from typing import TypeVar

from ._deadline import within
from ._errors import ConfigError
from ._errors import ModelDeadlineExceeded
from ._errors import ProviderResponseError
from ._invoke import default_middlewares
from ._lazy import loaded_instance
from ._middleware import CallTool
from ._middleware import Middleware
from ._middleware import MiddlewareLike
from ._middleware import ToolInvocation
from ._middleware import as_middleware
from ._middleware import chain_model
from ._middleware import chain_tool
from ._models import STREAM_SINK
from ._models import Model
from ._models import ModelRequest
from ._models import ModelResponse
from ._models import StreamEvent
from ._models import answered
from ._models import checked_model
from ._pricing import check_cost
from ._recorder import NULL_RECORDER
from ._records import record
from ._run_errors import ElicitationError
from ._scope import DEFAULT_MODEL_DEADLINE
from ._scope import Budget
from ._scope import RunScope
from ._scope import check_deadline
from ._tables import wrong_kind
from ._tools import Tool
from ._tools import ToolResult
from ._tracing import current_span

if TYPE_CHECKING:
    from ._checkpoint import Checkpointer
    from ._checkpoint import CheckpointPort
    from ._checkpoint import KeyValueStore
    from ._guard_chain import GuardChain
    from ._guardrails import Guardrail
    from ._policy import PolicyEngine
    from ._recorder import Recorder
    from ._verdicts import Verdict
    from ._verdicts import VerdictObserver

#: The module of ``FallbackModel``, looked up in ``sys.modules`` (see ``Invoker``).
_FALLBACK = "agentkit_core._fallback"

#: ``async (question, schema, secret) -> answer``: how a run asks a person something.
Elicitor = Callable[[str, "dict[str, Any] | None", bool], Awaitable[Any]]


class Invoker:
    """Sends requests to the model through an ordered middleware chain (first is outermost).

    ``chat`` runs the model-call chain; ``call_tool`` runs the tool-call chain around the
    function that actually invokes the tool. Both chains are built once, here. ``deadline``
    bounds each ``chat`` call as a whole (seconds; None for none).
    """

    def __init__(
        self,
        model: Model,
        middlewares: Sequence[MiddlewareLike] = (),
        *,
        ctx: RunContext | None = None,
        deadline: float | None = DEFAULT_MODEL_DEADLINE,
    ) -> None:
        self.model = model
        #: The provider of a ``"provider:model"`` name (``"anthropic"``), else "" (also when
        #: the model says it has none of its own: a fallback chain's attempts name theirs).
        provider = getattr(model, "provider", None)
        if not isinstance(provider, str):
            provider = model.name.partition(":")[0] if ":" in model.name else ""
        self._provider = provider
        #: A fallback chain checks the cost limit and names who answered per attempt itself.
        #: (A model is a FallbackModel only once that module is loaded: a run without one
        #: does not import it.)
        self._single = not loaded_instance(model, (_FALLBACK, "FallbackModel"))
        self.middlewares: tuple[Middleware, ...] = tuple(as_middleware(m) for m in middlewares)
        self.ctx = ctx
        self.deadline = check_deadline(deadline)
        self._chat = chain_model(self.middlewares, self._call_model)
        #: The tool-call chain around each ``end`` it was asked for, built once (an agent passes
        #: the same bound method on every call).
        self._tool_chains: dict[CallTool, CallTool] = {}

    def _call_model(self, request: ModelRequest) -> Awaitable[ModelResponse]:
        """The chain's end: the model's own awaitable, or the stream fed to the request's sink.

        The call's span learns the provider here, where the model is the one called (a
        compactor's or judge's invoker shares the run's middlewares but not its model).
        """
        if self._provider:
            span = current_span()
            if span.name == "model_call":
                span.attributes.setdefault("provider", self._provider)
        if self._single and request.ctx is not None:
            check_cost(request.ctx, self.model.name, request.messages)
        sink = request.metadata.get(STREAM_SINK)
        if sink is None:
            return self._answer(request) if self._single else self.model.request(request)
        return self._streamed(request, sink)

    async def _answer(self, request: ModelRequest) -> ModelResponse:
        response = await self.model.request(request)
        return answered(response, self.model.name)

    async def _streamed(
        self, request: ModelRequest, sink: Callable[[StreamEvent], None]
    ) -> ModelResponse:
        response = None
        async for event in self.model.stream(request):
            sink(event)
            if event.kind == "done":
                response = event.response
        if response is None:
            raise ProviderResponseError(
                f"model {self.model.name!r} ended its stream without a 'done' event; a Model's "
                "stream() must end with StreamEvent('done', response=...)"
            )
        if response.answered_by is None:
            response = answered(response, self.model.name)
        return response

    def chat(self, request: ModelRequest) -> Awaitable[ModelResponse]:
        """Send one request through the chain; the run's context is attached to it.

        The whole call — every middleware, every retry and wait, the whole stream — must end
        within ``deadline``; past it the call is cancelled and :class:`ModelDeadlineExceeded`
        raised (not retried: the deadline already covers the retries). Await it at once: it
        is the chain's own awaitable, or the deadline's around it.
        """
        if request.ctx is None and self.ctx is not None:
            request = replace(request, ctx=self.ctx)
        if self.deadline is None:
            return self._chat(request)
        return within(self._chat(request), self.deadline, self._overdue)

    def _overdue(self) -> ModelDeadlineExceeded:
        assert self.deadline is not None
        return ModelDeadlineExceeded(
            f"model {self.model.name!r} gave no answer within {self.deadline:g} s, the "
            "model call's total deadline (retries and a whole stream included); the call "
            "was cancelled. Raise it with Agent(model_deadline=...) if the model is that "
            "slow",
            deadline=self.deadline,
        )

    def call_tool(self, invocation: ToolInvocation, end: CallTool) -> Awaitable[ToolResult]:
        """One tool invocation through the tool-call chain, ending at ``end``; await it at once.

        The chain's own awaitable, with no coroutine of this method's around it.
        """
        chain = self._tool_chains.get(end)
        if chain is None:
            chain = self._tool_chains[end] = chain_tool(self.middlewares, end)
        return chain(invocation)

    def bind(self, ctx: RunContext) -> Invoker:
        """The same model, chain and deadline, attached to another run."""
        return Invoker(self.model, self.middlewares, ctx=ctx, deadline=self.deadline)


#: Seconds :meth:`RunContext.elicit` waits for a person's answer before
#: :class:`ElicitationError`. Three times a tool's default: a person reads the question,
#: perhaps looks something up or asks someone, while a run that waits holds its task and
#: connections; a question that may wait longer belongs in an approval (the run suspends).
DEFAULT_ELICIT_TIMEOUT = 900.0


@record(slots=True)
class RunServices:
    """What a run works with beside its scope; the agent builds one per run.

    ``checkpointer`` persists the run (a :class:`~agentkit_core.Checkpointer` or a bare
    :class:`~agentkit_core.plugin.CheckpointPort`); ``store`` is the key-value alternative a
    producer bridges to when there is no checkpointer. ``recorder`` writes the conversation's
    session; ``elicitor`` lets a person answer; ``guardrail``, ``policy`` and ``guards`` (the
    guard chain, for what a run asks a model outside the loop, such as an MCP server's sampling
    request) are the agent's; ``verdict_observer`` hears every verdict; ``deps`` is whatever the
    application hands its tools (never read by agentkit).
    """

    checkpointer: Checkpointer | CheckpointPort | None = None
    store: CheckpointPort | KeyValueStore | None = None
    recorder: Recorder = NULL_RECORDER
    elicitor: Elicitor | None = None
    guardrail: Guardrail | None = None
    policy: PolicyEngine | None = None
    verdict_observer: VerdictObserver | None = None
    guards: GuardChain | None = None
    deps: object = None


#: The type of a run's ``deps`` (``RunContext[MyDeps]``, ``Agent[MyDeps]``); a bare
#: ``RunContext`` is ``RunContext[Any]``. The default exists for the type checker only, so
#: importing this module does not import typing_extensions.
if TYPE_CHECKING:
    from typing_extensions import TypeVar as _TypeVar

    DepsT = _TypeVar("DepsT", default=Any)
else:
    DepsT = TypeVar("DepsT")

#: The service keywords ``RunContext(...)`` also takes one by one (thin aliases of ``services=``).
SERVICE_NAMES: tuple[str, ...] = tuple(f.name for f in fields(RunServices))


class RunContext(RunScope, Generic[DepsT]):
    """Everything one run carries: its scope (id, budget, usage, trace), invoker and services.

    ``RunContext[MyDeps]`` types ``ctx.deps``, what the application hands its tools
    (``agent.run(task, deps=...)``); agentkit never reads it. A child agent's run gets its
    parent's unless its own is given.

    The services come as one :class:`RunServices` record, which the agent builds per run
    (``services=``; the constructor also takes them one by one, as shorthands); the run keeps
    them as ``ctx.checkpointer``, ``ctx.recorder`` and so on, and ``ctx.services`` gives them
    back as a record.

    ``scratchpad`` only accepts JSON-serializable values. ``secret_tainted`` turns true once a
    person answered a ``secret=True`` question; the checkpoint layer then refuses to persist.
    ``recorder`` writes the conversation's session (a :class:`NullRecorder` without one): set
    it per run to record each conversation in its own session.
    ``guardrail`` is the run's guardrail (the agent's), for hooks that frame tool output and
    tools that fetch (``ctx.guardrail.fetcher()`` with the web guardrail); None when the run
    has none. ``verdict_observer`` is told every verdict the run reports
    (:meth:`report_verdict`): the policy's, the guards', the approvals, the hooks' folds.
    ``policy`` is the run's policy engine (the agent's), for tools that grant (a skill read);
    ``grant_scope`` names the conversation the run belongs to when a front names its
    conversations itself (else it is the run's session; see ``grant_scope``).
    Taint never clears, and it spreads: a run started with ``parent=`` (a child agent's run)
    taints its parent when it is tainted, and starts tainted when its parent already is; what
    it spends counts against its parent's budget too. ``checkpoint_at`` is the
    ``(run_id, namespace)`` its checkpoints are written under when not its own (a child
    agent's go under its parent's run, :meth:`bind_to_parent`).
    """

    def __init__(
        self,
        *,
        run_id: str | None = None,
        model: Model | None = None,
        middlewares: Sequence[MiddlewareLike] = (),
        invoker: Invoker | None = None,
        services: RunServices | None = None,
        budget: Budget | None = None,
        grant_scope: str | None = None,
        parent: RunContext | None = None,
        model_deadline: float | None = DEFAULT_MODEL_DEADLINE,
        elicit_timeout: float | None = DEFAULT_ELICIT_TIMEOUT,
        **service: Any,
    ) -> None:
        super().__init__(run_id=run_id, parent=parent, budget=budget)
        # Plain attributes, not a view of the record: the loop reads them every turn.
        given = _services(services, service)
        if invoker is not None and not isinstance(invoker, Invoker):
            raise wrong_kind("RunContext(invoker=)", "an Invoker", invoker)
        self.checkpointer: Checkpointer | CheckpointPort | None = given.checkpointer
        self.store: CheckpointPort | KeyValueStore | None = given.store
        #: None given: the run records nothing.
        self.recorder: Recorder = NULL_RECORDER if given.recorder is None else given.recorder
        self.elicitor: Elicitor | None = given.elicitor
        self.guardrail: Guardrail | None = given.guardrail
        self.policy: PolicyEngine | None = given.policy
        self.verdict_observer: VerdictObserver | None = given.verdict_observer
        self.guards: GuardChain | None = given.guards
        self.deps: DepsT = given.deps  # type: ignore[assignment]  # the caller's promise
        self.parent: RunContext | None = parent
        #: Seconds each model call of the run may take in all (see :class:`Invoker`).
        self.model_deadline = check_deadline(model_deadline)
        self.elicit_timeout = elicit_timeout
        if invoker is not None:
            self.invoker: Invoker | None = invoker.bind(self)
        elif model is not None:
            model = checked_model(model, "RunContext(model=)")
            self.invoker = Invoker(model, middlewares, ctx=self, deadline=self.model_deadline)
        else:
            self.invoker = None
        self.grant_scope = grant_scope
        #: The tool set the run last asked about and its tools whose calls must not run twice
        #: (``_tool_calls.must_mark``): a run's own, so a new run scans its tools again.
        self._never_twice: tuple[dict[str, Tool], frozenset[str]] | None = None

    @property
    def services(self) -> RunServices:
        """The run's services as one record: a copy (set ``ctx.<name>`` to change one)."""
        return RunServices(**{name: getattr(self, name) for name in SERVICE_NAMES})

    def report_verdict(self, verdict: Verdict) -> Verdict:
        """Record ``verdict`` in the run's session and tell the verdict observer; returns it.

        The verdict is stamped with this run's id (:func:`~agentkit_core.plugin.report_verdict`).
        """
        from ._verdicts import report_verdict  # loaded with the Verdict being reported

        return report_verdict(verdict, ctx=self)

    def bind_to_parent(self, name: str) -> None:
        """Bind this fresh context to its ``parent``'s run, as the run of its child agent ``name``.

        Its checkpoints go to the parent's checkpointer, under the parent's run and a namespace
        of its own (``<parent's namespace>/<name>:<run_id>``); it asks through the parent's
        elicitor; its spans go to the parent's exporters too, under the current span (the
        parent's tool call). Its spending counts against the parent's budget as it is made
        (``parent=`` does that), and its own budget still applies, to its own spending.
        """
        parent = self.parent
        if parent is None:
            raise ConfigError(
                f"run {self.run_id!r} has no parent to bind to; build it with parent=",
                source="RunContext.bind_to_parent",
            )
        self.agent_name = name
        self._check_depth()
        from ._checkpoint import resolve_checkpointer  # which imports this module

        checkpointer = resolve_checkpointer(None, parent)
        if checkpointer is not None:
            self.checkpointer = checkpointer
            root, namespace = parent.checkpoint_at or (parent.run_id, "agent")
            self.checkpoint_at = (root, f"{namespace}/{name}:{self.run_id}")
        if parent.elicitor is not None:
            self.elicitor = parent.elicitor
            self.elicit_timeout = parent.elicit_timeout
        self.trace.attach(parent.trace.exporters)
        self.trace.events = parent.trace.events  # its steps join the parent's event stream
        if self.deps is None:
            self.deps = parent.deps

    @property
    def elicit_timeout(self) -> float | None:
        """Seconds :meth:`elicit` waits for an answer unless a call says otherwise (None: no limit).

        A child run that asks through its parent's elicitor takes the parent's.
        """
        return self._elicit_timeout

    @elicit_timeout.setter
    def elicit_timeout(self, seconds: float | None) -> None:
        self._elicit_timeout = check_deadline(
            seconds, "RunContext.elicit_timeout", DEFAULT_ELICIT_TIMEOUT
        )

    def invoker_for(
        self, model: Model | None = None, *, source: str = "", hint: str = "pass a model"
    ) -> Invoker:
        """The invoker a part of the run (a compactor, a tool) calls a model through.

        The run's own, or, for another ``model``, the same middleware chain around it, so
        tracing, retry and metering apply and the cost lands on this run. With neither, the
        error names ``source`` and suggests ``hint``.
        """
        if self.invoker is None:
            if model is None:
                raise ConfigError(
                    f"{source or 'this call'} has no model to call: {self!r} has no invoker; "
                    f"{hint}, or call it inside an agent run",
                    source=source or "RunContext.invoker_for",
                )
            return Invoker(model, default_middlewares(), ctx=self, deadline=self.model_deadline)
        if model is None:
            return self.invoker
        return Invoker(model, self.invoker.middlewares, ctx=self, deadline=self.invoker.deadline)

    async def elicit(
        self,
        question: str,
        schema: dict[str, Any] | None = None,
        *,
        secret: bool = False,
        timeout: float | EllipsisType | None = ...,
    ) -> Any:
        """Ask a person through the configured elicitor and return the answer.

        The elicitor has ``timeout`` seconds to answer (``...``: the run's
        :attr:`elicit_timeout`, :data:`DEFAULT_ELICIT_TIMEOUT` unless set; None: no limit);
        past it the question is withdrawn (the elicitor's call cancelled) and
        :class:`ElicitationError` raised. An answer to a ``secret=True`` question marks the run
        secret-tainted, so no checkpoint of it is ever written. The question, who answered
        (the elicitor's name) and the answer (never a secret one's) are recorded in the run's
        session.
        """
        if self.elicitor is None:
            raise ElicitationError(
                f"cannot ask {question!r}: this run has no elicitor; pass elicitor= to the "
                "RunContext (or the agent) to let a person answer"
            )
        if timeout is ...:
            seconds = self.elicit_timeout
        else:
            seconds = check_deadline(timeout, "ctx.elicit timeout", DEFAULT_ELICIT_TIMEOUT)
        by = _name_of(self.elicitor)
        with self.trace.span("elicit", question=question, secret=secret):
            try:
                asked = self.elicitor(question, schema, secret)
                answer = await (asked if seconds is None else _answered(asked, question, seconds))
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                self.recorder.record_elicitation(
                    self, question, schema, secret=secret, answer=None, by=by, error=error
                )
                raise
        self.recorder.record_elicitation(
            self, question, schema, secret=secret, answer=answer, by=by
        )
        if secret:
            self.taint()
        return answer

    def __repr__(self) -> str:
        return f"<RunContext run_id={self.run_id!r}>"


async def _answered(asked: Awaitable[Any], question: str, seconds: float) -> Any:
    """The answer ``asked`` gives within ``seconds``, else :class:`ElicitationError`."""
    try:
        return await within(asked, seconds)
    except TimeoutError:
        raise ElicitationError(
            f"no answer to {question!r} within {seconds:g} s, the question's deadline; the "
            "question was withdrawn. Give a person longer with ctx.elicit(..., timeout=) or "
            "RunContext.elicit_timeout (None for no limit)"
        ) from None


def _name_of(fn: Any) -> str:
    """Who answers through ``fn``: its qualified name (a front's handler, a test's function)."""
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None) or type(fn).__module__
    return f"{module}.{name}"


def _services(services: RunServices | None, given: dict[str, Any]) -> RunServices:
    """``services=``, or a record of the service keywords given one by one (not both)."""
    unknown = sorted(set(given) - set(SERVICE_NAMES))
    if unknown:
        raise TypeError(
            f"RunContext() got an unexpected keyword argument {unknown[0]!r}; its services are "
            f"{', '.join(SERVICE_NAMES)}"
        )
    if services is None:
        return RunServices(**given)
    if not isinstance(services, RunServices):
        raise wrong_kind("RunContext(services=)", "a RunServices", services)
    if given:
        raise ConfigError(
            f"RunContext got services= and {', '.join(sorted(given))}=; give each service in "
            "one place (the keywords are shorthands for the fields of services=)",
            source="RunContext",
        )
    return services


def unread(ctx: RunContext[DepsT]) -> RunContext[DepsT]:
    """``ctx``, a context an agent made for one run: its trace keeps no finished span.

    Nobody holds it after the run, so the spans would only grow the run's memory (exporters
    and the event stream still see each one); a context the caller passes keeps them all.
    """
    ctx.trace.keep = False
    return ctx
