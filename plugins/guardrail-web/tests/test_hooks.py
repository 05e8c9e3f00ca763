"""The plugin as installed: its registration and its part in the tool-call hooks."""

from __future__ import annotations

import agentkit_guardrail_web
import pytest
from agentkit_guardrail_web import WebGuardrail

from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import PluginManager
from agentkit_core import ToolResult
from agentkit_core import get_guardrail
from agentkit_core import get_plugin_manager
from agentkit_core.testing import make_test_ctx
from agentkit_core.testing import tool_call


@pytest.fixture
def hooks(monkeypatch: pytest.MonkeyPatch) -> Hooks:
    for name in (
        "AGENTKIT_WEB_EGRESS_ALLOW",
        "AGENTKIT_WEB_REDACT_TOOL_OUTPUT",
        "AGENTKIT_WEB_RESOLVE",
    ):
        monkeypatch.delenv(name, raising=False)
    return Hooks.from_plugins(PluginManager(entry_points=False, plugins=[agentkit_guardrail_web]))


def test_entry_point_registers_the_web_guardrail() -> None:
    registration = get_plugin_manager().lookup("guardrails", "web")
    assert registration.value is WebGuardrail
    assert registration.distribution == "agentkit-guardrail-web"
    guard = get_guardrail("web", egress_allow=["example.com"])
    assert isinstance(guard, WebGuardrail) and guard.egress_allow == {"example.com"}


async def test_before_tool_call_denies_a_blocked_url(hooks: Hooks) -> None:
    ctx = make_test_ctx()
    call = tool_call("fetch", '{"request": {"url": "http://169.254.169.254/latest"}}')
    decision = await hooks.run_before_tool_call(ctx, call)
    assert decision.kind == "deny"
    assert decision.source == "agentkit_guardrail_web"
    assert "169.254.169.254" in decision.reason and "link-local" in decision.reason


async def test_before_tool_call_has_no_opinion_on_public_urls(hooks: Hooks) -> None:
    ctx = make_test_ctx()
    decision = await hooks.run_before_tool_call(
        ctx, tool_call("fetch", '{"url": "https://example.com/", "note": "see http://1.1.1.1/"}')
    )
    assert decision.kind == "allow" and decision.source == ""
    bad_json = await hooks.run_before_tool_call(ctx, tool_call("fetch", "{not json"))
    assert bad_json.kind == "allow"


async def test_egress_allow_from_the_environment(
    hooks: Hooks, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTKIT_WEB_EGRESS_ALLOW", "example.com, docs.python.org")
    ctx = make_test_ctx()
    ok = await hooks.run_before_tool_call(
        ctx, tool_call("f", '{"url": "https://docs.python.org/3/"}')
    )
    assert ok.kind == "allow"
    denied = await hooks.run_before_tool_call(ctx, tool_call("f", '{"url": "https://evil.com/"}'))
    assert denied.kind == "deny" and "not in egress_allow" in denied.reason


async def test_after_tool_call_frames_and_redacts_when_enabled(
    hooks: Hooks, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = make_test_ctx()
    call = tool_call("read")
    framed = await hooks.run_after_tool_call(ctx, call, ToolResult("mail bob@example.org"))
    assert framed.content.startswith("<<UNTRUSTED id=")  # type: ignore[union-attr]
    assert "bob@example.org" in framed.content
    monkeypatch.setenv("AGENTKIT_WEB_REDACT_TOOL_OUTPUT", "1")
    redacted = await hooks.run_after_tool_call(
        ctx, call, ToolResult("boom bob@example.org", is_error=True)
    )
    assert "[redacted email]" in redacted.content and redacted.is_error


async def test_bad_environment_value_is_a_config_error(
    hooks: Hooks, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTKIT_WEB_REDACT_TOOL_OUTPUT", "maybe")
    with pytest.raises(
        ConfigError, match=r"AGENTKIT_WEB_REDACT_TOOL_OUTPUT='maybe' is not a boolean"
    ):
        await hooks.run_after_tool_call(make_test_ctx(), tool_call("read"), ToolResult("x"))
