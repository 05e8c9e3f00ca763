"""What a served kit offers besides tools: resources, prompts, and the client's own services.

Resources are texts or bytes under URIs (a URI with ``{name}`` parts is a template read by a
function of those parts); a kit's instruction parts are served as resources
``agentkit://instructions/<part id>`` (:func:`kit_resources`). Prompts are templates whose
``{name}`` parts are their arguments, or functions returning messages. During a tool call,
the tool's :class:`~agentkit_core.RunContext` reaches the client: its model is the client's
(``sampling/createMessage``) and its elicitor asks the client's user (``elicitation/create``),
when the client declares those capabilities; :func:`report_progress` sends progress to a
caller that asked for it.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import re
import string
import warnings
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal

from agentkit_core import ConfigError
from agentkit_core import ElicitationError
from agentkit_core import Message
from agentkit_core import ProviderError
from agentkit_core import Usage
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse

if TYPE_CHECKING:
    import mcp_types

#: The JSON-RPC error for an unknown resource URI (MCP's resources/read).
RESOURCE_NOT_FOUND = -32002

#: The URI scheme of a kit's instruction parts served as resources.
INSTRUCTIONS_URI = "agentkit://instructions/"


@dataclass(frozen=True)
class ServedResource:
    """One resource: fixed ``text`` or ``data``, or ``read`` (called with a template's parts)."""

    text: str | None = None
    data: bytes | None = None
    read: Callable[..., Any] | None = None
    mime_type: str | None = None
    name: str = ""
    description: str = ""


@dataclass(frozen=True)
class ServedPrompt:
    """One prompt: ``template`` (``{name}`` parts are its arguments) or ``render(**args)``.

    ``render`` returns text (one user message), a list of :class:`~agentkit_core.Message`, or a
    list of ``(role, content block)`` pairs with MCP content blocks as dicts.
    """

    template: str | None = None
    render: Callable[..., Any] | None = None
    arguments: tuple[str, ...] = ()
    description: str = ""


def kit_resources(kit: Any) -> dict[str, ServedResource]:
    """A kit's instruction parts as resources, ``agentkit://instructions/<part id>``."""
    return {
        f"{INSTRUCTIONS_URI}{part.id}": ServedResource(
            text=part.text,
            mime_type="text/markdown",
            name=part.id,
            description=f"the {part.id!r} instruction part (from {part.source})",
        )
        for part in kit.parts()
    }


def _as_resource(uri: str, value: Any) -> ServedResource:
    if isinstance(value, ServedResource):
        return value
    if isinstance(value, str):
        return ServedResource(text=value, mime_type="text/plain")
    if isinstance(value, bytes):
        return ServedResource(data=value, mime_type="application/octet-stream")
    if callable(value):
        return ServedResource(read=value)
    raise ConfigError(
        f"resources[{uri!r}] is a {type(value).__name__}; give text, bytes, a function or a "
        "ServedResource",
        value=value,
        source="serve_tools(resources=...)",
    )


def _as_prompt(name: str, value: Any) -> ServedPrompt:
    if isinstance(value, ServedPrompt):
        prompt = value
    elif isinstance(value, str):
        prompt = ServedPrompt(template=value)
    elif callable(value):
        prompt = ServedPrompt(render=value)
    else:
        raise ConfigError(
            f"prompts[{name!r}] is a {type(value).__name__}; give a template string, a "
            "function or a ServedPrompt",
            value=value,
            source="serve_tools(prompts=...)",
        )
    if prompt.template is not None:
        names = [f for _, f, _, _ in string.Formatter().parse(prompt.template) if f]
        arguments = prompt.arguments or tuple(dict.fromkeys(names))
        said = prompt.template.splitlines()[0] if prompt.template else ""
        described = prompt.description or f"The prompt {said[:80]!r}"
        return ServedPrompt(prompt.template, None, arguments, described)
    assert prompt.render is not None
    arguments = prompt.arguments or tuple(inspect.signature(prompt.render).parameters)
    doc = (inspect.getdoc(prompt.render) or "").partition("\n")[0]
    described = prompt.description or doc or f"The prompt {name!r}"
    return ServedPrompt(None, prompt.render, arguments, described)


def _template(uri: str) -> re.Pattern[str] | None:
    """The pattern a templated URI (``test://item/{id}``) matches, or None for a plain URI."""
    if "{" not in uri:
        return None
    pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(uri))
    return re.compile(f"^{pattern}$")


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class ServedExtras:
    """The resource, prompt, completion, subscription and logging handlers of one server."""

    def __init__(self, resources: Mapping[str, Any] | None, prompts: Mapping[str, Any] | None):
        self.resources = {u: _as_resource(u, v) for u, v in (resources or {}).items()}
        self.prompts = {n: _as_prompt(n, v) for n, v in (prompts or {}).items()}
        self.templates = {u: p for u in self.resources if (p := _template(u)) is not None}
        self.subscribed: set[str] = set()
        self.log_level = "info"

    def handlers(self) -> dict[str, Any]:
        """The low-level ``Server``'s ``on_*`` keywords for what this server offers."""
        out: dict[str, Any] = {}
        if self.resources:
            out.update(
                on_list_resources=self._list_resources,
                on_list_resource_templates=self._list_templates,
                on_read_resource=self._read_resource,
                on_subscribe_resource=self._subscribe,
                on_unsubscribe_resource=self._unsubscribe,
            )
        if self.prompts:
            out.update(on_list_prompts=self._list_prompts, on_get_prompt=self._get_prompt)
        out.update(on_completion=self._complete, on_set_logging_level=self._set_level)
        return out

    # ------------------------------------------------------------------ resources

    async def _list_resources(self, ctx: Any, params: Any) -> mcp_types.ListResourcesResult:
        import mcp_types

        return mcp_types.ListResourcesResult(
            resources=[
                mcp_types.Resource(
                    uri=uri,
                    name=r.name or uri,
                    description=r.description or None,
                    mime_type=r.mime_type,
                )
                for uri, r in self.resources.items()
                if uri not in self.templates
            ]
        )

    async def _list_templates(self, ctx: Any, params: Any) -> mcp_types.ListResourceTemplatesResult:
        import mcp_types

        return mcp_types.ListResourceTemplatesResult(
            resource_templates=[
                mcp_types.ResourceTemplate(
                    uri_template=uri,
                    name=self.resources[uri].name or uri,
                    description=self.resources[uri].description or None,
                    mime_type=self.resources[uri].mime_type,
                )
                for uri in self.templates
            ]
        )

    async def _read_resource(self, ctx: Any, params: Any) -> mcp_types.ReadResourceResult:
        import mcp_types
        from mcp.shared.exceptions import MCPError

        uri = str(params.uri)
        found = self.resources.get(uri)
        parts: dict[str, str] = {}
        if found is None or uri in self.templates:
            found = None
            for template, pattern in self.templates.items():
                match = pattern.match(uri)
                if match:
                    found, parts = self.resources[template], match.groupdict()
                    break
        if found is None:
            raise MCPError(RESOURCE_NOT_FOUND, f"no resource {uri!r}; see resources/list")
        value: Any = found.text if found.text is not None else found.data
        if found.read is not None:
            value = await _maybe_await(found.read(**parts))
        if isinstance(value, bytes):
            import base64

            blob = base64.b64encode(value).decode()
            content: Any = mcp_types.BlobResourceContents(
                uri=uri, blob=blob, mime_type=found.mime_type or "application/octet-stream"
            )
        else:
            content = mcp_types.TextResourceContents(
                uri=uri, text=str(value), mime_type=found.mime_type or "text/plain"
            )
        return mcp_types.ReadResourceResult(contents=[content])

    async def _subscribe(self, ctx: Any, params: Any) -> mcp_types.EmptyResult:
        import mcp_types

        self.subscribed.add(str(params.uri))
        return mcp_types.EmptyResult()

    async def _unsubscribe(self, ctx: Any, params: Any) -> mcp_types.EmptyResult:
        import mcp_types

        self.subscribed.discard(str(params.uri))
        return mcp_types.EmptyResult()

    # ------------------------------------------------------------------ prompts

    async def _list_prompts(self, ctx: Any, params: Any) -> mcp_types.ListPromptsResult:
        import mcp_types

        return mcp_types.ListPromptsResult(
            prompts=[
                mcp_types.Prompt(
                    name=name,
                    description=p.description or None,
                    arguments=[
                        mcp_types.PromptArgument(name=a, required=True) for a in p.arguments
                    ],
                )
                for name, p in self.prompts.items()
            ]
        )

    async def _get_prompt(self, ctx: Any, params: Any) -> mcp_types.GetPromptResult:
        import mcp_types
        from mcp.shared.exceptions import MCPError

        prompt = self.prompts.get(params.name)
        if prompt is None:
            raise MCPError(
                mcp_types.INVALID_PARAMS,
                f"no prompt named {params.name!r}; prompts: {', '.join(self.prompts)}",
            )
        args = dict(params.arguments or {})
        missing = [a for a in prompt.arguments if a not in args]
        if missing:
            raise MCPError(
                mcp_types.INVALID_PARAMS,
                f"prompt {params.name!r} needs the arguments {', '.join(missing)}",
            )
        if prompt.template is not None:
            rendered: Any = prompt.template.format(**args)
        else:
            assert prompt.render is not None
            rendered = await _maybe_await(prompt.render(**args))
        return mcp_types.GetPromptResult(
            description=prompt.description or None, messages=_prompt_messages(rendered)
        )

    # ------------------------------------------------------------------ completion, logging

    async def _complete(self, ctx: Any, params: Any) -> mcp_types.CompleteResult:
        """No suggestions: the capability is declared, the values are up to a later version."""
        import mcp_types

        return mcp_types.CompleteResult(completion=mcp_types.Completion(values=[]))

    async def _set_level(self, ctx: Any, params: Any) -> mcp_types.EmptyResult:
        import mcp_types

        self.log_level = params.level
        return mcp_types.EmptyResult()


