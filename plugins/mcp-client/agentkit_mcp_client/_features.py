"""What a server may ask of the client: sampling, roots, and the notifications it sends.

One :class:`ClientFeatures` per connection gives the SDK's ``Client`` its callbacks. A server's
``sampling/createMessage`` is answered by the model of the run whose tool call is in flight on
that server (the latest such call's run, when several runs share the server), through the
run's invoker (so its budget, middlewares, egress guardrail and trace apply), after the run's
policy engine decided on it as on a tool call named :data:`SAMPLING_TOOL` from the server's
label. The decision is ``would`` plus a reported verdict, not ``check``: a run cannot suspend
for approval in the middle of a tool call, so nothing is held for release. Without a policy
engine a request is allowed; ``ask`` asks a person through the run's elicitor (refused
without one); ``deny`` refuses.
A refusal is an MCP error for the server, at once: a server never waits on a refused request.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import ElicitationError
from agentkit_core import GuardBlocked
from agentkit_core import Message
from agentkit_core import ModelSettings
from agentkit_core import RunContext
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import Span
from agentkit_core.plugin import Verdict
from agentkit_core.plugin import grant_scope

if TYPE_CHECKING:
    import mcp_types
    from mcp.shared.dispatcher import ProgressFnT

#: The tool name a policy sees for a server's sampling request (its source: the server's label).
SAMPLING_TOOL = "mcp_sampling"

#: Span attribute of a tool call that lists the progress notifications its server sent.
PROGRESS_ATTRIBUTE = "mcp_progress"

#: ``listener(uri)``: told that a resource changed on the server (``uri``), or that its list
#: of resources did (None).
ResourceListener = Callable[[str | None], Awaitable[None] | None]

_sampling_ids = itertools.count(1)


def check_roots(roots: Any) -> tuple[Path, ...]:
    """``roots=``: directories (one, or several), each made absolute; a missing one is an error."""
    if roots is None:
        return ()
    items = [roots] if isinstance(roots, (str, Path)) else list(roots)
    found: list[Path] = []
    for item in items:
        path = Path(item).expanduser().resolve()
        if not path.is_dir():
            raise ConfigError(
                f"roots= names {str(item)!r}, which is not a directory; give the workspace "
                "directories the servers may work in",
                value=item,
                source="MCPToolSource(roots=...)",
            )
        found.append(path)
    return tuple(found)


@dataclass
class ClientFeatures:
    """The client side of one connection: sampling, roots, resource updates, runs in flight."""

    label: str
    sampling: bool = True
    roots: tuple[Path, ...] = ()
    #: Told each ``notifications/resources/updated`` and ``.../list_changed`` (the resource
    #: parts re-read).
    listeners: list[ResourceListener] = field(default_factory=list)
    #: The runs with a tool call in flight on this server, the latest last.
    _runs: list[RunContext] = field(default_factory=list)

    def client_options(self) -> dict[str, Any]:
        """The ``mcp.Client`` keywords: only the capabilities this connection offers."""
        options: dict[str, Any] = {"message_handler": self._notified}
        if self.sampling:
            options["sampling_callback"] = self._sample
        if self.roots:
            options["list_roots_callback"] = self._list_roots
        return options

    @contextlib.contextmanager
    def running(self, ctx: RunContext | None) -> Iterator[None]:
        """While a tool call of ``ctx``'s run is in flight, its server samples through that run."""
        if ctx is None:
            yield
            return
        self._runs.append(ctx)
        try:
            yield
        finally:
            self._runs.remove(ctx)

    # ------------------------------------------------------------------ roots

    async def _list_roots(self, context: Any) -> mcp_types.ListRootsResult:
        import mcp_types
        from pydantic import FileUrl

        return mcp_types.ListRootsResult(
            roots=[
                mcp_types.Root(uri=FileUrl(p.as_uri()), name=p.name or str(p)) for p in self.roots
            ]
        )

    # ------------------------------------------------------------------ notifications

    async def _notified(self, message: Any) -> None:
        import mcp_types

        root = getattr(message, "root", message)
        if isinstance(root, mcp_types.ResourceUpdatedNotification):
            uri: str | None = str(root.params.uri)
        elif isinstance(root, mcp_types.ResourceListChangedNotification):
            uri = None
        else:
            return
        for listener in list(self.listeners):
            done = listener(uri)
            if done is not None:
                await done

    # ------------------------------------------------------------------ sampling

    async def _sample(
        self, context: Any, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        """Answer with the run's model, or an MCP error naming why not (never a hang)."""
        import mcp_types

        ctx = self._runs[-1] if self._runs else None
        if ctx is None:
            return _refused(
                f"{self.label}: a sampling request came with no agent run's tool call in flight "
                "on this server, so there is no run whose model may answer it"
            )
        if not params.messages:  # a model request with nothing in it: refused before anyone
            return _refused(
                f"{self.label}: the sampling request holds no message, so there is nothing to "
                "ask the run's model; send at least one message"
            )
        request, arguments = _sampling_request(params)
        why = await self._decide(ctx, arguments)
        if why is not None:
            return _refused(why)
        guards = ctx.guards
        try:
            invoker = ctx.invoker_for(source=f"{self.label} sampling", hint="run it in an agent")
            with ctx.trace.span("mcp_sampling", server=self.label):
                if guards is not None:  # what the server sends is an input like any other
                    request = guards.check_request(ctx, request)
                response = await invoker.chat(request)
                answer = response.message
                if guards is not None:
                    answer = guards.check_output(ctx, answer)
        except GuardBlocked as exc:
            return _refused(
                f"{self.label}: guard {exc.guard!r} refused the sampling request: {exc.reason}"
            )
        except Exception as exc:  # the model's failure is the server's error result
            return _refused(f"{self.label}: the run's model failed the sampling request: {exc}")
        stop = "maxTokens" if response.finish_reason in ("length", "max_tokens") else "endTurn"
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(text=answer.text),
            model=response.model or invoker.model.name,
            stop_reason=stop,
        )

    async def _decide(self, ctx: RunContext, arguments: dict[str, Any]) -> str | None:
        """None when the run's policy lets the request through, else why it does not."""
        policy = ctx.policy
        if policy is None:
            return None
        call = ToolCall(f"mcp-sampling-{next(_sampling_ids)}", SAMPLING_TOOL, json.dumps(arguments))
        decision = policy.would(call, source=self.label, scope=grant_scope(ctx))
        ctx.report_verdict(
            Verdict(
                "policy",
                "sampling",
                decision.kind,
                SAMPLING_TOOL,
                call.id,
                rule=decision.rule,
                plugin=policy.name,
                reason=decision.reason,
                tool_source=self.label,
            )
        )
        if decision.kind == "allow":
            return None
        if decision.kind == "ask":
            return await self._ask(ctx, decision, arguments)
        return _denied(self.label, decision)

    async def _ask(
        self, ctx: RunContext, decision: ToolDecision, arguments: dict[str, Any]
    ) -> str | None:
        if ctx.elicitor is None:
            return (
                f"{self.label}: the policy asks before a server samples the model "
                f"(rule {decision.rule or 'default'!r}) and the run has no elicitor to ask; "
                f"allow {SAMPLING_TOOL!r} from this source in the policy, or give the run an "
                "elicitor"
            )
        question = (
            f"The MCP server {self.label} asks to use this run's model with "
            f"{len(arguments['messages'])} message(s), the last: "
            f"{arguments['messages'][-1]['text'][:200]!r}. Allow it?"
        )
        schema = {"type": "object", "properties": {"allow": {"type": "boolean"}}}
        try:
            answer = await ctx.elicit(question, schema)
        except ElicitationError as exc:
            return f"{self.label}: asking whether to allow sampling failed: {exc}"
        if isinstance(answer, dict):
            answer = answer.get("allow")
        if answer is True or str(answer).strip().lower() in ("y", "yes", "allow", "true"):
            return None
        return f"{self.label}: a person declined the server's sampling request"


