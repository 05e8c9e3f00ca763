"""Hostile clients against a served kit, over real HTTP with the SDK's own client.

What a client sends is wire data: an elicitation answer, a tool name, arguments, a line that is
no JSON-RPC at all (over stdio, spoken to line by line). None of it may
run a tool the decisions refused or approve a question it does not answer; each failure is a
clear error for that one request, and the server stays up for the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import subprocess
import sys
import threading
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
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


# ---------------------------------------------------------------------- unreadable lines (stdio)


class Wire:
    """``agentkit mcp serve`` over stdio, spoken to line by line."""

    def __init__(self, command: list[str]) -> None:
        self.pending = b""
        self.proc = subprocess.Popen(
            command,
            cwd=Path(__file__).resolve().parent,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"elicitation": {"form": {}}},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
        assert self.receive()["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: Any) -> None:
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def receive(self, seconds: float = 60) -> dict[str, Any]:
        """The next line the server wrote (read off the pipe itself: no buffer hides one)."""
        assert self.proc.stdout is not None
        while b"\n" not in self.pending:
            ready, _, _ = select.select([self.proc.stdout], [], [], seconds)
            assert ready, f"no answer within {seconds} s; exit code {self.proc.poll()}"
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            assert chunk, f"the server closed its stdout; exit code {self.proc.poll()}"
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def add(self, request_id: int) -> dict[str, Any]:
        """A valid call; its answer (the server is still up and in step)."""
        params = {"name": "add", "arguments": {"a": 1, "b": 2}}
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
        return self.receive()

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


@pytest.fixture(scope="module")
def wire() -> Iterator[Wire]:
    served = Wire(
        [sys.executable, "-m", "agentkit_core", "mcp", "serve", "--tools", "attack_tools:TOOLS"]
    )
    yield served
    served.close()


CALL = b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": %s}'


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        (
            CALL % (7, b'{"name": "add", "arguments": {"a": "\\ud800", "b": 1}}'),
            (7, -32600, "Invalid request: Invalid JSON: "),
        ),
        (
            CALL % (8, b'{"name": "add", "arguments": {"a": ' + b"[" * 3000 + b"]" * 3000 + b"}}"),
            (None, -32700, "Parse error: Invalid JSON: recursion limit exceeded"),
        ),
        (CALL % (9, b'["add"]'), (9, -32600, "Invalid request: params: Input should be an object")),
        (
            b'{"jsonrpc": "2.0", "id": "s", "method": 5}',
            ("s", -32600, "Invalid request: method: Input should be a valid string"),
        ),
        (b"[1, 2]", (None, -32600, "Invalid request: Input should be an object")),
        (b"{not json", (None, -32700, "Parse error: Invalid JSON: ")),
    ],
)
def test_an_unreadable_request_is_answered_at_once_and_the_server_stays_up(wire, line, answer):
    wire.send(line)
    got = wire.receive()
    request_id, code, said = answer
    assert (got["id"], got["error"]["code"]) == (request_id, code)
    assert got["error"]["message"].startswith(said)
    assert wire.add(100)["result"]["structuredContent"] == {"sum": 3}


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"   ",
        b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": []}',
        b'{"jsonrpc": "2.0", "id": 5, "result": "an answer to nothing"}',
    ],
)
def test_an_unreadable_notification_or_reply_is_not_answered(wire, line):
    wire.send(line)
    assert wire.add(101)["id"] == 101  # the next line read is the call's own answer


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=60).filter(lambda b: b"\n" not in b and b"\r" not in b))
def test_whatever_line_comes_the_next_call_is_answered_in_step(wire, line):
    wire.send(line)
    params = {"name": "add", "arguments": {"a": 1, "b": 2}}
    wire.send({"jsonrpc": "2.0", "id": 102, "method": "tools/call", "params": params})
    while (got := wire.receive())["id"] != 102:
        assert got["error"]["code"] in (-32700, -32600, -32601, -32602)  # that line's answer
    assert got["result"]["structuredContent"] == {"sum": 3}


@pytest.mark.parametrize(
    ("name", "text", "structured", "is_error"),
    [
        ("file_name", "report-\ufffd.txt", None, False),
        ("file_info", '{"name": "report-\ufffd.txt", "size": 3}', "report-\ufffd.txt", False),
        (
            "open_file",
            "open_file failed: FileNotFoundError: no such file: report-\ufffd.txt",
            None,
            True,
        ),
    ],
)
def test_a_result_holding_a_lone_surrogate_is_sent_and_the_server_stays_up(
    wire, name, text, structured, is_error
):
    """A string JSON cannot carry (``os.fsdecode`` of a name that is not UTF-8) stopped the
    whole stdio server; each lone surrogate is now U+FFFD, the rest of the answer as it was."""
    wire.send({"jsonrpc": "2.0", "id": 200, "method": "tools/call", "params": {"name": name}})
    got = wire.receive()["result"]
    assert (got["content"][0]["text"], got["isError"]) == (text, is_error)
    assert got.get("structuredContent", {}).get("name") == structured
    assert wire.add(201)["result"]["structuredContent"] == {"sum": 3}


def test_what_a_served_call_sends_its_client_holding_a_lone_surrogate_is_sent(wire):
    """A log message and a question about that file name stopped the stdio server too."""
    wire.send({"jsonrpc": "2.0", "id": 202, "method": "tools/call", "params": {"name": "log_name"}})
    logged = wire.receive()
    assert logged["method"] == "notifications/message"
    assert logged["params"]["data"] == {"file": "report-\ufffd.txt"}
    assert wire.receive()["result"]["content"][0]["text"] == "logged"
    params = {"name": "delete_file"}
    wire.send({"jsonrpc": "2.0", "id": 203, "method": "tools/call", "params": params})
    asked = wire.receive()
    assert (asked["method"], asked["params"]["message"]) == (
        "elicitation/create",
        "Delete report-\ufffd.txt?",
    )
    wire.send(
        {
            "jsonrpc": "2.0",
            "id": asked["id"],
            "result": {"action": "accept", "content": {"ok": True}},
        }
    )
    assert wire.receive()["result"]["content"][0]["text"] == "deleted"
    assert wire.add(204)["result"]["structuredContent"] == {"sum": 3}
