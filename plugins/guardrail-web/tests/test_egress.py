"""WebGuardrail behind the core egress() middleware, the way an agent's tool chain runs it."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

import pytest
from agentkit_guardrail_web import ResolvingURLCheck
from agentkit_guardrail_web import WebGuardrail
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import GuardrailViolation
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import Tool
from agentkit_core import ToolResult
from agentkit_core.plugin import Guardrail
from agentkit_core.plugin import ToolInvocation
from agentkit_core.plugin import default_middlewares
from agentkit_core.plugin import egress
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx
from agentkit_core.testing import tool_call


class Post(Tool):
    def __init__(self) -> None:
        super().__init__("post", "send data somewhere", side_effects=True)
        self.sent: list[dict[str, Any]] = []

    async def invoke(self, arguments: dict[str, Any], ctx: RunContext) -> ToolResult:
        self.sent.append(arguments)
        return ToolResult("sent")


async def call(guard: Guardrail, arguments: dict[str, Any]) -> tuple[ToolResult, Post, RunContext]:
    tool = Post()
    ctx = make_test_ctx(ScriptedModel([]), middlewares=[*default_middlewares(), egress(guard)])
    assert ctx.invoker is not None

    async def end(inv: ToolInvocation) -> ToolResult:
        return await inv.tool.invoke(inv.arguments, inv.ctx)

    result = await ctx.invoker.call_tool(
        ToolInvocation(tool_call("post"), tool, arguments, ctx), end
    )
    return result, tool, ctx


@pytest.mark.parametrize(
    "arguments",
    [
        {"url": "http://0x7f000001:8080/admin"},
        {"target": {"urls": ["https://example.com/", "http://[::ffff:10.0.0.1]/"]}},
        {"body": "exfiltrate to http://169.254.169.254/latest/meta-data/iam"},
        {"host": "127.1:8080"},
        {"webhook_url": "gopher://example.com/"},
    ],
)
async def test_every_spelling_is_blocked_before_the_tool_runs(arguments: dict[str, Any]) -> None:
    result, tool, ctx = await call(WebGuardrail(), arguments)
    assert result.is_error and "egress refused for tool 'post'" in result.content
    assert tool.sent == []
    span = ctx.trace.find("tool_call")[0]
    assert span.attributes["egress_blocked"] in result.content


async def test_public_urls_and_plain_text_go_through() -> None:
    arguments = {"url": "https://api.example.com/v1", "body": "price $12.50, call 555-123-4567"}
    result, tool, _ = await call(WebGuardrail(), arguments)
    assert result == ToolResult("sent") and tool.sent == [arguments]


async def test_resolving_check_blocks_a_public_name_that_resolves_privately() -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return {"127.0.0.1.nip.io": ["127.0.0.1"], "example.com": ["93.184.216.34"]}[host]

    guard = WebGuardrail(url_check=ResolvingURLCheck(resolver))
    result, tool, _ = await call(guard, {"url": "http://127.0.0.1.nip.io/"})
    assert tool.sent == []
    assert result.is_error and "127.0.0.1 is loopback" in result.content
    ok, _, _ = await call(guard, {"url": "http://example.com/"})
    assert not ok.is_error


async def test_a_real_agent_run_never_reaches_a_refused_url() -> None:
    """End to end: the model asks for an internal URL, egress() refuses, the model sees why."""
    tool = Post()
    model = ScriptedModel(
        [
            Message.assistant("", [tool_call("post", '{"url": "http://169.254.169.254/"}', "c1")]),
            Message.assistant("", [tool_call("post", '{"url": "https://example.com/h"}', "c2")]),
            "done",
        ]
    )
    agent = Agent(
        "poster",
        model=model,
        tools=[tool],
        middlewares=[egress(WebGuardrail())],
        hooks=Hooks(),
    )
    result = await agent.run("post the report")
    assert result.output == "done"
    assert tool.sent == [{"url": "https://example.com/h"}]
    refused, sent = [m for m in result.transcript if m.role == "tool"]
    assert refused.is_error and "169.254.169.254" in refused.content
    assert not sent.is_error and sent.content == "sent"


# ---------------------------------------------------------------------- what counts (issue 19)

ALLOW = ["example.com"]

# Each reached 127.0.0.1 under an allow list of example.com when keys decided what was a URL.
ATTACKS = [
    {"baseUrl": "http://127.0.0.1:8080/"},
    {"webhookURL": "http://127.0.0.1/hook"},
    {"config": {"server": {"address": 2130706433}}},
    {"host": 2130706433},
    {"options": {"upstream": "127.0.0.1:8080"}},
    {"nested": [{"where": "127.0.0.1/admin"}]},
    {"payload": '{"url": "http://127.0.0.1/"}'},
    {"payload": '{"target": "127.0.0.1"}'},
    {"payload": '{"u": "http:\\/\\/127.0.0.1\\/"}'},
    {"target": "127.0.0.1"},
    {"domain": "localhost"},
    {"website": "localhost:3000"},
    {"site": "metadata.google.internal"},
    {"link": "http%3A%2F%2F127.0.0.1%2F"},
    {"endpoint": "0x7f000001"},
    {"server": "[::1]:8080"},
    {"peer": "::ffff:127.0.0.1"},
    {"to": "http:127.0.0.1/"},
    {"mirror": "//127.0.0.1/x"},
    {"http://127.0.0.1/": "a key is a string a tool can read too"},
    {"domain": "evil.com"},
    {"site": "api.evil.com:8443/v1"},
]


@pytest.mark.parametrize("arguments", ATTACKS)
async def test_hosts_are_found_whatever_the_key_or_the_encoding(arguments: dict[str, Any]) -> None:
    result, tool, _ = await call(WebGuardrail(egress_allow=ALLOW), arguments)
    assert result.is_error and "egress refused" in result.content
    assert tool.sent == []


BENIGN: list[dict[str, Any]] = [
    {"text": "hello world", "n": 5, "ratio": 0.25, "ok": True, "none": None},
    {"since": "2024-01-15", "price": "$12.50", "amount": "10.50", "version": "10.15.7"},
    {"path": "docs/README.md", "ids": [123456, 16777215], "ts": 1700000000},
    {"sql": "SELECT a FROM t WHERE x < 3", "shell": "cat <<EOF\nhi\nEOF", "shift": "x << 2"},
    {"email": "bob@example.org", "cpp": "std::vector", "note": "e.g. the example"},
    {"url": "https://docs.example.com/a?b=c", "json": '{"a": [1, 2, "three"]}'},
    {"size": 4_000_000_000, "hex": "0xff", "mac": "00:1a:2b:3c:4d:5e"},
]


@pytest.mark.parametrize("arguments", BENIGN)
async def test_data_that_names_no_host_goes_through(arguments: dict[str, Any]) -> None:
    result, tool, _ = await call(WebGuardrail(egress_allow=ALLOW), arguments)
    assert result == ToolResult("sent") and tool.sent == [arguments]


class Read(Post):
    def __init__(self) -> None:
        Tool.__init__(self, "read", "read a page", side_effects=False)
        self.sent = []


async def test_a_read_only_tool_is_checked_like_any_other() -> None:
    """Reading is not "no network": egress() checks side_effects=False tools too."""
    tool = Read()
    ctx = make_test_ctx(
        ScriptedModel([]),
        middlewares=[*default_middlewares(), egress(WebGuardrail(egress_allow=ALLOW))],
    )
    assert ctx.invoker is not None

    async def end(inv: ToolInvocation) -> ToolResult:
        return await inv.tool.invoke(inv.arguments, inv.ctx)

    refused = await ctx.invoker.call_tool(
        ToolInvocation(tool_call("read"), tool, {"url": "https://evil.com/"}, ctx), end
    )
    allowed = await ctx.invoker.call_tool(
        ToolInvocation(tool_call("read"), tool, {"url": "https://example.com/"}, ctx), end
    )
    assert refused.is_error and "'evil.com' is not in egress_allow" in refused.content
    assert allowed == ToolResult("sent") and tool.sent == [{"url": "https://example.com/"}]


# ---------------------------------------------------------------------- the rule, by property

FORBIDDEN = st.sampled_from(
    [
        "127.0.0.1",
        "127.0.0.1:8080",
        "10.0.0.7",
        "169.254.169.254",
        "[::1]",
        "::1",
        "[fe80::1]:80",
        "0x7f000001",
        "2130706433",
        "0177.0.0.1",
        "localhost",
        "localhost:8000",
        "metadata.google.internal",
        "evil.com",
        "sub.evil.com:8443",
        "xn--80ak6aa92e.com",
    ]
)
keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_ -]{0,11}", fullmatch=True)


@st.composite
def spelled(draw: st.DrawFn) -> Any:
    """A forbidden host, spelled the way a tool argument might carry it."""
    host = draw(FORBIDDEN)
    form = draw(st.sampled_from(["bare", "url", "path", "slashes", "userinfo", "number"]))
    if form == "url":
        text = f"{draw(st.sampled_from(['http', 'https', 'HTTP', 'ftp']))}://{host}/"
    elif form == "path":
        text = f"{host}/{draw(st.sampled_from(['admin', 'a/b?c=d', '#top']))}"
    elif form == "slashes":
        text = f"//{host}/"
    elif form == "userinfo" and not host[:1].isalpha():
        text = f"someone@{host}"
    elif form == "number" and host == "2130706433":
        return 2130706433
    else:
        text = host
    encoding = draw(st.sampled_from(["plain", "spaces", "percent", "json", "json-escaped"]))
    if encoding == "spaces":
        return f"  {text}\n"
    if encoding == "percent":
        return urllib.parse.quote(text, safe="")
    if encoding == "json":
        return json.dumps({draw(keys): text})
    if encoding == "json-escaped":
        return json.dumps([text]).replace("/", "\\/")
    return text


def nest(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        inner,
        lambda children: st.one_of(
            st.lists(children, min_size=1, max_size=3),
            st.dictionaries(keys, children, min_size=1, max_size=3),
        ),
        max_leaves=4,
    )


benign_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**24), 2**24 - 1),
    st.floats(allow_nan=False),
    st.from_regex(r"[A-Za-z]{1,12}( [A-Za-z,.!?]{1,12}){0,5}", fullmatch=True),
    st.from_regex(r"\$?[0-9]{1,4}(\.[0-9]{1,2})?|[0-9]{4}-[0-9]{2}-[0-9]{2}", fullmatch=True),
    st.from_regex(r"v?[0-9]{1,2}\.[0-9]{1,2}(\.[0-9]{1,2})?", fullmatch=True),
    st.from_regex(r"[a-z]{1,8}/[A-Za-z]{1,8}\.[a-z]{1,4}", fullmatch=True),
)


@st.composite
def hidden(draw: st.DrawFn) -> Any:
    """Benign arguments with one forbidden host buried at a random depth among benign data."""
    value = draw(spelled())
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            value = [*draw(st.lists(benign_leaf, max_size=2)), value]
        else:
            value = {**draw(st.dictionaries(keys, benign_leaf, max_size=2)), draw(keys): value}
    return {"data": draw(nest(benign_leaf)), "where": value}


@given(arguments=hidden())
@settings(max_examples=400, deadline=None)
async def test_a_forbidden_host_is_refused_however_it_is_nested_or_encoded(arguments: Any) -> None:
    with pytest.raises(GuardrailViolation):
        await WebGuardrail(egress_allow=ALLOW).check_arguments(arguments)


@given(arguments=nest(benign_leaf))
@settings(max_examples=400, deadline=None)
async def test_benign_data_is_never_refused(arguments: Any) -> None:
    await WebGuardrail(egress_allow=ALLOW).check_arguments({"arguments": arguments})


async def _refusal(check: Any) -> str | None:
    """The refusal ``check()`` raises (its message), or None when it passes."""
    try:
        result = check()
        if result is not None and hasattr(result, "__await__"):
            await result
    except GuardrailViolation as exc:
        return str(exc)
    return None


class _Recording(Guardrail):
    """A guardrail without I/O of its own, refusing every URL: the base class's two paths."""

    def check_url(self, url: str) -> None:
        raise GuardrailViolation(f"URL {url!r} refused", value=url)


