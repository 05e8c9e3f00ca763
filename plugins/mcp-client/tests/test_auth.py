"""Authenticated HTTP servers, for real: an OAuth server built with the SDK's own
authorization-server support, and a bearer-token server, each in its own process.

The "browser" is httpx following the authorization URL's redirects back to the client's
listener on 127.0.0.1 (the server approves every request at once).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import agentkit_mcp_client
import httpx
import pytest
from agentkit_mcp_client import HttpServer
from agentkit_mcp_client import MCPToolSource
from agentkit_mcp_client import login
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from mcp_client_helpers import SERVERS
from mcp_client_helpers import free_port
from mcp_client_helpers import wait_port

from agentkit_core import ConfigError
from agentkit_core import PluginManager
from agentkit_core import ToolSourceError
from agentkit_core import hookimpl
from agentkit_core.plugin import get_tool_source
from agentkit_core.plugin import open_mcp_token_store

ROOT = Path(__file__).resolve().parents[3]


def start(*args: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVERS / "auth_server.py"), args[0], str(port), *args[1:]],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_port(port)
    return proc, f"http://127.0.0.1:{port}/mcp"


def stop(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(10)


@pytest.fixture
def oauth() -> Iterator[str]:
    proc, url = start("oauth", "2")  # access tokens live 2 s: refresh is exercised
    yield url
    stop(proc)


TOKEN = "s3cret-token-that-must-never-show"


@pytest.fixture
def bearer() -> Iterator[str]:
    proc, url = start("bearer", TOKEN)
    yield url
    stop(proc)


async def browser(url: str) -> None:
    """Open the authorization URL the way a browser would, following the redirects."""
    async with httpx.AsyncClient(follow_redirects=True) as client:
        answer = await client.get(url)
    assert answer.status_code == 200, answer.text


def follow(url: str) -> None:
    asyncio.get_running_loop().create_task(browser(url))


async def whoami(server: object) -> str:
    async with MCPToolSource([server]) as source:
        (tool,) = await source.list_tools()
        return str((await tool.invoke({}, None)).content)


def manager() -> PluginManager:
    pm = PluginManager(entry_points=False)
    pm.register(agentkit_mcp_client, name="mcp-client")
    return pm


# ----------------------------------------------------------------------------- OAuth


async def test_login_then_connect_refresh_and_restart_reuse_the_grant(oauth, tmp_path):
    store = f"file://{tmp_path}/tokens"
    await login(oauth, user="ann", store=store, authorize=follow)
    spec = {"url": oauth, "auth": "oauth", "token_store": store, "user": "ann"}
    assert await whoami(spec) == "oauth ok"  # no browser: the stored grant

    opened = await open_mcp_token_store(store, manager=manager())
    first = await opened.get(oauth, "ann")
    assert first is not None and first["client"]["client_id"]  # registered dynamically
    await asyncio.sleep(2.5)  # the access token expires
    assert await whoami(spec) == "oauth ok"  # a restart: a new source, refreshed on first use
    second = await opened.get(oauth, "ann")
    assert second is not None
    assert second["tokens"]["access_token"] != first["tokens"]["access_token"]
    assert second["tokens"]["refresh_token"] != first["tokens"]["refresh_token"]
    await opened.aclose()


async def test_each_user_has_their_own_grant(oauth, tmp_path):
    store = f"sqlite:///{tmp_path}/tokens.db"
    await login(oauth, user="ann", store=store, authorize=follow)
    with pytest.raises(ToolSourceError) as caught:
        await whoami({"url": oauth, "auth": "oauth", "token_store": store, "user": "bob"})
    message = str(caught.value)
    assert "no OAuth grant for user 'bob'" in message
    assert f"agentkit mcp login {oauth} --user bob --store {store}" in message


class KeptGrants:
    """A token store only the manager it is registered on knows: ``kept://``, grants in a dict."""

    AGENTKIT_NAME = "kept-grants"

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    @hookimpl
    def agentkit_register_mcp_token_stores(self, register: Callable[..., None]) -> None:
        register("kept", self.open)

    def open(self, url: str) -> KeptGrants:
        self.url = url
        return self

    async def get(self, server: str, user: str) -> None:
        self.asked.append((server, user))

    async def put(self, server: str, user: str, value: object) -> None:
        raise AssertionError("no grant to keep")

    async def delete(self, server: str, user: str) -> None:
        pass

    async def aclose(self) -> None:
        pass