def _prompt_messages(rendered: Any) -> list[mcp_types.PromptMessage]:
    import mcp_types
    from pydantic import TypeAdapter

    if isinstance(rendered, str):
        rendered = [Message.user(rendered)]
    blocks: TypeAdapter[Any] = TypeAdapter(mcp_types.ContentBlock)
    out = []
    for item in rendered:
        if isinstance(item, Message):
            role: Literal["user", "assistant"] = "assistant" if item.role == "assistant" else "user"
            out.append(mcp_types.PromptMessage(role=role, content=_text_block(item.text)))
        else:
            said, block = item
            out.append(
                mcp_types.PromptMessage.model_validate(
                    {"role": said, "content": blocks.validate_python(block)}
                )
            )
    return out


def _text_block(text: str) -> mcp_types.TextContent:
    import mcp_types

    return mcp_types.TextContent(text=text)


# ---------------------------------------------------------------------- during a tool call

#: The request a served tool is answering (its context), for report_progress and log.
_request: contextvars.ContextVar[Any] = contextvars.ContextVar("agentkit_mcp_request")
#: The server's extras (the client's log level) while a served tool runs.
_extras: contextvars.ContextVar[ServedExtras | None] = contextvars.ContextVar(
    "agentkit_mcp_extras", default=None
)

