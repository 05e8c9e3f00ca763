"""Hostile clients against a served kit, over real HTTP with the SDK's own client.

What a client sends is wire data: an elicitation answer, a tool name, arguments. None of it may
run a tool the decisions refused or approve a question it does not answer; each failure is a
clear error for that one request, and the server stays up for the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

import mcp
import mcp_types
import pytest
from agentkit_mcp_server import serve_tools
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import ToolDecision
from agentkit_core import agent_tool
from agentkit_core import tool
from agentkit_core.plugin import PolicyEngine
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call

#: What the served tools did, in order (each test clears it).
RAN: list[str] = []

CONFIRM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}, "why": {"type": "string", "maxLength": 20}},
    "required": ["confirm"],
}


@tool
async def drop_table(name: str, ctx: RunContext) -> str:
    """Drop a table once the client's user confirms."""
    answer = await ctx.elicit(f"Drop {name}?", CONFIRM)
    if answer and answer.get("confirm"):  # how a tool reads a form: truthy means yes
        RAN.append(f"drop {name}")
        return f"dropped {name}"
    return f"kept {name}"


@tool
async def your_name(ctx: RunContext) -> str:
    """Ask the client's user a free-text question."""
    return f"hello {await ctx.elicit('Your name?')}"


@tool
def wipe(target: str) -> str:
    """Wipe a target."""
    RAN.append(f"wipe {target}")
    return f"wiped {target}"


class Verdicts(PolicyEngine):
    """One verdict for every call (``ask`` or ``deny``)."""

    name = "verdicts"

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def evaluate(self, call: Any, source: Any, grants: Any) -> ToolDecision:
        return ToolDecision(self.kind, f"every call is {self.kind}", rule=f"all-{self.kind}")

    def removes(self, name: str, source: str) -> bool:
        return False

    def compile_grant(self, grant: Any) -> Any:
        return None, (), ()


def ops(kind: str) -> Agent:
    """An agent whose model wipes the db, under a policy that says ``kind`` to every call."""
    script = [Message.assistant("", [tool_call("wipe", '{"target": "db"}', id="w1")]), "finished"]
    return Agent("ops", ScriptedModel(script), "Do ops.", [wipe], policy=Verdicts(kind))


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """The served tools (and two served agents) over HTTP, in a thread of their own."""
    tools = [drop_table, your_name, wipe, ops("ask"), agent_tool(ops("deny"), name="ops_denied")]
    where: list[str] = []
    ready = threading.Event()
    running: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def listening(at: str) -> None:
        where.append(at)
        ready.set()

    async def serve() -> None:
        stop = asyncio.Event()
        running.append((asyncio.get_running_loop(), stop))
        serving = asyncio.ensure_future(
            serve_tools(tools, transport="http", port=0, on_listening=listening)
        )
        await stop.wait()
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(30), "serve_tools did not listen"
    yield where[0]
    loop, stop = running[0]
    loop.call_soon_threadsafe(stop.set)
    thread.join(15)


@pytest.fixture(autouse=True)
def _clean() -> None:
    RAN.clear()


def answering(content: Any, action: str = "accept") -> Callable[..., Any]:
    async def answer(context: Any, params: Any) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action=action, content=content)

    return answer


async def call(
    url: str, name: str, arguments: dict[str, Any], answer: Any = None
) -> tuple[str, bool]:
    """Call ``name`` as a bare SDK client answering questions with ``answer``; (text, isError)."""
    async with mcp.Client(url, mode="legacy", elicitation_callback=answer) as client:
        result = await client.call_tool(name, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    return text, bool(result.is_error)


# ---------------------------------------------------------------------- elicitation answers

REFUSED = "drop_table failed: ElicitationError: the MCP client's answer to 'Drop users?' "


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ({"confirm": "false"}, "'confirm' must be a boolean, got 'false'"),
        ({"confirm": "true"}, "'confirm' must be a boolean, got 'true'"),
        ({"confirm": 1}, "'confirm' must be a boolean, got 1"),
        ({"confirm": ["no"]}, "'confirm' must be a boolean, got ['no']"),
        ({}, "it leaves the required 'confirm' unanswered"),
        ({"confirm": None}, "it leaves the required 'confirm' unanswered"),
        ({"confirm": True, "admin": True}, "'admin' was not asked for (the form asks 'confirm', "),
        ({"confirm": True, "why": "x" * 21}, "'why' is above its maximum 20, got 'xxxx"),
        ({"confirm": True, "why": 5}, "'why' must be a string, got 5"),
    ],
)
async def test_an_answer_that_does_not_fit_the_form_approves_nothing(url, content, why):
    text, is_error = await call(url, "drop_table", {"name": "users"}, answering(content))
    assert is_error and text.startswith(REFUSED + "does not fit the question's schema: " + why)
    assert text.endswith("; it is refused, not taken as an answer")
    assert RAN == []


