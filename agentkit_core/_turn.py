"""One turn of the loop, in its steps: the request, the model's answer, the end of the turn.

``Agent._loop`` runs the turns; these are its steps. A contested field no plugin or user
implements is not folded at all (its fold would return its argument unchanged): the loop pays
only for the fields someone has an opinion on. The null recorder's methods do nothing, so they
are not called (exactly NullRecorder; any other recorder, a subclass too, is called).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING
from typing import Any

from ._context import RunContext
from ._durability import persist
from ._errors import ProviderResponseError
from ._genai import run_genai
from ._hooks import TurnInfo
from ._messages import Message
from ._messages import TranscriptView
from ._models import STREAM_SINK
from ._models import ModelRequest
from ._models import ModelResponse
from ._models import ModelSettings
from ._models import StreamEvent
from ._models import ToolSpec
from ._recorder import NullRecorder
from ._requests import WorkingContext
from ._run_state import AgentResult
from ._run_state import RunState
from ._tool_calls import steps_inline
from ._tools import ToolResult

if TYPE_CHECKING:
    from ._agent import Agent
    from ._tracing import Span


async def turn_request(
    agent: Agent,
    ctx: RunContext,
    state: RunState,
    specs: tuple[ToolSpec, ...],
    settings: ModelSettings,
    sink: Callable[[StreamEvent], None] | None,
) -> tuple[ModelRequest, bool]:
    """The turn's model request, and whether the transcript was folded for it.

    The before_turn hooks' messages join the transcript; the transform hooks, then the fold,
    shape what is sent; the before_model_call hooks, then the guards, see the request.
    """
    hooks = agent.hooks
    rec = ctx.recorder
    if hooks.before_turn:
        added = await hooks.run_before_turn(ctx, TurnInfo(state.turn))
        state.transcript.extend(added)
        rec.record_messages(ctx, added, source="before_turn")
    if hooks.transform:
        messages = await hooks.run_transform(ctx, state.transcript)
    else:
        messages = state.transcript
    folded = False
    if agent.compaction is not None:
        view = messages
        messages = await agent.compaction.apply(ctx, state, view)
        folded = messages is not view
    request = _request(agent, ctx, state, messages, specs, settings, sink)
    if hooks.before_model_call:
        request = await hooks.run_before_model_call(ctx, request)
    return _checked(agent, ctx, request), folded


def request_now(
    agent: Agent,
    ctx: RunContext,
    state: RunState,
    specs: tuple[ToolSpec, ...],
    settings: ModelSettings,
    sink: Callable[[StreamEvent], None] | None,
) -> ModelRequest | None:
    """:func:`turn_request`'s request with no coroutine, when no step of it awaits; else None.

    Nothing awaits when no before_turn, transform or before_model_call hook is folded and no
    fold is set: the transcript as it is, guarded and on the record (never folded).
    """
    hooks = agent.hooks
    if (
        hooks.before_turn
        or hooks.transform
        or hooks.before_model_call
        or agent.compaction is not None
    ):
        return None
    request = _request(agent, ctx, state, state.transcript, specs, settings, sink)
    return _checked(agent, ctx, request)


def _request(
    agent: Agent,
    ctx: RunContext,
    state: RunState,
    messages: Sequence[Message],
    specs: tuple[ToolSpec, ...],
    settings: ModelSettings,
    sink: Callable[[StreamEvent], None] | None,
) -> ModelRequest:
    return ModelRequest(  # messages, tools, output, settings, ctx, metadata
        # the transcript as it is now, not copied (a view: a turn's cost stays flat)
        TranscriptView(state.transcript) if messages is state.transcript else tuple(messages),
        specs,
        agent._output_request,
        settings.copy(),
        ctx,
        {} if sink is None else {STREAM_SINK: sink},
    )


def _checked(agent: Agent, ctx: RunContext, request: ModelRequest) -> ModelRequest:
    """The request as the guards leave it, its instructions on the run's record."""
    if agent.guards is not None:
        request = agent.guards.check_request(ctx, request)
    rec = ctx.recorder
    if type(rec) is not NullRecorder:
        rec.record_instructions(ctx, request.messages)
    return request


async def model_answer(
    agent: Agent, ctx: RunContext, state: RunState, request: ModelRequest
) -> ModelResponse:
    """The model's answer to ``request``, guarded, in the transcript and on the record.

    The call is the turn's ``model:<turn>`` step (a plain await when steps run inline); typed
    output is parsed and repaired there, the repair messages joining the transcript.
    """
    assert ctx.invoker is not None
    rec = ctx.recorder
    model = ctx.invoker.model.name
    chat = ctx.invoker.chat
    response: ModelResponse
    if agent._coerce is not None:
        response, repairs = await agent.executor.step(
            f"model:{state.turn}",
            partial(_coerced, agent._coerce, request, chat),
            kind="model",
        )
        state.transcript.extend(repairs)
        rec.record_messages(ctx, repairs, source="repair", model=model)
    elif steps_inline(agent):
        response = await chat(request)
    else:
        response = await agent.executor.step(
            f"model:{state.turn}", partial(chat, request), kind="model"
        )
    message = response.message
    if not message.tool_calls and not message.text.strip():
        raise ProviderResponseError(
            f"model {agent.model.name!r} returned an empty answer (no text, no tool "
            f"calls) on turn {state.turn} of agent {agent.name!r}",
        )
    calls = message.tool_calls
    if len(calls) > 1 and len({c.id for c in calls}) < len(calls):
        # Answers, verdicts and results are matched to calls by id: one id on two calls would
        # let one approval answer both, or leave one a deny the other's approval meets.
        ids = [c.id for c in calls]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise ProviderResponseError(
            f"model {agent.model.name!r} gave one id to several tool calls of one answer "
            f"({', '.join(map(repr, twice))}) on turn {state.turn} of agent {agent.name!r}; "
            "each call needs its own id: fix the model plugin",
        )
    if agent.guards is not None and message.content and message.text:  # no call for ""
        guarded = agent.guards.check_output(ctx, message, state.turn)
        if guarded is not message:
            message = guarded
            response = replace(response, message=message, output=_reparse(agent, message))
    state.transcript.append(message)
    if type(rec) is not NullRecorder:
        rec.record_response(
            ctx,
            message,
            model=response.answered_by or model,
            usage=response.usage,
            finish_reason=response.finish_reason,
        )
    return response


