"""The Guardrail seam and the egress() middleware, driven through the invoker's tool chain."""

from __future__ import annotations

import ipaddress
import json
import urllib.parse
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import GuardrailViolation
from agentkit_core import PluginError
from agentkit_core import PluginManager
from agentkit_core import RunContext
from agentkit_core import Tool
from agentkit_core import ToolCall
from agentkit_core import ToolResult
from agentkit_core import UnknownNameError
from agentkit_core import hookimpl
from agentkit_core._guardrails import CACHED_ARGUMENTS_CHARS
from agentkit_core._guardrails import find_urls
from agentkit_core._guardrails import urls_in_call
from agentkit_core.plugin import Guardrail
from agentkit_core.plugin import ToolInvocation
from agentkit_core.plugin import default_middlewares
from agentkit_core.plugin import egress
from agentkit_core.plugin import get_guardrail
from agentkit_core.testing import GuardrailConformance
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx
from agentkit_core.testing import tool_call


class DenyHosts(Guardrail):
    """A reference guardrail: refuses URLs containing any of the given hosts."""

    def __init__(self, *hosts: str, resolved_bad: str = "") -> None:
        self.hosts = hosts
        self.resolved_bad = resolved_bad
        self.resolved: list[str] = []

    def check_url(self, url: str) -> None:
        for host in self.hosts:
            if host in url:
                raise GuardrailViolation(
                    f"URL {url!r} refused: {host} is internal",
                    value=url,
                    reason=f"{host} is internal",
                )

    async def url_check(self, url: str) -> None:
        self.resolved.append(url)
        if self.resolved_bad and self.resolved_bad in url:
            raise GuardrailViolation(
                f"URL {url!r} refused: resolves privately", value=url, reason="resolves privately"
            )


class Fetch(Tool):
    def __init__(self, *, side_effects: bool = True) -> None:
        super().__init__("fetch", "fetch a URL", side_effects=side_effects)
        self.calls: list[dict[str, Any]] = []

    async def invoke(self, arguments: dict[str, Any], ctx: RunContext) -> ToolResult:
        self.calls.append(arguments)
        return ToolResult("fetched")


async def run_tool(
    guardrail: Guardrail, tool: Fetch, arguments: dict[str, Any]
) -> tuple[ToolResult, RunContext]:
    ctx = make_test_ctx(ScriptedModel([]), middlewares=[*default_middlewares(), egress(guardrail)])
    assert ctx.invoker is not None
    invocation = ToolInvocation(tool_call("fetch"), tool, arguments, ctx)

    async def end(inv: ToolInvocation) -> ToolResult:
        return await inv.tool.invoke(inv.arguments, inv.ctx)

    return await ctx.invoker.call_tool(invocation, end), ctx


def test_egress_without_a_guardrail_is_refused_at_construction() -> None:
    with pytest.raises(ConfigError, match=r"egress\(\) needs a guardrail, got None"):
        egress(None)
    with pytest.raises(ConfigError, match=r"needs an agentkit_core.plugin.Guardrail, got object"):
        egress(object())  # type: ignore[arg-type]


def test_guardrail_must_implement_check_url() -> None:
    class Empty(Guardrail):
        pass

    with pytest.raises(TypeError, match="check_url"):
        Empty()  # type: ignore[abstract]


async def test_blocked_url_becomes_a_tool_error_and_the_tool_does_not_run() -> None:
    tool = Fetch()
    result, ctx = await run_tool(
        DenyHosts("169.254.169.254"), tool, {"url": "http://169.254.169.254/latest"}
    )
    assert result.is_error
    assert "http://169.254.169.254/latest" in result.content
    assert "169.254.169.254 is internal" in result.content
    assert tool.calls == []
    (span,) = ctx.trace.find("tool_call")
    assert span.attributes["egress_blocked"] == "http://169.254.169.254/latest"
    assert span.attributes["egress_reason"] == "169.254.169.254 is internal"
    assert span.attributes["is_error"] is True