@pytest.mark.parametrize(
    ("answer", "said", "ran"),
    [
        (answering({"confirm": True}), "dropped users", ["drop users"]),
        (answering({"confirm": True, "why": "cleanup"}), "dropped users", ["drop users"]),
        (answering({"confirm": False}), "kept users", []),
        (answering(None, "decline"), "kept users", []),
        (answering({"confirm": True}, "cancel"), "kept users", []),
        (None, "kept users", []),  # a client that offers no elicitation: nobody to ask
    ],
)
async def test_an_answer_that_fits_decides_as_it_says(url, answer, said, ran):
    text, is_error = await call(url, "drop_table", {"name": "users"}, answer)
    if answer is None:
        assert is_error and "this run has no elicitor" in text
    else:
        assert (text, is_error) == (said, False)
    assert RAN == ran


async def test_a_free_text_answer_must_be_text(url):
    assert await call(url, "your_name", {}, answering({"answer": "ann"})) == ("hello ann", False)
    text, is_error = await call(url, "your_name", {}, answering({"answer": 7}))
    assert is_error and "'answer' must be a string, got 7" in text
    text, is_error = await call(url, "your_name", {}, answering({}))
    assert is_error and "it leaves the required 'answer' unanswered" in text


json_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["true", "false", "yes", "", "1", "True"]),
    st.lists(st.sampled_from(["yes", "true"]), max_size=2),
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.dictionaries(st.sampled_from(["confirm", "why", "admin", "Confirm"]), json_values))
def test_only_a_boolean_true_confirm_ever_drops_the_table(url, content):
    RAN.clear()
    text, is_error = asyncio.run(call(url, "drop_table", {"name": "t"}, answering(content)))
    fits = (
        type(content.get("confirm")) is bool
        and set(content) <= {"confirm", "why"}
        and (content.get("why") is None or isinstance(content["why"], str))
        and len(content.get("why") or "") <= 20
    )
    if not fits:
        assert is_error and "does not fit the question's schema" in text and RAN == []
    elif content["confirm"]:
        assert (text, is_error, RAN) == ("dropped t", False, ["drop t"])
    else:
        assert (text, is_error, RAN) == ("kept t", False, [])


# ---------------------------------------------------------------------- a served agent's policy


async def test_a_served_agent_whose_policy_asks_is_an_error_and_runs_nothing(url):
    text, is_error = await call(url, "ops", {"task": "wipe the db"}, answering({"answer": "yes"}))
    assert is_error
    assert text.startswith("ops did not answer: its run '")
    assert text.endswith(
        "holds 'wipe' (w1) for a person's approval (verdicts: every call is ask), which a call "
        "of it as a tool cannot give; nothing it holds ran"
    )
    assert RAN == []


async def test_a_served_agent_whose_policy_denies_never_runs_the_tool(url):
    assert await call(url, "ops_denied", {"task": "wipe the db"}) == ("finished", False)
    assert RAN == []


# ---------------------------------------------------------------------- names and arguments


def lookalikes(name: str) -> st.SearchStrategy[str]:
    """Spellings of ``name`` a client might hope resolve to it: case, width, invisibles."""
    fullwidth = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name)
    return st.one_of(
        st.sampled_from([name.upper(), name.title(), fullwidth, f" {name}", f"{name}\n"]),
        st.builds(
            lambda at, mark: name[:at] + mark + name[at:],
            st.integers(0, len(name)),
            st.sampled_from(["\u200b", "\u200d", "\ufeff", "\u00ad", "\u2060", "\x00"]),
        ),
        st.text(min_size=1, max_size=8).filter(lambda s: s != name),
    )


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(lookalikes("wipe"))
def test_a_name_that_is_not_exactly_the_tools_runs_nothing(url, name):
    RAN.clear()
    text, is_error = asyncio.run(call(url, name, {"target": "db"}))
    assert is_error and text.startswith(f"no tool named {name!r}; tools: drop_table, ")
    assert RAN == []


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (
            {"target": 5},
            "invalid arguments for tool 'wipe': target: Input should be a valid string",
        ),
        ({"target": ["db"]}, "target: Input should be a valid string"),
        ({"target": "db", "force": True}, "force: Extra inputs are not permitted"),
        ({}, "target: Field required"),
        ({"target": {"a": [[[[{"b": None}]]]]}}, "target: Input should be a valid string"),
    ],
)
async def test_arguments_of_the_wrong_shape_run_nothing(url, arguments, said):
    text, is_error = await call(url, "wipe", arguments)
    assert is_error and said in text
    assert RAN == []
    assert await call(url, "wipe", {"target": "tmp"}) == ("wiped tmp", False)  # still up