async def final_output(agent: Agent, ctx: RunContext, response: ModelResponse) -> Any:
    """The run's output from the model's final answer, after the output_guard hooks.

    Typed (``output=``) it is the parsed answer; else the answer's text as the hooks left it.
    """
    message = response.message
    value = response.output if agent._adapter is not None else message.text
    hooks = agent.hooks
    if hooks.output_guard:
        message = await hooks.run_output_guard(ctx, message)
        if agent._adapter is None:
            value = message.text
    return value


async def stopped_after_turn(
    agent: Agent,
    ctx: RunContext,
    state: RunState,
    wc: WorkingContext,
    start: int,
    response: ModelResponse,
    outcome: list[Message],
) -> AgentResult | None:
    """The stopped run's result when the guards or a should_stop_after_turn hook end it."""
    guards = agent._turn_guards
    hooks = agent.hooks
    stop_hooks = bool(hooks.should_stop_after_turn)
    if guards is not None or stop_hooks:
        info = TurnInfo(state.turn, response, tuple(_results(outcome)))
    blocked = None if guards is None else guards.check_turn(ctx, info)
    if blocked is not None:
        carry_over(wc, state.transcript, start)
        await persist(agent, ctx, state, "done")
        return AgentResult(None, list(state.transcript), ctx.usage, ctx.run_id, "stopped", blocked)
    if stop_hooks:
        stop = await hooks.run_should_stop_after_turn(ctx, info)
        if stop is not None:
            from ._verdicts import Verdict

            ctx.report_verdict(
                Verdict(
                    "hook",
                    "should_stop_after_turn",
                    "stop",
                    reason=stop.reason,
                    plugin=stop.source,
                )
            )
            carry_over(wc, state.transcript, start)
            await persist(agent, ctx, state, "done")
            reason = f"{stop.source}: {stop.reason}"
            return AgentResult(
                None, list(state.transcript), ctx.usage, ctx.run_id, "stopped", reason
            )
    return None


def carry_over(wc: WorkingContext, transcript: list[Message], start: int) -> None:
    """Carry the run's new messages into the conversation's tail.

    ``start`` is where the run's own messages begin, or -1 after a fold: then the tail becomes
    the folded transcript after the prefix, so the next run sends the summary too.
    """
    if start >= 0:
        wc.messages.extend(transcript[start:])
    else:  # after a fold, which imported the units
        from ._units import head_length

        prefix = (
            len(wc.prefix) if wc.prefix is not None else head_length(transcript, all_system=True)
        )
        wc.messages[:] = transcript[prefix:]


def _reparse(agent: Agent, message: Message) -> Any:
    """The typed output of an answer a guard rewrote (None without ``output=``)."""
    return None if agent._adapter is None else agent._adapter.parse(message.text)


async def _coerced(coerce: Any, request: ModelRequest, chat: Any) -> tuple[Any, list[Message]]:
    """One typed-output model step: the response and the repair messages it took."""
    from ._output import REPAIRS  # loaded with the agent's typed output

    response = await coerce.wrap_model(request, chat)
    return response, list(request.metadata.pop(REPAIRS, ()))


def _results(messages: list[Message]) -> list[ToolResult]:
    return [ToolResult(m.content, m.is_error) for m in messages]


def stamp_run(span: Span, result: AgentResult, genai: bool) -> None:
    """The run's span gets what the run came to: its status, usage, cost and output.

    With ``genai`` (an exporter reads them), its GenAI names too, made here once.
    """
    span.set("status", result.status)
    span.set("stop_reason", result.stop_reason)
    span.set("input_tokens", result.usage.input_tokens)
    span.set("output_tokens", result.usage.output_tokens)
    span.set("requests", result.usage.requests)
    usage = result.usage
    if usage.cache_read_tokens or usage.cache_write_tokens or usage.reasoning_tokens:
        span.set("cache_read_tokens", usage.cache_read_tokens)
        span.set("cache_write_tokens", usage.cache_write_tokens)
        span.set("reasoning_tokens", usage.reasoning_tokens)
    if result.cost is not None:
        span.set("cost", result.cost)
    span.set("pending", [call.id for call in result.pending])
    span.payload["output"] = result.output
    if result.pending:
        span.payload["pending"] = result.pending
    if genai:
        span.genai = run_genai(span.attributes)