async def test_urls_are_found_in_nested_arguments() -> None:
    tool = Fetch()
    arguments = {"batch": [{"note": "mirror to http://internal.corp/x please"}, ("ok",)]}
    result, _ = await run_tool(DenyHosts("internal.corp"), tool, arguments)
    assert result.is_error and "internal.corp" in result.content
    assert tool.calls == []


async def test_the_resolving_check_runs_after_the_string_check() -> None:
    guard = DenyHosts("never", resolved_bad="rebind")
    tool = Fetch()
    result, _ = await run_tool(guard, tool, {"url": "https://rebind.example.com/"})
    assert result.is_error and "resolves privately" in result.content
    assert guard.resolved == ["https://rebind.example.com/"]


async def test_allowed_urls_let_the_tool_run() -> None:
    tool = Fetch()
    result, ctx = await run_tool(DenyHosts("internal"), tool, {"url": "https://example.com/"})
    assert result == ToolResult("fetched")
    assert tool.calls == [{"url": "https://example.com/"}]
    assert ctx.trace.find("tool_call")[0].attributes["egress_checked"] is True


async def test_read_only_tools_are_checked_too() -> None:
    """Reading is not "no network": a side_effects=False tool's request is checked the same."""
    tool = Fetch(side_effects=False)
    result, ctx = await run_tool(DenyHosts("internal"), tool, {"url": "http://internal/"})
    assert result.is_error and "internal is internal" in result.content
    assert tool.calls == []
    assert ctx.trace.find("tool_call")[0].attributes["egress_blocked"] == "http://internal/"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://example.com/a", ["https://example.com/a"]),
        ("  http://x.example/\n", ["http://x.example/"]),
        ("file:/etc/passwd", ["file:/etc/passwd"]),
        ("http://good.com\t@127.0.0.1/", ["http://good.com\t@127.0.0.1/"]),
        (
            "see http://a.example/x and gopher://b.example/ now",
            ["http://a.example/x", "gopher://b.example/"],
        ),
        ({"url": "127.0.0.1/admin"}, ["http://127.0.0.1/admin"]),
        ({"base_url": "10.0.0.1"}, ["http://10.0.0.1"]),
        ({"HOST": "db.internal", "port": 5432}, ["http://db.internal"]),
        ({"email_address": "bob@example.org"}, []),
        ({"url": ""}, []),
        ({"subject": "Re: lunch", "body": "no links here"}, []),
        ([["http://deep.example/"]], ["http://deep.example/"]),
        ({"n": 3, "flag": True, "none": None}, []),
        # key names play no part: every string and number is read the same way
        ({"baseUrl": "127.0.0.1:8080"}, ["http://127.0.0.1:8080"]),
        ({"target": "localhost"}, ["http://localhost"]),
        ({"a": 2130706433, "b": 1700000000, "c": 16777215}, ["http://2130706433"]),
        ({"a": "0x7f000001", "b": "0xff"}, ["http://0x7f000001"]),
        ({"peer": "fe80::1", "cpp": "std::vector", "hex": "dead::beef"}, ["http://[fe80::1]"]),
        ({"q": '{"host": "10.0.0.1"}'}, ["http://10.0.0.1"]),
        ({"q": '["https:\\/\\/a.example\\/"]'}, ["https://a.example/"]),
        ({"q": "http%3A%2F%2Fa.example%2F"}, ["http://a.example/"]),
        ({"http://key.example/": 1}, ["http://key.example/"]),
        ({"v": "10.15.7", "p": "docs/README.md", "m": "bob@example.org"}, []),
        ({"v": "10.15.7:22", "m": "bob@127.0.0.1"}, ["http://10.15.7:22", "http://127.0.0.1"]),
        ({"to": "http:127.0.0.1", "todo": "TODO:fix"}, ["http:127.0.0.1"]),
        ({"a": "x.example", "b": "x.example"}, ["http://x.example"]),
    ],
)
def test_find_urls(value: Any, expected: list[str]) -> None:
    assert list(find_urls(value)) == expected