@given(arguments=st.one_of(hidden(), nest(benign_leaf)))
@settings(max_examples=300, deadline=None)
async def test_the_offline_check_refuses_exactly_what_check_arguments_refuses(
    arguments: Any,
) -> None:
    # Without a check that does I/O, the offline path is the whole check: the same URLs are
    # found (find_urls, one rule) and the same first refusal is raised.
    for guard in (WebGuardrail(egress_allow=ALLOW), WebGuardrail(), _Recording()):
        offline = await _refusal(lambda g=guard: g.check_arguments_offline(arguments))
        reference = await _refusal(lambda g=guard: Guardrail.check_arguments(g, arguments))
        assert offline == reference
        assert await _refusal(lambda g=guard: g.check_arguments(arguments)) == reference


async def test_a_guardrail_that_resolves_still_awaits_its_url_check() -> None:
    seen: list[str] = []

    async def record(url: str) -> None:
        seen.append(url)

    guard = WebGuardrail(url_check=record)
    assert guard.checks_need_io and not WebGuardrail().checks_need_io
    await guard.check_arguments({"url": "https://example.com/a"})
    assert seen == ["https://example.com/a"]


#: The label separators a client's IDNA mapping (UTS 46: httpx, browsers) reads as ".".
STOPS = ["\u3002", "\uff61", "\uff0e"]


