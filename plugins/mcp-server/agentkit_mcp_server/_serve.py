"""Serve agentkit tools over MCP with the SDK's low-level ``Server``."""

from __future__ import annotations

import importlib
import json
import os
import sys
import warnings
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal

from agentkit_core import ConfigError
from agentkit_core import RunContext
from agentkit_core import Tool
from agentkit_core import ToolResult
from agentkit_core import agent_tool
from agentkit_core.content import AudioPart
from agentkit_core.content import DocumentPart
from agentkit_core.content import ImagePart
from agentkit_core.content import b64
from agentkit_core.content import part_text

from ._defaults import DEFAULT_PORT
from ._features import ClientModel
from ._features import ServedExtras
from ._features import client_can
from ._features import client_elicitor
from ._features import reset_request
from ._features import set_request
from ._features import unicode_safe

if TYPE_CHECKING:
    import mcp
    import mcp_types
    from mcp.server.auth.provider import TokenVerifier


def as_tools(target: Any, *, where: str = "tools") -> list[Tool]:
    """A Tool, an agent (served as one tool), or an iterable of those, as a list of tools."""
    if isinstance(target, Tool):
        return [target]
    if callable(getattr(target, "run", None)) and hasattr(target, "name"):
        return [agent_tool(target)]
    if isinstance(target, Iterable) and not isinstance(target, (str, bytes, dict)):
        tools = [t for item in target for t in as_tools(item, where=where)]
        names = [t.name for t in tools]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ConfigError(
                f"{where}: tool names must be unique; {', '.join(dupes)} appear more than once",
                value=dupes,
                source=where,
            )
        return tools
    raise ConfigError(
        f"{where}: expected an agentkit Tool, an agent or a list of them, "
        f"got {type(target).__name__}",
        value=target,
        source=where,
    )


def load_tools(ref: str) -> list[Tool]:
    """The tools named by ``module:attr`` (a Tool, an agent or a list of them)."""
    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(
            f"--tools {ref!r}: expected 'module:attr', e.g. 'mypkg.tools:TOOLS'",
            value=ref,
            source="--tools",
        )
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like uvicorn: a module beside the caller is found
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"--tools {ref!r}: cannot import {module_name!r}: {exc}", value=ref, source="--tools"
        ) from exc
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ConfigError(
                f"--tools {ref!r}: {module_name!r} has no attribute {attr!r}",
                value=ref,
                source="--tools",
            ) from None
    return as_tools(target, where=f"--tools {ref}")


def _content(result: ToolResult) -> list[mcp_types.ContentBlock]:
    import mcp_types

    if isinstance(result.content, str):
        return [mcp_types.TextContent(text=result.content)]
    return [_block(part) for part in result.content]


def _block(part: Any) -> mcp_types.ContentBlock:
    """One part of a tool's result as MCP content: typed parts by kind, dicts by their type."""
    import mcp_types

    if isinstance(part, (ImagePart, AudioPart)) and part.data is not None:
        kind = mcp_types.ImageContent if isinstance(part, ImagePart) else mcp_types.AudioContent
        return kind(data=b64(part.data), mime_type=str(part.media_type))
    if isinstance(part, DocumentPart) and part.data is not None:
        blob = mcp_types.BlobResourceContents(
            uri=f"attachment:{part.name or 'document'}",
            mime_type=part.media_type,
            blob=b64(part.data),
        )
        return mcp_types.EmbeddedResource(resource=blob)
    if isinstance(part, (ImagePart, DocumentPart)):  # by URL: the client fetches it
        url = str(part.url)
        return mcp_types.ResourceLink(uri=url, name=url, mime_type=part.media_type)
    text = part_text(part)
    if text is not None:
        return mcp_types.TextContent(text=text)
    if part.get("type") == "image_url":
        url = str(part["image_url"]["url"])
        head, _, data = url.partition(",")
        mime = head.removeprefix("data:").removesuffix(";base64") or "image/png"
        return mcp_types.ImageContent(data=data, mime_type=mime)
    return mcp_types.TextContent(text=json.dumps(part))


def _sendable(answer: mcp_types.CallToolResult) -> mcp_types.CallToolResult:
    """``answer``, with each lone surrogate in its strings replaced by U+FFFD when it has one.

    The SDK could not write such an answer: over stdio the whole server stopped, over HTTP
    the client got JSON it cannot read. The check is one serialization of the answer.
    """
    from pydantic_core import PydanticSerializationError

    try:
        answer.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError:
        data = answer.model_dump(by_alias=True, exclude_unset=True)
        return type(answer).model_validate(unicode_safe(data))
    return answer