#: MCP's log levels, least severe first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


#: A UTF-16 surrogate on its own: a Python string may hold one (``os.fsdecode`` of a name that
#: is not UTF-8 does), JSON text cannot.
_SURROGATE = re.compile("[\ud800-\udfff]")


def unicode_safe(value: Any) -> Any:
    """``value`` (text, or JSON data) with each lone surrogate replaced by U+FFFD.

    What a served call sends its client must be JSON: unchanged, such a string stopped the
    whole stdio server (the SDK's writer raised) and gave an HTTP client JSON it cannot read.
    """
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {unicode_safe(k): unicode_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [unicode_safe(v) for v in value]
    return value


def set_request(ctx: Any, extras: ServedExtras) -> contextvars.Token[Any]:
    _extras.set(extras)
    return _request.set(ctx)


def reset_request(token: contextvars.Token[Any]) -> None:
    _request.reset(token)


async def report_progress(progress: float, total: float | None = None, message: str = "") -> bool:
    """Tell the caller of the tool being served how far it is; False when nobody asked.

    A served tool calls it; the caller gets ``notifications/progress`` when it sent a progress
    token with the call.
    """
    ctx = _request.get(None)
    meta = getattr(ctx, "meta", None) or {}
    token = meta.get("progress_token", meta.get("progressToken"))
    if token is None:
        return False
    await ctx.session.send_progress_notification(
        token,
        progress,
        total,
        unicode_safe(message) or None,
        related_request_id=str(ctx.request_id),
    )
    return True


def client_can(ctx: Any, capability: str) -> bool:
    """Whether the client of this request declared ``capability`` (``sampling``, ...)."""
    import mcp_types

    try:
        return bool(
            ctx.session.check_client_capability(
                mcp_types.ClientCapabilities.model_validate({capability: {}})
            )
        )
    except Exception:  # a session that cannot tell (a 2026 per-request one): no
        return False


class ClientModel:
    """The MCP client's model, asked through ``sampling/createMessage``: a served call's model."""

    name = "mcp-client:sampling"

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx

    async def request(self, request: ModelRequest) -> ModelResponse:
        import mcp_types

        said = "\n\n".join(m.text for m in request.messages if m.role == "system")
        system: str | None = unicode_safe(said) or None
        messages = [
            mcp_types.SamplingMessage(
                role="assistant" if m.role == "assistant" else "user",
                content=mcp_types.TextContent(text=unicode_safe(m.text)),
            )
            for m in request.messages
            if m.role != "system"
        ]
        _handshake_era(self._ctx, "sample the client's model")
        try:
            with _deprecated_ok():
                result = await self._ctx.session.create_message(
                    messages,
                    max_tokens=int(request.settings.get("max_tokens", 1000)),
                    system_prompt=system,
                    temperature=request.settings.get("temperature"),
                    related_request_id=self._ctx.request_id,
                )
        except Exception as exc:
            raise ProviderError(f"the MCP client refused or failed sampling: {exc}") from exc
        text = getattr(result.content, "text", "") or ""
        finish = "length" if result.stop_reason == "maxTokens" else "stop"
        return ModelResponse(Message.assistant(text), Usage(), finish, result.model)

    async def stream(self, request: ModelRequest) -> Any:
        from agentkit_core.plugin import StreamEvent

        response = await self.request(request)
        yield StreamEvent("text", text=response.message.text)
        yield StreamEvent("done", response=response)


def client_elicitor(ctx: Any) -> Callable[[str, Any, bool], Any]:
    """An elicitor that asks the MCP client's user (form mode); None when they decline."""

    async def elicit(question: str, schema: Any, secret: bool) -> Any:
        requested = schema or {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
        }
        _handshake_era(ctx, "ask the client's user")
        with _deprecated_ok():
            result = await ctx.session.elicit_form(
                unicode_safe(question), unicode_safe(requested), related_request_id=ctx.request_id
            )
        if result.action != "accept":
            return None
        content = result.content or {}
        problem = _unfit(content, requested)
        if problem is not None:
            raise ElicitationError(
                f"the MCP client's answer to {question!r} does not fit the question's schema: "
                f"{problem}; it is refused, not taken as an answer"
            )
        return content if schema else content.get("answer")

    return elicit


#: The Python types a JSON value of each elicitation property type may have (bool is no number).
_KINDS: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
}