async def test_a_token_store_url_opens_on_the_manager_that_built_the_source(oauth, pm):
    """A kit's source (the lookup passes its manager) opens the store on the kit's plugins; a
    source built by hand, on this plugin's own stores, never the process-wide manager's."""
    grants = KeptGrants()
    pm.register(grants)
    spec = {"url": oauth, "auth": "oauth", "token_store": "kept://grants", "user": "ann"}
    source = get_tool_source("mcp", manager=pm, servers=[spec])  # as Kit(mcp=[spec]) does
    assert source.manager is pm
    with pytest.raises(ToolSourceError, match="no OAuth grant for user 'ann'"):
        await source.start()
    assert grants.asked == [(oauth, "ann")]
    with pytest.raises(ToolSourceError, match=r"'kept://grants': without a plugin manager"):
        await whoami(spec)


OTHER = "https://other.example/mcp"


@pytest.mark.parametrize("kind", ["file", "sqlite"])
@pytest.mark.parametrize("expired", [False, True])
async def test_a_revoked_grant_is_a_clear_error_naming_the_login(oauth, tmp_path, kind, expired):
    """Revoked, the grant is refused as sent (then its refresh too) or, once expired, its refresh
    is: either way it leaves the store, and only it."""
    store = f"file://{tmp_path}/tokens" if kind == "file" else f"sqlite:///{tmp_path}/tokens.db"
    await login(oauth, user="ann", store=store, authorize=follow)
    opened = await open_mcp_token_store(store, manager=manager())
    grant = await opened.get(oauth, "ann")
    kept = {(OTHER, "ann"): {"tokens": {"access_token": "other"}}, (oauth, "bob"): {"x": 1}}
    for (server, user), value in kept.items():
        await opened.put(server, user, value)
    assert grant is not None
    client = grant["client"]
    async with httpx.AsyncClient() as http:
        revoked = await http.post(
            oauth.replace("/mcp", "/revoke"),
            data={
                "token": grant["tokens"]["refresh_token"],
                "client_id": client["client_id"],
                **({"client_secret": client["client_secret"]} if "client_secret" in client else {}),
            },
        )
    assert revoked.status_code == 200, revoked.text
    if expired:
        await asyncio.sleep(2.5)  # the access token expires: the refresh is what is refused
    spec = {"url": oauth, "auth": "oauth", "token_store": store, "user": "ann"}
    with pytest.raises(ToolSourceError) as caught:
        await whoami(spec)
    message = str(caught.value)
    assert "refused the stored OAuth grant for user 'ann'" in message, message
    assert "it was revoked (the authorization server answered a refresh with invalid_grant)" in (
        message
    )
    assert "removed from the token store" in message
    assert f"agentkit mcp login {oauth} --user ann --store {store}" in message
    assert grant["tokens"]["access_token"] not in message
    assert await opened.get(oauth, "ann") is None
    for (server, user), value in kept.items():
        assert await opened.get(server, user) == value
    await opened.aclose()
    with pytest.raises(ToolSourceError, match="no OAuth grant for user 'ann'"):
        await whoami(spec)  # the next start asks for a login at once