def build_server(
    tools: Any,
    *,
    name: str = "agentkit",
    resources: Mapping[str, Any] | None = None,
    prompts: Mapping[str, Any] | None = None,
) -> mcp.server.Server[Any]:
    """An MCP ``Server`` listing ``tools`` with their JSON schemas and calling them.

    ``resources`` and ``prompts`` are served too (see ``_features``). Each call's
    :class:`~agentkit_core.RunContext` has the client's model (sampling) and its user
    (elicitation) when the client declares them.
    """
    import mcp_types
    from mcp.server import Server
    from mcp.shared.exceptions import MCPDeprecationWarning

    offered = {t.name: t for t in as_tools(tools)}
    extras = ServedExtras(resources, prompts)

    async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(
            tools=[
                mcp_types.Tool(
                    name=t.name,
                    description=t.description,
                    input_schema=t.parameters,
                    annotations=mcp_types.ToolAnnotations(read_only_hint=not t.side_effects),
                )
                for t in offered.values()
            ]
        )

    async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> Any:
        tool = offered.get(params.name)
        if tool is None:
            return mcp_types.CallToolResult(
                content=[
                    mcp_types.TextContent(
                        text=f"no tool named {params.name!r}; tools: {', '.join(offered)}"
                    )
                ],
                is_error=True,
            )
        token = set_request(ctx, extras)
        try:
            result = await tool.invoke(dict(params.arguments or {}), _run_context(ctx))
        except Exception as exc:  # a tool's failure is the caller's tool error, not our crash
            text = f"{tool.name} failed: {type(exc).__name__}: {exc}"
            return _sendable(
                mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)], is_error=True)
            )
        finally:
            reset_request(token)
        structured = result.structured
        return _sendable(
            mcp_types.CallToolResult(
                content=_content(result),
                is_error=result.is_error,
                structured_content=structured if isinstance(structured, dict) else None,
            )
        )

    with warnings.catch_warnings():
        # logging/setLevel is deprecated from 2026-07-28 on; 2025-era clients still send it
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        return Server(name, on_list_tools=list_tools, on_call_tool=call_tool, **extras.handlers())


def _run_context(ctx: Any) -> RunContext:
    """A served call's run: the client's model and user when the client offers them."""
    return RunContext(
        model=ClientModel(ctx) if client_can(ctx, "sampling") else None,
        elicitor=client_elicitor(ctx) if client_can(ctx, "elicitation") else None,
    )


async def serve_tools(
    tools: Any,
    *,
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    name: str = "agentkit",
    on_listening: Callable[[str], None] | None = None,
    resources: Mapping[str, Any] | None = None,
    prompts: Mapping[str, Any] | None = None,
    token_verifier: TokenVerifier | None = None,
    required_scopes: Sequence[str] = (),
    issuer_url: str | None = None,
) -> None:
    """Serve ``tools`` until the client hangs up (stdio) or the task is cancelled (HTTP).

    Over HTTP, ``token_verifier`` (the SDK's ``TokenVerifier``; :class:`BearerTokens` for
    fixed tokens) makes every request need ``Authorization: Bearer <token>`` it accepts,
    with ``required_scopes``; a request without one gets 401 naming the protected-resource
    metadata. ``issuer_url`` is the authorization server named there (the server's own URL
    when not given).

    Cancelling an HTTP server stops it cleanly: the port is closed when this returns. Over
    HTTP, ``on_listening(url)`` is called once the server accepts connections, with the URL
    clients use (``port=0`` picks a free port, which the URL names).
    """
    server = build_server(tools, name=name, resources=resources, prompts=prompts)
    if transport == "stdio":
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read_stream, write_stream):
            await _serve_stdio(server, read_stream, write_stream)
        return
    if transport != "http":
        raise ConfigError(
            f"transport must be 'stdio' or 'http', got {transport!r}",
            value=transport,
            source="serve_tools",
        )
    from agentkit_core.cli import serve_asgi

    app = server.streamable_http_app(
        host=host, **_auth(token_verifier, required_scopes, issuer_url, host, port)
    )

    def listening(url: str) -> None:
        if on_listening is not None:
            on_listening(f"{url}/mcp")

    # serve_asgi refuses what a web page elsewhere makes a browser send (its Origin, a name
    # rebound to this machine): the SDK's own check lets any local port's page in.
    await serve_asgi(app, host, port, listening, lifespan=True)