def _unfit(content: Mapping[str, Any], schema: Mapping[str, Any]) -> str | None:
    """Why an accepted elicitation's ``content`` does not fit ``schema``; None when it does.

    A form's schema is a flat object of primitive properties (MCP's elicitation schema): each
    answer is checked for its property's type (``"false"`` is no boolean, ``1`` no boolean,
    ``True`` no number), its ``enum``/``oneOf`` choices and bounds; a required property must be
    answered, and a key the form did not ask for is refused.
    """
    properties = schema.get("properties") or {}
    asked = [name for name in schema.get("required") or () if content.get(name) is None]
    if asked:
        return f"it leaves the required {', '.join(map(repr, asked))} unanswered"
    for name, value in content.items():
        if name not in properties:
            return f"{name!r} was not asked for (the form asks {', '.join(map(repr, properties))})"
        if value is not None:
            problem = _unfit_value(value, properties[name])
            if problem is not None:
                return f"{name!r} {problem}, got {value!r}"
    return None


def _unfit_value(value: Any, prop: Mapping[str, Any]) -> str | None:
    kind = prop.get("type")
    allowed = _KINDS.get(kind) if isinstance(kind, str) else None
    if allowed is not None:
        if isinstance(value, bool) and kind != "boolean":
            return f"must be a {kind}"
        if not isinstance(value, allowed) or (kind == "integer" and isinstance(value, float)):
            return f"must be a{'n' if kind in ('integer', 'array') else ''} {kind}"
    choices = _choices(prop)
    items = _choices(prop.get("items") or {})
    if choices is not None and value not in choices:
        return f"must be one of {choices}"
    if isinstance(value, list) and (
        any(not isinstance(v, str) or (items is not None and v not in items) for v in value)
    ):
        return f"must list strings{f' of {items}' if items is not None else ''}"
    size = len(value) if isinstance(value, (str, list)) else value
    low = prop.get("minimum", prop.get("minLength", prop.get("minItems")))
    high = prop.get("maximum", prop.get("maxLength", prop.get("maxItems")))
    if isinstance(size, (int, float)) and not isinstance(value, bool):
        if isinstance(low, (int, float)) and size < low:
            return f"is below its minimum {low}"
        if isinstance(high, (int, float)) and size > high:
            return f"is above its maximum {high}"
    return None