def _denied(label: str, decision: ToolDecision) -> str:
    reason = f": {decision.reason}" if decision.reason else ""
    return (
        f"{label}: the policy denies sampling (rule {decision.rule or 'default'!r}"
        f"{reason}); allow the tool {SAMPLING_TOOL!r} from this source to let it through"
    )


def _refused(message: str) -> mcp_types.ErrorData:
    import mcp_types

    return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=message)


def _sampling_request(
    params: mcp_types.CreateMessageRequestParams,
) -> tuple[ModelRequest, dict[str, Any]]:
    """The model request a sampling request makes, and what the policy sees of it."""
    messages: list[Message] = []
    if params.system_prompt:
        messages.append(Message.system(params.system_prompt))
    seen: list[dict[str, str]] = []
    for sampled in params.messages:
        parts = [_content_part(block) for block in sampled.content_as_list]
        text = "".join(str(p.get("text", "")) for p in parts)
        seen.append({"role": sampled.role, "text": text})
        content: Any = text if all(p["type"] == "text" for p in parts) else tuple(parts)
        messages.append(Message(sampled.role, content))
    settings = ModelSettings(max_tokens=params.max_tokens)
    if params.temperature is not None:
        settings["temperature"] = params.temperature
    if params.stop_sequences:
        settings["stop"] = list(params.stop_sequences)
    arguments = {
        "messages": seen,
        "system_prompt": params.system_prompt or "",
        "max_tokens": params.max_tokens,
    }
    return ModelRequest(tuple(messages), settings=settings), arguments


def _content_part(block: Any) -> dict[str, Any]:
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type in ("image", "audio"):
        from ._content import media_part

        return media_part(block.type, block.data, block.mime_type)
    return {"type": "text", "text": f"[{block.type} content left out]"}


def progress_recorder(span: Span, ctx: RunContext | None) -> ProgressFnT:
    """A progress callback that appends each notification to ``span`` (the tool call's).

    Each is also the run's ``tool_progress`` event (``ctx.report_progress``).
    """

    async def record(progress: float, total: float | None, message: str | None) -> None:
        events: list[dict[str, Any]] = span.attributes.setdefault(PROGRESS_ATTRIBUTE, [])
        events.append({"progress": progress, "total": total, "message": message, "at": time.time()})
        if ctx is not None:  # told from the session's own task: the call is named
            call_id = str(span.attributes.get("call_id", ""))
            ctx.report_progress(progress, total, message or "", call_id=call_id)

    return record


def uri_texts(contents: Sequence[Any]) -> str:
    """A resource's contents as text: text kept, binary named."""
    out = []
    for item in contents:
        text = getattr(item, "text", None)
        if text is None:
            out.append(f"[binary {item.uri} ({item.mime_type or 'unknown type'})]")
        else:
            out.append(text)
    return "\n".join(out)