async def test_the_login_command_prints_the_url_and_stores_the_grant(oauth, tmp_path):
    store = f"file://{tmp_path}/tokens"
    command = [sys.executable, "-m", "agentkit_core", "mcp", "login", oauth, "--user", "cli"]
    proc = await asyncio.create_subprocess_exec(
        *command, "--store", store, stdout=asyncio.subprocess.PIPE, cwd=ROOT
    )
    assert proc.stdout is not None
    while not (line := (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()).strip():
        pass
    while "http" not in line:
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    await browser(re.search(r"(http\S+)", line).group(1))  # type: ignore[union-attr]
    rest = (await asyncio.wait_for(proc.stdout.read(), 60)).decode()
    assert await proc.wait() == 0
    assert f"logged in to {oauth} as 'cli'" in rest
    spec = {"url": oauth, "auth": "oauth", "token_store": store, "user": "cli"}
    assert await whoami(spec) == "oauth ok"


# ----------------------------------------------------------------------------- headers


async def test_a_header_from_the_environment_gets_in(bearer, monkeypatch):
    monkeypatch.setenv("AUTH_TEST_TOKEN", TOKEN)
    spec = {"url": bearer, "headers": {"Authorization": "Bearer ${AUTH_TEST_TOKEN}"}}
    assert await whoami(spec) == "bearer ok"


async def test_a_wrong_token_is_refused_and_never_shown(bearer):
    wrong = "wrong-token-0123456789"
    with pytest.raises(ToolSourceError) as caught:
        await whoami({"url": bearer, "headers": {"Authorization": f"Bearer {wrong}"}})
    assert wrong not in str(caught.value)
    assert "refused the credentials (HTTP 401 Unauthorized)" in str(caught.value), caught.value
    assert "Authorization" in str(caught.value)


async def test_a_missing_variable_names_itself_and_the_header(bearer, monkeypatch):
    monkeypatch.delenv("AUTH_TEST_NOPE", raising=False)
    spec = {"url": bearer, "headers": {"X-Key": "${AUTH_TEST_NOPE}"}}
    with pytest.raises(ToolSourceError, match=r"header 'X-Key'.*\$\{AUTH_TEST_NOPE\}.*export"):
        await whoami(spec)


def test_a_bad_mapping_is_a_config_error_that_shows_no_header_value():
    with pytest.raises(ConfigError) as caught:
        MCPToolSource([{"url": "https://x.example/mcp", "headers": {"A": TOKEN}, "oops": 1}])
    assert TOKEN not in str(caught.value) and TOKEN not in repr(caught.value.__dict__)


_NAMES = st.from_regex(r"X-[A-Za-z][A-Za-z0-9-]{0,12}", fullmatch=True)
_VALUES = st.text(
    st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="${}"),
    min_size=8,
    max_size=40,
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(headers=st.dictionaries(_NAMES, _VALUES, min_size=1, max_size=3))
def test_no_header_value_shows_in_any_error_or_repr(bearer, headers):
    """A refused connection's error, the spec's repr: none holds a header value."""
    headers = {**headers, "Authorization": "Bearer " + next(iter(headers.values()))}
    spec = {"url": bearer, "headers": headers}

    async def refused() -> str:
        with pytest.raises(ToolSourceError) as caught:
            await whoami(spec)
        return str(caught.value)

    shown = [asyncio.run(refused()), repr(agentkit_mcp_client._connection.parse_spec(spec))]
    for text in shown:
        for value in headers.values():
            assert value not in text, (value, text)
    assert isinstance(agentkit_mcp_client._connection.parse_spec(spec), HttpServer)


async def test_a_kit_takes_headers_auth_store_and_user_per_server(oauth, bearer, tmp_path):
    from agentkit_core import Kit

    store = f"sqlite:///{tmp_path}/tokens.db"
    await login(oauth, user="ann", store=store, authorize=follow)
    spec = {"url": oauth, "auth": "oauth", "token_store": store, "user": "ann"}
    async with await Kit.open(model="test", mcp=[spec]) as kit:
        await kit.add_mcp(
            {"url": bearer, "headers": {"Authorization": f"Bearer {TOKEN}"}}, prefix="b_"
        )
        names = sorted(t.name for t in await kit.config().tools.tools())
        assert names == ["b_whoami", "whoami"]
        assert TOKEN not in repr(kit.tools())


async def test_no_span_of_a_run_holds_a_header_value(bearer, monkeypatch):
    """A run calling the header server's tool: every span's attributes and payload are clean."""
    from agentkit_core import Agent
    from agentkit_core import Message
    from agentkit_core import ToolUnion
    from agentkit_core.plugin import Span
    from agentkit_core.plugin import SpanExporter
    from agentkit_core.plugin import jsonable
    from agentkit_core.testing import ScriptedModel
    from agentkit_core.testing import tool_call

    class Collect(SpanExporter):
        def __init__(self) -> None:
            self.spans: list[Span] = []

        def on_end(self, span: Span) -> None:
            self.spans.append(span)

    monkeypatch.setenv("AUTH_TEST_TOKEN", TOKEN)
    spec = {"url": bearer, "headers": {"Authorization": "Bearer ${AUTH_TEST_TOKEN}"}}
    collect = Collect()
    model = ScriptedModel([Message.assistant("", [tool_call("whoami")]), "done"])
    async with MCPToolSource([spec]) as source:
        union = await ToolUnion.create([(source.label, source)])
        agent = Agent("a", model, "Call whoami.", union, exporters=[collect])
        result = await agent.run("go")
    assert result.output == "done"
    assert any(s.name == "tool_call" for s in collect.spans)
    for span in collect.spans:
        shown = repr((span.name, jsonable(span.attributes), jsonable(span.payload), span.error))
        assert TOKEN not in shown, shown
