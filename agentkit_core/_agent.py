"""The Agent and its ReAct loop.

One run: build the request once (prompt, grounding, task), then turn after turn call the model
through the invoker and run the tools it asks for, until it answers, a hook stops the run, a
call needs a person's approval (the run suspends), or ``max_turns`` is reached. The contested
fields are folded by :class:`~agentkit_core.Hooks` at their points; the loop itself knows no
plugin.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import AsyncIterable
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import Generic

from ._content import Task
from ._content import task_text
from ._context import DepsT
from ._context import Elicitor
from ._context import RunContext
from ._context import RunServices
from ._context import unread
from ._durability import checkpointer_of
from ._durability import keeps_state
from ._durability import persist
from ._durability import persisted_now
from ._errors import ConfigError
from ._executor import Executor
from ._executor import resolve_executor
from ._handoff import hand_off
from ._handoff import offers_handoff
from ._handoff import taken_handoff
from ._hooks import Hooks
from ._hooks import ToolDecision
from ._invoke import default_middlewares
from ._lookup import adapt
from ._lookup import plugin_hooks
from ._lookup import resolve_guardrail
from ._lookup import resolve_model
from ._lookup import resolve_policy
from ._lookup import span_exporters
from ._memory_ground import as_grounder
from ._memory_ground import render_grounding_block
from ._messages import Message
from ._messages import ToolCall
from ._middleware import MiddlewareLike
from ._models import Model
from ._models import ModelSettings
from ._models import StreamEvent
from ._models import ToolSpec
from ._options import GuardOptions
from ._options import Limits
from ._options import agent_compaction
from ._options import agent_guards
from ._options import check_agent_arguments
from ._options import check_run_arguments
from ._options import config_options
from ._options import record_of
from ._plugins import manager_or_default
from ._recorder import NULL_RECORDER
from ._recorder import NullRecorder
from ._requests import Prompt
from ._requests import RequestBuilder
from ._requests import WorkingContext
from ._run_errors import MaxTurnsExceeded
from ._run_state import AgentResult
from ._run_state import RunState
from ._scope import DEFAULT_MODEL_DEADLINE
from ._scope import Budget
from ._scope import _current_run
from ._scope import check_deadline
from ._settings import check_settings
from ._settings import merge_settings
from ._tables import check_count
from ._tool_calls import Suspend
from ._tool_calls import execute_batch
from ._tool_calls import run_calls
from ._tool_calls import run_tool
from ._tools import USER_TOOLS
from ._tools import Tool
from ._tools import tool_table
from ._tools import union_of
from ._tracing import SpanExporter
from ._tracing import check_exporters
from ._turn import carry_over
from ._turn import final_output
from ._turn import model_answer
from ._turn import request_now
from ._turn import stamp_run
from ._turn import stopped_after_turn
from ._turn import turn_request

if TYPE_CHECKING:
    from ._approvals import Answers
    from ._events import RunEvent
    from ._fold import Folding
    from ._guard import Guard
    from ._guard_chain import GuardChain
    from ._guardrails import Guardrail
    from ._kit import AgentConfig
    from ._memory import Memory
    from ._memory import MemoryStore
    from ._memory_ground import MemoryGrounder
    from ._output import OutputStream
    from ._plugins import PluginManager
    from ._policy import PolicyEngine
    from ._recorder import Recorder
    from ._toolunion import ToolUnion
    from ._verdicts import VerdictObserver


class Agent(Generic[DepsT]):
    """An agent: a model, a prompt and tools, run by a ReAct loop.

    Args:
        name: names the agent in traces, as a child tool, as an MCP tool.
        description: what the agent does, for whoever composes it (a parent's model reads it
            as the child tool's description; an MCP server lists it).
        model: a Model or a model string (``"openai:gpt-4o-mini"``; ``"test"`` is the built-in
            TestModel). None reads ``AGENTKIT_MODEL``; with that unset it is a ConfigError.
        prompt: the system prompt (a string or a :class:`Prompt`).
        tools: tools or typed functions, or a :class:`ToolUnion` asked every turn; names
            must be unique.
        output: a type the final answer is parsed into (pydantic models, dataclasses...).
        request_builder: replaces the default builder over ``prompt``.
        memory: grounds each run on the entries best matching its task (a
            :class:`MemoryGrounder`, or a Memory or store: its 5 best), in the request's prefix.
        settings: the :class:`ModelSettings` of every model request of a run (``temperature``,
            ``max_tokens``...); a run's own ``settings=`` go over them key by key.
        middlewares: after the default tracing and metering; the first is the outermost.
        hooks: the contested-field hooks; None means the installed plugins' hooks.
        output_retries: repair rounds for typed output that does not validate.
        checkpointer: a Checkpointer or CheckpointPort every run snapshots through (RUNNING
            after each turn, SUSPENDED on an ask, DONE, FAILED); see :meth:`resume`.
        compaction: a :class:`Folding` that folds the run's transcript into a summary past its
            budget, once per turn after the transform hooks (the summary stays in the
            transcript and the checkpoint).
        recorder: the :class:`Recorder` every run's context starts with, which writes the
            conversation's session (``ctx.recorder`` replaces it for one run).
        exporters: span exporters every run tells of its spans; None means the installed
            plugins' (:func:`span_exporters`), ``[]`` none.
        manager: the plugin manager model strings, guardrail names, output types and (when
            ``hooks`` is None) the plugins' hooks are looked up in; default: the process-wide
            one.
        limits: how far a run may go, a :class:`~agentkit_core.options.Limits`
            (``max_turns``, ``max_parallel_tools``, ``tool_timeout``, ``model_deadline``,
            ``budget``); those five flat keywords are thin aliases that build it.
        guards: what checks a run, a :class:`~agentkit_core.options.GuardOptions` (its
            ``guards``: a GuardChain or Guard objects; ``guardrail``, ``policy``,
            ``policy_engine``, ``verdict_observer``); ``guards=`` as a GuardChain or Guard
            objects and those four flat keywords are thin aliases that build it.
        executor: the :class:`Executor` each model call and tool call of a run runs on as a
            step (``"model:<turn>"``, ``"tool:<name>:<call id>"``), or an executor's name;
            None is the in-process one (see ``docs/durable.md``).
    """

    #: The end of each tool call's middleware chain (see :func:`run_tool`).
    _run_tool = run_tool

    def __init__(
        self,
        name: str = "agent",
        model: Model | str | Sequence[Model | str] | None = None,
        prompt: str | Prompt = "",
        tools: Sequence[Any] | ToolUnion = (),
        *,
        output: Any = None,
        request_builder: RequestBuilder | None = None,
        max_turns: int = 10,
        middlewares: Sequence[MiddlewareLike] = (),
        hooks: Hooks | None = None,
        max_parallel_tools: int = 8,
        tool_timeout: float | None = 300.0,
        output_retries: int = 2,
        checkpointer: Any = None,
        elicitor: Elicitor | None = None,
        budget: Budget | None = None,
        compaction: Folding | None = None,
        guardrail: Guardrail | str | None = None,
        model_deadline: float | None = DEFAULT_MODEL_DEADLINE,
        exporters: Sequence[SpanExporter] | None = None,
        manager: PluginManager | None = None,
        recorder: Recorder | None = None,
        verdict_observer: VerdictObserver | None = None,
        policy: PolicyEngine | str | os.PathLike[str] | None = None,
        policy_engine: str | None = None,
        settings: ModelSettings | None = None,
        description: str = "",
        guards: GuardOptions | GuardChain | Sequence[Guard] | None = None,
        executor: Executor | str | None = None,
        memory: MemoryGrounder | Memory | MemoryStore | None = None,
        limits: Limits | None = None,
    ) -> None:
        check_agent_arguments(locals())
        limits = record_of(
            Limits,
            limits,
            "Agent(limits=)",
            max_turns=max_turns,
            max_parallel_tools=max_parallel_tools,
            tool_timeout=tool_timeout,
            model_deadline=model_deadline,
            budget=budget,
        )
        checks = agent_guards(
            guards,
            guardrail=guardrail,
            policy=policy,
            policy_engine=policy_engine,
            verdict_observer=verdict_observer,
        )
        self._limit(limits)
        self.name = name
        self.description = description
        self.settings = check_settings(settings, "Agent(settings=)")
        self.manager = manager = manager_or_default(manager)  # Agent(...) is an edge
        self.model = resolve_model(model, manager=manager)
        self.output = output
        self._check_with(checks, middlewares)
        self._hooks = hooks
        self.output_retries = output_retries
        # a port becomes its Checkpointer once here, not once per snapshot (which would also
        # lose the version it wrote last)
        self.checkpointer = checkpointer_of(checkpointer)
        self.elicitor = elicitor
        self.compaction = agent_compaction(compaction)
        self.recorder = NULL_RECORDER if recorder is None else recorder
        self._offered: dict[str, Tool] | None = None
        self.executor = resolve_executor(executor, manager=manager, source="Agent(executor=)")
        self._exporters = None if exporters is None else check_exporters(exporters)
        self._typed_output(output, output_retries, manager)
        self.memory = as_grounder(memory, "Agent(memory=)")
        self.request_builder = self._builder(prompt, request_builder, memory)
        self._union = union = union_of(tools)
        self._tools = {} if union is not None else tool_table(name, tools)  # type: ignore[arg-type]

    def _limit(self, limits: Limits) -> None:
        """How far a run may go, each limit checked (``Agent(limits=)``)."""
        self.max_turns = check_count(limits.max_turns, "max_turns")
        self.max_parallel_tools = check_count(limits.max_parallel_tools, "max_parallel_tools")
        self.tool_timeout = check_deadline(limits.tool_timeout, "tool_timeout", 300.0)
        self.model_deadline = check_deadline(limits.model_deadline)
        self.budget = limits.budget

    def _check_with(self, checks: GuardOptions, middlewares: Sequence[MiddlewareLike]) -> None:
        """What checks a run (``Agent(guards=)``): guardrail (egress after the defaults), policy."""
        self.guardrail = guardrail = resolve_guardrail(checks.guardrail, manager=self.manager)
        egress: Sequence[MiddlewareLike] = ()
        if guardrail is not None:  # the URL and address checks load with a guardrail
            from ._guardrails import egress_for

            egress = egress_for(guardrail, middlewares)
        self.middlewares = (*default_middlewares(), *egress, *middlewares)
        self.verdict_observer = checks.verdict_observer
        self.policy = resolve_policy(
            checks.policy, engine=checks.policy_engine, manager=self.manager
        )
        self.guards: GuardChain | None = checks.guards  # type: ignore[assignment]  # chained
        self._turn_guards = self.guards if getattr(self.guards, "checks_turns", 0) else None

    def _builder(
        self, prompt: str | Prompt, given: RequestBuilder | None, memory: object
    ) -> RequestBuilder:
        """``request_builder=``, or the default one over ``prompt``; memory= fills its slot."""
        if given is None:
            return self._default_builder(prompt)
        if self.memory is not None:
            raise ConfigError(
                "Agent got both memory= and request_builder=; they fill one slot: pass "
                "RequestBuilder(grounding=MemoryGrounder(...)) or memory= alone",
                value=memory,
                source="Agent(memory=)",
            )
        return given

    def _typed_output(self, output: Any, retries: int, manager: PluginManager) -> None:
        """Typed output: adapt() picks the flavour; output_coerce() parses and repairs the answer.

        The schema rides on every request and, unless the model declares native structured
        output, in the prefix's schema block too (:meth:`_default_builder`).
        """
        self._adapter = self._coerce = self._output_request = None
        if output is not None:  # the output module loads with a typed output
            from ._output import output_coerce
            from ._output import output_request

            self._adapter = adapt(output, manager=manager)
            self._coerce = output_coerce(self._adapter, retries)
            self._output_request = output_request(self._adapter)

    def _default_builder(self, prompt: str | Prompt) -> RequestBuilder:
        """The request builder over ``prompt``, with the output schema the model needs shown."""
        text = prompt if isinstance(prompt, Prompt) else Prompt(self.name, "0", prompt)
        schema = None
        if self._adapter is not None:
            from ._output import supports_structured_output

            if not supports_structured_output(self.model):
                schema = self._adapter.json_schema()
        return RequestBuilder(
            text, output_schema=schema, grounding=self.memory, render=render_grounding_block
        )

    @classmethod
    def from_config(cls, config: AgentConfig, **overrides: Any) -> Agent:
        """An agent from a plain :class:`AgentConfig` (what ``Kit.config()`` returns).

        ``overrides`` go over its fields; a record there (``limits=Limits(...)``) replaces the
        fields it groups.
        """
        return cls(**config_options(config, overrides))  # type: ignore[arg-type]

    @functools.cached_property
    def hooks(self) -> Hooks:
        """The contested-field hooks this agent folds (the installed plugins' by default).

        Cached on first use: a turn reads it several times, as a plain attribute.
        """
        return plugin_hooks(self.manager) if self._hooks is None else self._hooks

    @property
    def exporters(self) -> list[SpanExporter]:
        """The span exporters every run tells of its spans (the installed plugins' by default)."""
        if self._exporters is None:
            self._exporters = span_exporters(manager=self.manager)
        return self._exporters

    # ------------------------------------------------------------------ running

    def new_context(
        self, run_id: str | None = None, *, parent: RunContext | None = None
    ) -> RunContext[DepsT]:
        """A fresh run context wired to this agent's model, middlewares and slots.

        ``parent`` is the run this one works for (a child agent's caller): the new run is bound
        to it (:meth:`RunContext.bind_to_parent`: its budget, checkpointer, elicitor and
        exporters), and secret taint flows between them (see :class:`RunContext`).
        """
        services = RunServices(
            checkpointer=self.checkpointer,
            recorder=self.recorder,
            elicitor=self.elicitor,
            guardrail=self.guardrail,
            policy=self.policy,
            verdict_observer=self.verdict_observer,
            guards=self.guards,
        )
        ctx: RunContext[DepsT] = RunContext(
            run_id=run_id,
            model=self.model,
            middlewares=self.middlewares,
            services=services,
            budget=self.budget,
            parent=parent,
            model_deadline=self.model_deadline,
        )
        ctx.manager = self.manager  # its calls are priced on this agent's plugins
        if parent is not None:
            ctx.bind_to_parent(self.name)
        return ctx

    async def run(
        self,
        task: Task,
        *,
        ctx: RunContext[DepsT] | None = None,
        wc: WorkingContext | None = None,
        settings: ModelSettings | None = None,
        on_event: Callable[[StreamEvent], None] | None = None,
        deps: DepsT | None = None,
    ) -> AgentResult:
        """Run the agent on ``task`` (text, or text and content parts: docs/content.md).

        Pass ``wc`` to continue a conversation across runs.

        ``deps`` is what the run's tools find as ``ctx.deps`` (``RunContext[MyDeps]``).
        ``settings`` go over the agent's own for this run's model requests, key by key.
        ``on_event`` is called, in the call's own task, with each of the model's stream events
        (the model calls are then streamed; ``"text"``, ``"tool_call"``, ``"done"``): what a
        durable executor publishes a run's stream from. :meth:`run_stream` yields them instead.
        """
        return await self._run(
            task, self._with_deps(ctx, deps, wc, on_event), wc, on_event, settings
        )

    async def run_stream(
        self,
        task: Task,
        *,
        ctx: RunContext[DepsT] | None = None,
        wc: WorkingContext | None = None,
        settings: ModelSettings | None = None,
        deps: DepsT | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Run like :meth:`run`, yielding the model's stream events as they arrive.

        Every model call of the run is streamed (``model.stream``) through the same middleware
        chain; each call's events end with its ``"done"``. With a typed ``output=``, a
        ``"partial"`` event follows each text delta. The last event is ``"result"``, holding
        the :class:`AgentResult`; a failing run raises from the iterator instead. A retried
        call's events are not taken back: the retry's events follow them.
        """
        from ._event_queue import EventQueue  # a streamed run's: not every run pays for it
        from ._event_queue import stopped

        queue: EventQueue[StreamEvent] = EventQueue()
        ctx = self._with_deps(ctx, deps, wc)
        runner = queue.run(functools.partial(self._run, task, ctx, wc, queue.put, settings))
        source: AsyncIterable[StreamEvent] = queue
        if self._adapter is not None:
            from ._output import stream_partials

            source = stream_partials(self._adapter, queue)
        try:  # the queue read here, not through a generator around it: a hop less an event
            async for event in source:
                yield event
            result = await runner
        finally:  # left early: the run is cancelled, and unwinds before the iterator closes
            await stopped(runner)
        yield StreamEvent("result", result=result)

    def run_stream_events(
        self,
        task: Task,
        *,
        ctx: RunContext[DepsT] | None = None,
        wc: WorkingContext | None = None,
        settings: ModelSettings | None = None,
        deps: DepsT | None = None,
    ) -> AsyncIterator[RunEvent]:
        """Run like :meth:`run`, yielding each step of the run as a typed event (docs/events.md).

        The model calls are streamed. The last event is :class:`RunFinished` (holding the
        :class:`AgentResult`), :class:`RunSuspended` or :class:`RunFailed`, after which a
        failed run's error is raised from the iterator. Leaving the iteration early (``break``,
        ``aclose``, cancelling the consumer) cancels the run, as cancelling :meth:`run` does.
        Nothing happens before the iteration starts.
        """
        from ._event_queue import stream_events

        def start(ctx: RunContext, sink: Callable[[StreamEvent], None]) -> Awaitable[AgentResult]:
            return self._run(task, ctx, wc, sink, settings)

        # the stream itself, not a generator around it: each event passes one generator
        return stream_events(
            functools.partial(self._with_deps, ctx, deps, wc), start, self._partials
        )

    def resume_stream_events(
        self,
        run_id: str,
        approvals: Answers = None,
        *,
        ctx: RunContext[DepsT] | None = None,
        wc: WorkingContext | None = None,
        settings: ModelSettings | None = None,
        deps: DepsT | None = None,
    ) -> AsyncIterator[RunEvent]:
        """Continue ``run_id`` as :meth:`resume` does, yielding its events as they happen.

        The events are :meth:`run_stream_events`'s: for a front that streams a run, holds it
        for approval and streams it on with the answers.
        """
        from ._event_queue import stream_events

        def context() -> RunContext:
            return self._with_deps(
                ctx if ctx is not None else unread(self.new_context(run_id)), deps, wc
            )

        def start(ctx: RunContext, sink: Callable[[StreamEvent], None]) -> Awaitable[AgentResult]:
            return self.resume(run_id, approvals, ctx=ctx, wc=wc, settings=settings, on_event=sink)

        return stream_events(context, start, self._partials)

    @property
    def _partials(self) -> Callable[[], OutputStream[object]] | None:
        """What parses the typed output of a streamed answer (a fresh one per answer)."""
        return None if self._adapter is None else self._adapter.stream

    async def _run(
        self,
        task: Task,
        ctx: RunContext | None,
        wc: WorkingContext | None,
        sink: Callable[[StreamEvent], None] | None,
        settings: ModelSettings | None,
    ) -> AgentResult:
        merged = self._settings_for(settings)
        ctx = self._bind(ctx if ctx is not None else unread(self.new_context()))
        wc = wc if wc is not None else WorkingContext()
        if wc.secret_tainted:  # the conversation so far holds a secret
            ctx.taint()
        built = await self.request_builder.build(task, wc, ctx)
        state = RunState(task_text(task), list(built.messages))
        return await self._drive(state, ctx, wc, merged, sink, task=wc.messages[-1])

    def _settings_for(self, settings: ModelSettings | None) -> ModelSettings:
        """The run's request settings: the agent's, with the run's own over them."""
        if not settings:
            return self.settings
        return merge_settings(self.settings, check_settings(settings, "run(settings=)"))

    def _with_deps(
        self,
        ctx: RunContext[DepsT] | None,
        deps: DepsT | None,
        wc: WorkingContext | None = None,
        on_event: Callable[[StreamEvent], None] | None = None,
    ) -> RunContext[DepsT]:
        """``ctx`` (a new one if None) carrying ``deps``; one already carrying others is refused.

        The run's other arguments of a kind to check (``wc``, ``on_event``) are checked too.
        """
        check_run_arguments(ctx, wc, on_event)
        ctx = ctx if ctx is not None else unread(self.new_context())
        if deps is not None:
            if ctx.deps is not None and ctx.deps is not deps:
                raise ConfigError(
                    f"run(deps=...) was given {deps!r}, but its ctx already carries deps "
                    f"{ctx.deps!r}; pass the deps one way: deps= or the context's own",
                    value=deps,
                    source="Agent.run(deps=)",
                )
            ctx.deps = deps
        return ctx

    def _claim(self, ctx: RunContext, service: str) -> None:
        """Give ``ctx`` this agent's ``service``; one it already carries must be the same."""
        given, mine = getattr(ctx, service), getattr(self, service)
        if given is None:
            setattr(ctx, service, mine)
        elif given is not mine:
            raise ConfigError(
                f"the run context carries the {service} {given!r}, but agent {self.name!r} "
                f"runs {mine!r}; a run has one {service}: pass it as the agent's {service}= "
                f"and leave ctx.{service} unset",
                value=given,
                source=f"RunContext.{service}",
            )

    def _bind(self, ctx: RunContext) -> RunContext:
        """``ctx`` with this agent's invoker, guardrail, policy, guards, manager where it has none.

        A context carrying another guardrail, policy or guard chain is refused: a run has one.
        """
        if ctx.agent_name is None:
            ctx.agent_name = self.name
        if ctx.manager is None:  # a context built by hand is priced on the agent's plugins
            ctx.manager = self.manager
        for service in ("guardrail", "policy", "guards"):
            self._claim(ctx, service)
        if ctx.invoker is None:
            ctx.invoker = self.new_context(ctx.run_id).invoker
            assert ctx.invoker is not None
            ctx.invoker.ctx = ctx
        return ctx

    async def _drive(
        self,
        state: RunState,
        ctx: RunContext,
        wc: WorkingContext,
        settings: ModelSettings,
        sink: Callable[[StreamEvent], None] | None = None,
        settle: Callable[[], Awaitable[AgentResult | None]] | None = None,
        task: Message | None = None,
    ) -> AgentResult:
        """Run the loop (after ``settle``) as this task's current run; an error marks it FAILED.

        ``settle`` settles a resumed run's pending calls; if it holds them for a person, its
        (suspended) result is the run's. The run first claims its recorder and records ``task``
        (a session another writer moved on fails here, before the model is called). A
        cancellation (or Ctrl-C) writes nothing: like a crash, it leaves the last RUNNING
        checkpoint in place, so the run can be resumed.
        """
        executor = self.executor
        await ctx.recorder.begin(ctx, task, steps=executor if executor.durable else None)
        if ctx.parent is None or self._exporters is not None:  # a child's go to its parent's
            ctx.trace.attach(self.exporters)
        token = _current_run.set(ctx)
        policy = self.policy
        held = False
        try:
            given: dict[str, object] = {"agent": self.name, "model": self.model.name}
            if session := ctx.recorder.session_id:
                given["session_id"] = session
                if task is not None:
                    given["task_item"] = ctx.recorder.last_id
            with ctx.trace.span("run", {"task": state.task}, **given) as span:
                try:
                    if task is not None and policy is not None:  # a user's message: a new task
                        from ._policy import grant_scope

                        policy.end_grants(grant_scope(ctx), ctx.run_id, ctx)
                    result = None if settle is None else await settle()
                    if result is None:
                        result = await self._loop(state, ctx, wc, settings, sink)
                except Exception:
                    await persist(self, ctx, state, "failed")
                    raise
                held = result.status == "suspended"
                result.cost, result.usage_by_model = ctx.cost, dict(ctx.usage_by_model)
                result.agent = state.agent or self.name
                stamp_run(span, result, ctx.trace.genai)
            span.genai = None  # read by the exporters (on_end): a span the run keeps needs no copy
            if (events := ctx.trace.events) is not None and events.run_id == ctx.run_id:
                events.finished(result, ctx.recorder.last_id)
            return result
        except Exception as exc:
            if (events := ctx.trace.events) is not None and events.run_id == ctx.run_id:
                events.failed(exc)
            raise
        finally:
            ctx.recorder.end(ctx)
            if not held:  # the engine of the agent a handoff left the run with, too
                for engine in {id(p): p for p in (policy, ctx.policy) if p is not None}.values():
                    engine.forget(ctx.run_id)
            if ctx.secret_tainted:  # what the conversation keeps from this run holds a secret
                wc.secret_tainted = True
            _current_run.reset(token)

    def run_sync(self, task: Task, **kwargs: Any) -> AgentResult:
        """:meth:`run` from synchronous code (not from inside a running event loop)."""
        return asyncio.run(self.run(task, **kwargs))

    async def resume(
        self,
        run_id: str,
        approvals: Answers = None,
        *,
        ctx: RunContext[DepsT] | None = None,
        wc: WorkingContext | None = None,
        settings: ModelSettings | None = None,
        on_event: Callable[[StreamEvent], None] | None = None,
        deps: DepsT | None = None,
    ) -> AgentResult:
        """Continue ``run_id`` from its latest checkpoint alone, in this process or a new one.

        A SUSPENDED run first settles its pending calls: those in ``approvals`` (a mapping of
        call id to True/False, the approved ids, or :class:`Approval` values saying who
        decided, as a policy engine's ``release`` returns them) run or are refused; the others
        are put to the policy and the before_tool_call hooks again, and one still waiting on
        approval is refused. A refused call's result is a tool error the model sees ("refused
        by a person", or the approval's reason). Each answer is recorded as an ``approval``
        verdict naming who gave it (``"person"`` when the approvals name no one). Only a call
        held on an ask takes an answer (:meth:`Approval.checked`): any other answer is an
        :class:`ApprovalRefused`, on the record, and the run stays as it was; a deny the
        policy makes now outweighs an approval.
        A batch of calls the run's process died in is settled first: a call that may run twice
        runs again, any other's outcome is unknown (see :class:`InProcessExecutor`).
        A RUNNING checkpoint (the process died mid-run) continues after its last turn. A DONE,
        FAILED or TAINTED run (a secret reached it), or none at all, is a :class:`ConfigError`.
        ``on_event`` and ``deps`` are as for :meth:`run` (deps are not checkpointed: give them
        again).
        """
        from ._resume import resume_run  # resuming needs the approval and handoff machinery

        given = ctx if ctx is not None else unread(self.new_context(run_id))
        ctx = self._with_deps(given, deps, wc, on_event)
        return await resume_run(
            self, run_id, approvals, ctx=ctx, wc=wc, settings=settings, on_event=on_event
        )

    async def _hold(self, ctx: RunContext, state: RunState, held: Suspend) -> AgentResult:
        """Suspend the run on its pending batch, ``held``'s calls waiting for a person."""
        state.verdicts = held.verdicts
        await persist(self, ctx, state, "suspended")
        return AgentResult(
            None,
            list(state.transcript),
            ctx.usage,
            ctx.run_id,
            "suspended",
            held.reason,
            held.pending,
        )

    async def _loop(
        self,
        state: RunState,
        ctx: RunContext,
        wc: WorkingContext,
        settings: ModelSettings,
        sink: Callable[[StreamEvent], None] | None = None,
        start: int | None = None,
    ) -> AgentResult:
        """Turn after turn: the request, the model's answer, its tool calls, until it answers.

        ``start`` is where the run's own messages begin (a handoff's target goes on from it).
        """
        start = len(state.transcript) if start is None else start
        # Specs are read once per set of tools: a fixed list's once a run, a union's each turn.
        offered: dict[str, Tool] | None = None
        specs: tuple[ToolSpec, ...] = ()
        handoffs = False  # whether a tool offered is a handoff: a batch to scan for one
        while state.turn < self.max_turns:
            state.turn += 1
            ctx.trace.step("turn", turn=state.turn)
            if self._union is None and self.policy is None:
                tools = self._tools
            else:
                tools = await self._current_tools()
            if tools is not offered:
                offered, specs = tools, tuple(t.spec for t in tools.values())
                handoffs = offers_handoff(tools)
            request = request_now(self, ctx, state, specs, settings, sink)
            if request is None:  # a hook or the fold awaits
                request, folded = await turn_request(self, ctx, state, specs, settings, sink)
                start = -1 if folded else start  # after a fold the conversation takes the tail
            response = await model_answer(self, ctx, state, request)
            calls = response.message.tool_calls
            if not calls:
                output = await final_output(self, ctx, response)
                return await self._finish(ctx, state, wc, start, output)
            outcome = await run_calls(self, calls, tools, ctx, state)
            if isinstance(outcome, Suspend):
                state.pending = list(calls)
                return await self._hold(ctx, state, outcome)
            state.pending = []
            state.transcript.extend(outcome)
            if type(ctx.recorder) is not NullRecorder:
                ctx.recorder.record_messages(ctx, outcome, source="tool")
            if handoffs and (taken := taken_handoff(calls, tools, outcome)) is not None:
                target = await hand_off(self, taken, ctx, state)
                await persist(target, ctx, state, "running")
                return await target._loop(state, ctx, wc, settings, sink, start)
            # with nothing keeping the run persist has nothing to write; a session alone whose
            # store never waits is written at once
            if keeps_state(self, ctx) and not persisted_now(self, ctx):
                await persist(self, ctx, state, "running")
            if not (self._turn_guards or self.hooks.should_stop_after_turn):
                continue  # nothing can stop the run here: no step to take for it
            stopped = await stopped_after_turn(self, ctx, state, wc, start, response, outcome)
            if stopped is not None:
                return stopped
        raise MaxTurnsExceeded(
            f"agent {self.name!r} reached max_turns={self.max_turns} with the model still "
            "calling tools; raise max_turns= or give the model a clearer stopping point",
            transcript=list(state.transcript),
        )

    async def _finish(
        self, ctx: RunContext, state: RunState, wc: WorkingContext, start: int, output: Any
    ) -> AgentResult:
        carry_over(wc, state.transcript, start)
        await persist(self, ctx, state, "done")
        return AgentResult(output, list(state.transcript), ctx.usage, ctx.run_id)

    async def _current_tools(self) -> dict[str, Tool]:
        """The tools of the turn: the union's (or the agent's), less what the policy removes."""
        policy = self.policy
        if self._union is None:
            if policy is None:
                return self._tools
            if self._offered is None:  # a fixed list is filtered once
                self._offered = {
                    n: t for n, t in self._tools.items() if policy.offers(n, USER_TOOLS)
                }
            return self._offered
        listed = await self._union.tools()
        if policy is None:
            return {t.name: t for t in listed}
        labels = {o.name: o.source for o in self._union.origins()}
        return {t.name: t for t in listed if policy.offers(t.name, labels.get(t.name, ""))}

    async def execute(
        self,
        calls: Sequence[ToolCall],
        tools: dict[str, Tool],
        ctx: RunContext,
        decisions: Sequence[ToolDecision | None] = (),
    ) -> list[Message]:
        """Run one batch of tool calls, as ``_tool_calls.execute_batch`` does; in call order."""
        return await execute_batch(self, calls, tools, ctx, decisions)