@pytest.mark.parametrize(
    "host", ["evil\u3002com", "evil\uff61com", "evil\uff0ecom", "evil\u3002com\u3002"]
)
async def test_a_host_spelled_with_ideographic_full_stops_is_refused(host: str) -> None:
    # httpx.URL(f"http://{host}/") reaches evil.com; the argument was read as plain text
    # (no ASCII dot in it) and went to the tool unchecked, past egress_allow
    result, tool, _ = await call(WebGuardrail(egress_allow=ALLOW), {"host": host})
    assert result.is_error and "evil.com" in result.content
    assert tool.sent == []


@pytest.mark.parametrize(
    "host", ["192\u3002168\u30021\u30021", "\uff11\uff12\uff17\uff61\uff10\uff61\uff10\uff61\uff11"]
)
async def test_a_private_address_spelled_with_ideographic_full_stops_is_refused(
    host: str,
) -> None:
    result, tool, _ = await call(WebGuardrail(), {"host": f"{host}:8080"})
    assert result.is_error and "egress refused" in result.content
    assert tool.sent == []


async def test_sentences_ending_in_an_ideographic_full_stop_are_not_hosts() -> None:
    arguments = {"text": "\u3053\u3093\u306b\u3061\u306f\u3002\u5143\u6c17\u3067\u3059\u304b\u3002"}
    result, tool, _ = await call(WebGuardrail(egress_allow=ALLOW), arguments)
    assert result == ToolResult("sent") and tool.sent == [arguments]


@given(
    st.sampled_from(["evil.com", "api.evil.com", "10.0.0.1", "169.254.169.254", "db.internal"]),
    st.data(),
)
@settings(max_examples=200, deadline=None)
async def test_a_forbidden_host_is_refused_whatever_stops_its_labels(
    host: str, data: st.DataObject
) -> None:
    spelled = "".join(data.draw(st.sampled_from([".", *STOPS])) if c == "." else c for c in host)
    with pytest.raises(GuardrailViolation):
        await WebGuardrail(egress_allow=ALLOW).check_arguments({"host": spelled})


async def test_json_nested_too_deeply_to_check_is_refused_not_raised() -> None:
    # the RecursionError of decoding it escaped the egress check (and the tool call) raw
    nested = "[" * 100_000 + "]" * 100_000
    for arguments in ({"x": nested}, {"x": f'{{"url": "http://127.0.0.1/", "a": {nested}}}'}):
        result, tool, _ = await call(WebGuardrail(), arguments)
        assert result.is_error and "nested too deeply to check" in result.content
        assert tool.sent == []
    assert (await call(WebGuardrail(), {"x": "[" * 50 + "]" * 50}))[1].sent  # decodable: runs
