"""The server conformance suite: what every registered server must do, whatever its protocol.

Subclass it in a test module with a name starting ``Test`` and give it ``make_server``, the
``serve`` function the plugin registers::

    class TestMyServer(ServerConformance):
        def make_server(self) -> ServerFactory:
            return serve

What it holds the server to, over real sockets: ``ready`` is told once, with a URL whose
host and port accept connections; cancelling the server ends it and closes that port; a port
already taken fails the call without ``ready``; and each option ``agentkit serve`` may pass
(``token``, ``ui``) is either served or refused with a ``ConfigError`` naming it, never a
``TypeError`` from a signature that lacks it. What a page on another site could make a browser
send runs nothing: an ``http://`` server answers 403 to a request with another site's
``Origin`` or addressed to another name (``serve_asgi`` refuses both before the app); a server
of another protocol answers an HTTP request with nothing.
Override ``open_kit`` when the server needs a kit of another shape (the default: a scripted
model, and no session store).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from collections.abc import Mapping
from urllib.parse import urlsplit

import pytest

from .._errors import AgentkitError
from .._errors import ConfigError
from .._kit import Kit
from ..hookspecs import ServerFactory
from ._models import ScriptedModel

#: How long a server may take to listen, or to stop once cancelled, in seconds.
WAIT = 30.0


class ServerConformance:
    """Contract tests for a server plugin's ``serve``; subclass, define ``make_server``."""

    def make_server(self) -> ServerFactory:
        raise NotImplementedError("define make_server() in the conformance subclass")

    async def open_kit(self) -> Kit:
        """The opened kit each test serves (a scripted model, nothing installed needed)."""
        return await Kit.open(model=ScriptedModel(["hello"] * 8))

    @contextlib.asynccontextmanager
    async def _serving(
        self, port: int = 0, options: Mapping[str, object] | None = None
    ) -> AsyncIterator[_Serving]:
        serve = self.make_server()
        async with await self.open_kit() as kit:
            serving = _Serving()
            serving.kit = kit

            async def run() -> None:  # a signature's TypeError fails the task, as any error
                await serve(
                    kit, host="127.0.0.1", port=port, ready=serving.ready, **(options or {})
                )

            task = serving.task = asyncio.ensure_future(run())
            try:
                yield serving
            finally:
                task.cancel()
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(task, WAIT)  # what it raised, the tests have read

    async def test_ready_names_a_url_that_listens_until_cancelled(self) -> None:
        async with self._serving() as serving:
            url = await serving.url()
            host, port = _address(url)
            _, writer = await asyncio.open_connection(host, port)
            writer.close()
            await writer.wait_closed()
            assert serving.urls == [url], f"ready was told {serving.urls}, not once"
            serving.task.cancel()
            done, _ = await asyncio.wait([serving.task], timeout=WAIT)
            assert done, f"the server went on {WAIT} s after it was cancelled"
        with pytest.raises(OSError):
            _, writer = await asyncio.open_connection(host, port)
            writer.close()

    async def test_a_port_already_taken_fails_without_ready(self) -> None:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            async with self._serving(port=taken.getsockname()[1]) as serving:
                done, _ = await asyncio.wait([serving.task], timeout=WAIT)
                assert done, f"the server neither listened nor failed within {WAIT} s"
                error = serving.task.exception()
                assert isinstance(error, OSError | AgentkitError), (
                    f"a port already taken raised {error!r}; let the OSError through, or "
                    "raise an AgentkitError naming the port"
                )
                assert serving.urls == [], "ready was told of a port the server never had"

    @pytest.mark.parametrize(("option", "value"), [("ui", True), ("token", "s3cret")])
    async def test_an_option_is_served_or_refused_by_name(self, option: str, value: object) -> None:
        async with self._serving(options={option: value}) as serving:
            listening: asyncio.Future[str] = asyncio.ensure_future(serving.url())
            either: list[asyncio.Future[str] | asyncio.Future[None]] = [listening, serving.task]
            done, _ = await asyncio.wait(either, timeout=WAIT, return_when=asyncio.FIRST_COMPLETED)
            if listening in done:
                return  # served
            listening.cancel()
            assert serving.task in done, f"{option}= neither served nor refused in {WAIT} s"
            error = serving.task.exception()
            assert isinstance(error, ConfigError) and option in str(error), (
                f"serve(..., {option}={value!r}) raised {error!r}: take the option, or "
                f"raise a ConfigError naming {option!r} (agentkit serve passes it when asked)"
            )

    @pytest.mark.parametrize(
        "forged",
        [{"Origin": "http://evil.example"}, {"Origin": "null"}, {"Host": "evil.example"}],
        ids=["another-site", "opaque-origin", "rebound-name"],
    )
    async def test_a_request_a_web_page_forged_runs_nothing(self, forged: dict[str, str]) -> None:
        async with self._serving() as serving:
            url = await serving.url()
            host, port = _address(url)
            headers = "".join(
                f"{k}: {v}\r\n" for k, v in {"Host": f"{host}:{port}", **forged}.items()
            )
            reader, writer = await asyncio.open_connection(host, port)
            try:
                writer.write(
                    f"POST / HTTP/1.1\r\n{headers}Content-Type: text/plain\r\n"
                    "Content-Length: 3\r\nConnection: close\r\n\r\nhi\n".encode()
                )
                answer = await asyncio.wait_for(reader.read(), WAIT)
            finally:
                writer.close()
            model = serving.kit.config().model
            asked = model.requests if isinstance(model, ScriptedModel) else []
            assert asked == [], f"a request with {forged} ran the agent"
            if urlsplit(url).scheme == "http":
                status = answer.split(b"\r\n", 1)[0]
                assert status.split()[1:2] == [b"403"], (
                    f"a request with {forged} was answered {status!r}: refuse it with a 403 "
                    "before the app reads it, as serve_asgi does"
                )
            else:  # a browser can send HTTP to any port: a server of its own protocol says nothing
                assert answer == b"", (
                    f"{url} answered {answer[:80]!r} to an HTTP request a page could send: "
                    "close a connection whose first line is an HTTP request line"
                )


class _Serving:
    """A server task and the URLs its ``ready`` was told."""

    task: asyncio.Future[None]
    kit: Kit

    def __init__(self) -> None:
        self.urls: list[str] = []
        self._told = asyncio.Event()

    def ready(self, url: str) -> None:
        self.urls.append(url)
        self._told.set()

    async def url(self) -> str:
        await asyncio.wait_for(self._told.wait(), WAIT)
        return self.urls[0]


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname and parts.port, f"ready was told {url!r}, which names no host:port"
    return parts.hostname, parts.port