def test_find_urls_refuses_arguments_too_large_to_walk() -> None:
    """Shared references (or JSON inside JSON) could make a walk endless; it is bounded."""
    assert list(find_urls([["x"] * 1000] * 99)) == []
    nested: Any = "x"
    for _ in range(10):
        nested = [nested] * 4  # about a million leaves, from a few objects
    with pytest.raises(GuardrailViolation, match=r"more than 100000 values to check"):
        list(find_urls(nested))


# --------------------------------------------------------------------------- get_guardrail


class _Plugin:
    AGENTKIT_NAME = "test-guardrails"

    @hookimpl
    def agentkit_register_guardrails(self, register: Any) -> None:
        register("deny-internal", lambda **options: DenyHosts(*options.get("hosts", ("internal",))))
        register("broken", lambda **options: object())


@pytest.fixture
def installed(pm: PluginManager) -> PluginManager:
    pm.register(_Plugin())
    return pm


async def test_get_guardrail_builds_an_installed_one_and_egress_takes_the_object(
    installed: PluginManager,
) -> None:
    guard = get_guardrail("deny-internal", hosts=("corp",), manager=installed)
    assert isinstance(guard, DenyHosts) and guard.hosts == ("corp",)
    with pytest.raises(ConfigError, match=r"egress\('deny-internal'\) needs a Guardrail object"):
        egress("deny-internal")  # type: ignore[arg-type]
    tool = Fetch()
    made = get_guardrail("deny-internal", manager=installed)
    ctx = make_test_ctx(ScriptedModel([]), middlewares=[egress(made)])
    assert ctx.invoker is not None

    async def end(inv: ToolInvocation) -> ToolResult:
        return await inv.tool.invoke(inv.arguments, inv.ctx)

    invocation = ToolInvocation(tool_call("fetch"), tool, {"url": "http://internal/"}, ctx)
    result = await ctx.invoker.call_tool(invocation, end)
    assert result.is_error and tool.calls == []


def test_get_guardrail_errors_name_the_problem(installed: PluginManager) -> None:
    with pytest.raises(
        UnknownNameError,
        match=r"no guardrail named 'nope' is installed; installed: .*deny-internal",
    ):
        get_guardrail("nope", manager=installed)
    with pytest.raises(
        PluginError,
        match=r"guardrail 'broken' from plugin 'test-guardrails' built object .*, not an "
        r"agentkit_core.plugin.Guardrail",
    ):
        get_guardrail("broken", manager=installed)


# --------------------------------------------------------------------------- conformance


class LiteralOnly(Guardrail):
    """The smallest guardrail that passes the suite: scheme and literal-address checks."""

    def check_url(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        try:
            ip = ipaddress.ip_address(parts.hostname or "")
        except ValueError:
            ip = None
        if parts.scheme not in ("http", "https") or (ip is not None and not ip.is_global):
            raise GuardrailViolation(f"URL {url!r} refused", value=url)


class TestLiteralOnlyGuardrail(GuardrailConformance):
    def make_guardrail(self) -> Guardrail:
        return LiteralOnly()


# ---------------------------------------------------------------------- the remembered URLs

_json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**33), 2**33),
    st.sampled_from(
        ["http://10.0.0.1/", "example.com", "localhost:8080", "127.1", "2130706433", "a b",
         "https://example.com/x?y=%2F", '{"u": "http://[::1]/"}', "see http://x.y/z here", ""]
    ),
    st.text(max_size=12),
)  # fmt: skip
_json_value = st.recursive(
    _json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(arguments=st.dictionaries(st.text(max_size=6), _json_value, max_size=4))
@settings(max_examples=300, deadline=None)
def test_remembered_urls_of_a_call_are_the_urls_found_anew(arguments: Any) -> None:
    text = json.dumps(arguments)
    call = ToolCall("c", "t", text)
    expected = tuple(find_urls(call.parsed_arguments()))
    assert urls_in_call(call) == expected  # the first time (remembered now)
    assert urls_in_call(ToolCall("d", "u", text)) == expected  # remembered: the same answer
    padded = ToolCall("c", "t", text + " " * CACHED_ARGUMENTS_CHARS)  # too long to remember
    assert urls_in_call(padded) == expected
