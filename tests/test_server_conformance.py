"""``serve_asgi``, what the server plugins listen with, under the server conformance suite: a
server built on it passes; one that lacks an option, or tells ``ready`` twice, fails it. A port
that is taken or a host that does not resolve is a ConfigError naming it, leaking no socket."""

from __future__ import annotations

import asyncio
import gc
import socket
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core.cli import serve_asgi
from agentkit_core.plugin import ServerFactory
from agentkit_core.testing import ServerConformance


async def hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hello"})


async def hello_server(
    kit: Kit,
    *,
    host: str,
    port: int,
    ready: Callable[[str], None],
    token: str | None = None,
    ui: bool = False,
) -> None:
    if token is not None or ui:
        raise ConfigError(f"this server takes no {'token' if token else 'ui'}", source="serve")
    await serve_asgi(hello, host, port, ready)


class TestServeAsgiConformance(ServerConformance):
    def make_server(self) -> ServerFactory:
        return hello_server


async def no_ui_server(
    kit: Kit, *, host: str, port: int, ready: Callable[[str], None], token: str | None = None
) -> None:
    """The old scaffold's shape: ``ui`` is not in its signature."""
    await serve_asgi(hello, host, port, ready)


async def twice_ready_server(
    kit: Kit, *, host: str, port: int, ready: Callable[[str], None]
) -> None:
    def both(url: str) -> None:
        ready(url)
        ready(url)

    await serve_asgi(hello, host, port, both)


async def test_a_server_without_an_option_fails_the_suite() -> None:
    class Broken(ServerConformance):
        def make_server(self) -> ServerFactory:
            return no_ui_server

    with pytest.raises(AssertionError, match="raise a ConfigError naming 'ui'"):
        await Broken().test_an_option_is_served_or_refused_by_name("ui", True)


async def test_a_server_that_tells_ready_twice_fails_the_suite() -> None:
    class Broken(ServerConformance):
        def make_server(self) -> ServerFactory:
            return twice_ready_server

    with pytest.raises(AssertionError, match="not once"):
        await Broken().test_ready_names_a_url_that_listens_until_cancelled()


async def test_a_taken_port_is_a_config_error_naming_it_and_no_socket_is_left() -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with pytest.raises(ConfigError, match=f"127.0.0.1:{port}.*--port") as refused:
                await serve_asgi(hello, "127.0.0.1", port, print)
            gc.collect()
        assert refused.value.value == port
        assert [w for w in seen if issubclass(w.category, ResourceWarning)] == []
    finally:
        taken.close()


async def test_a_host_that_does_not_resolve_is_a_config_error_naming_it() -> None:
    host = "no-such-host.invalid"
    with pytest.raises(ConfigError, match=f"{host}.*--host"):
        await asyncio.wait_for(serve_asgi(hello, host, 0, print), 30)


async def test_ready_raising_closes_the_socket() -> None:
    def refuse(url: str) -> None:
        raise ConfigError(f"not serving {url}")

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(ConfigError, match=r"not serving http://127\.0\.0\.1:"):
            await serve_asgi(hello, "127.0.0.1", 0, refuse)
        gc.collect()
    assert [w for w in seen if issubclass(w.category, ResourceWarning)] == []