def _auth(
    verifier: TokenVerifier | None,
    scopes: Sequence[str],
    issuer: str | None,
    host: str,
    port: int,
) -> dict[str, Any]:
    """``streamable_http_app``'s auth keywords: none without a verifier."""
    if verifier is None:
        if scopes or issuer:
            raise ConfigError(
                "required_scopes= and issuer_url= need token_verifier= (who checks the tokens)",
                value=list(scopes) or issuer,
                source="serve_tools",
            )
        return {}
    from mcp.server.auth.settings import AuthSettings

    if port == 0:
        raise ConfigError(
            "token_verifier= needs a fixed port: the protected-resource metadata names the "
            "server's URL; give port=",
            value=port,
            source="serve_tools",
        )
    own = f"http://{_url_host(host)}:{port}"
    settings = AuthSettings(
        issuer_url=issuer or own,  # type: ignore[arg-type]
        resource_server_url=f"{own}/mcp",  # type: ignore[arg-type]
        required_scopes=list(scopes) or None,
        # the verifier checks a token's audience (BearerTokens' tokens are this server's own)
        validate_token_resource=False,
    )
    return {"auth": settings, "token_verifier": verifier}


def _url_host(host: str) -> str:
    """``host`` as it goes in a URL: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


async def _serve_stdio(server: Any, read_stream: Any, write_stream: Any) -> None:
    """Run ``server`` on stdio, answering each line it could not read instead of dropping it.

    The SDK's stdio transport drops a line that is not a valid JSON-RPC message (a lone
    surrogate escape, nesting past its parser's limit, ``params`` that are not an object), so
    the client would wait out its deadline. Here such a request gets an error at once, for its
    id when the line names one (``-32600``), else for id null (``-32700``, as over HTTP).
    """
    import anyio

    send, receive = anyio.create_memory_object_stream[Any](0)

    async def relay() -> None:
        async with send:
            async for item in read_stream:
                answer = _unreadable_answer(item) if isinstance(item, Exception) else None
                if answer is None:
                    await send.send(item)  # a message, or a failure the SDK logs as before
                else:
                    await write_stream.send(answer)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(relay)
        await server.run(receive, write_stream, server.create_initialization_options())
        tasks.cancel_scope.cancel()


def _unreadable_answer(exc: Exception) -> Any:
    """The JSON-RPC error answering the line ``exc`` failed to read, or None (not a request)."""
    from pydantic import ValidationError

    problems = exc.errors(include_url=False) if isinstance(exc, ValidationError) else []
    if not problems:
        return None
    first = problems[0]
    whole = (p["input"] for p in problems if isinstance(p.get("input"), dict))
    message = next((m for m in whole if "jsonrpc" in m), None)
    line = first.get("input")
    if isinstance(line, (str, bytes)):  # not even JSON to pydantic: perhaps to Python
        if not line.strip():
            return None  # a blank line: nothing was asked
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            message = _UNPARSED
    elif message is None and len(first.get("loc", ())) <= 1:
        message = line  # JSON, but no object
    # what the request branch of the message union says, where it says anything
    own = next((p for p in problems if p.get("loc", ())[:1] == ("JSONRPCRequest",)), first)
    where = ".".join(str(part) for part in own.get("loc", ())[1:])
    why = f"{where}: {own.get('msg')}" if where else str(own.get("msg"))
    return _error_answer(message, why)


#: A line no JSON parser could read.
_UNPARSED = object()


def _error_answer(message: Any, why: str) -> Any:
    import mcp_types
    from mcp.shared.message import SessionMessage

    request_id: Any = None
    if message is _UNPARSED:
        code, what = mcp_types.PARSE_ERROR, "Parse error"
    elif isinstance(message, dict):
        request_id = message.get("id")
        if "method" not in message or isinstance(request_id, bool):
            return None  # a reply or a notification: nobody waits on an answer
        if not isinstance(request_id, (int, str)):
            return None
        code, what = mcp_types.INVALID_REQUEST, "Invalid request"
    else:  # JSON, but no object: no request
        code, what = mcp_types.INVALID_REQUEST, "Invalid request"
    error = mcp_types.ErrorData(code=code, message=f"{what}: {why}")
    return SessionMessage(mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))