def _choices(prop: Mapping[str, Any]) -> list[Any] | None:
    """A property's allowed values: its ``enum``, or the ``const`` of each ``oneOf``/``anyOf``."""
    if isinstance(prop.get("enum"), list):
        return list(prop["enum"])
    options = prop.get("oneOf") or prop.get("anyOf")
    if isinstance(options, list) and options and all("const" in o for o in options):
        return [o["const"] for o in options]
    return None


def _handshake_era(ctx: Any, doing: str) -> None:
    """Refuse, naming the fix, where a served call cannot ask its client mid-call."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        raise ProviderError(
            f"a served tool cannot {doing} in a {ctx.protocol_version} session (that protocol "
            "has no server-to-client requests during a call); the client must connect with "
            "the 2025-11-25 handshake (agentkit-mcp-client: protocol='legacy')"
        )


@contextlib.contextmanager
def _deprecated_ok() -> Iterator[None]:
    """The SDK marks sampling and elicitation deprecated for 2026 sessions; these are 2025's."""
    from mcp.shared.exceptions import MCPDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield


async def log(level: str, data: Any, logger: str | None = None) -> bool:
    """Send the caller of the tool being served a log message; False when it is not sent.

    Sent at or above the level the client set (``logging/setLevel``; ``info`` until it does).
    """
    if level not in LOG_LEVELS:
        raise ConfigError(
            f"log level {level!r} is not one of MCP's: {', '.join(LOG_LEVELS)}",
            value=level,
            source="agentkit_mcp_server.log",
        )
    ctx, extras = _request.get(None), _extras.get()
    if ctx is None or extras is None:
        return False
    if LOG_LEVELS.index(level) < LOG_LEVELS.index(extras.log_level):
        return False
    with _deprecated_ok():
        await ctx.session.send_log_message(
            level, unicode_safe(data), unicode_safe(logger), related_request_id=ctx.request_id
        )
    return True
