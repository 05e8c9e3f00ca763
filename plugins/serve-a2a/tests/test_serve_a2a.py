"""The A2A server on a real socket, driven by the a2a-sdk client over HTTP."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig
from a2a.client import create_client
from a2a.helpers import new_data_part
from a2a.types import CancelTaskRequest
from a2a.types import GetTaskRequest
from a2a.types import Message as A2AMessage
from a2a.types import Part
from a2a.types import Role
from a2a.types import SendMessageRequest
from a2a.types import TaskState
from agentkit_serve_a2a import serve
from agentkit_serve_a2a._executor import ASK_AGAIN
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import tool
from agentkit_core.plugin import ServerFactory
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import ServerConformance
from agentkit_core.testing import json_values

ran: list[str] = []


@tool
def transfer(amount: int) -> str:
    """Move money."""
    ran.append(f"transfer {amount}")
    return f"moved {amount}"


def ask_for_transfers(call: ToolCall) -> ToolDecision | None:
    return ToolDecision.ask("a person approves transfers") if call.name == "transfer" else None


def echo(request: Any) -> Message:
    return Message.assistant(" / ".join(m.text for m in request.messages if m.role == "user"))


def pay(call_id: str, amount: int) -> Message:
    return Message.assistant("", [ToolCall(call_id, "transfer", json.dumps({"amount": amount}))])


def say(text: str | dict[str, Any], context: str, task: str = "") -> SendMessageRequest:
    part = Part(text=text) if isinstance(text, str) else new_data_part(text)
    message = A2AMessage(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[part],
        context_id=context,
        task_id=task,
    )
    return SendMessageRequest(message=message)


class Peer:
    """The a2a-sdk client of one server, collecting what a message streams back."""

    def __init__(self, client: Any, url: str) -> None:
        self.client, self.url = client, url

    async def send(
        self, text: str | dict[str, Any], context: str, task: str = ""
    ) -> tuple[Any, str]:
        """The task as its last status left it, and the answer's text streamed in chunks."""
        answer, seen, status, task_id = "", None, None, task
        async for response in self.client.send_message(say(text, context, task)):
            if response.HasField("artifact_update"):
                answer += "".join(p.text for p in response.artifact_update.artifact.parts)
            if response.HasField("task"):
                seen, status = response.task, response.task.status
            if response.HasField("status_update"):
                status, task_id = response.status_update.status, response.status_update.task_id
        if seen is None:  # a message on a task already there streams its updates only
            seen = await self.client.get_task(GetTaskRequest(id=task_id))
        assert status is not None
        seen.status.CopyFrom(status)
        return seen, answer


@pytest.fixture
async def peer() -> AsyncIterator[Callable[..., Any]]:
    opened: list[Any] = []

    async def start(steps: list[Any], **options: Any) -> Peer:
        kit = await Kit.open(model=ScriptedModel(steps), session="memory://", **options)
        bound: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        server = asyncio.create_task(serve(kit, host="127.0.0.1", port=0, ready=bound.set_result))
        url = await bound
        http = httpx.AsyncClient(timeout=10)
        client = await create_client(url, ClientConfig(httpx_client=http, streaming=True))
        opened.append((kit, server, http, client))
        return Peer(client, url)

    yield start
    for kit, server, http, client in opened:
        await client.close()
        await http.aclose()
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)
        await kit.aclose()


async def test_the_card_names_the_kit_and_its_tools(peer: Any) -> None:
    p = await peer([], tools=[transfer], name="bank", description="moves money")
    async with httpx.AsyncClient() as http:
        card = (await http.get(f"{p.url}/.well-known/agent-card.json")).json()
    assert (card["name"], card["description"]) == ("bank", "moves money")
    assert [s["id"] for s in card["skills"]] == ["conversation", "transfer"]
    assert card["capabilities"]["streaming"] is True
    assert card["supportedInterfaces"][0]["url"] == p.url + "/"


async def test_a_malformed_request_is_a_clear_error(peer: Any) -> None:
    p = await peer([])
    async with httpx.AsyncClient() as http:
        not_json = await http.post(p.url + "/", content=b"{nope")
        unknown = await http.post(
            p.url + "/", json={"jsonrpc": "2.0", "id": 1, "method": "nope", "params": {}}
        )
        huge = await http.post(p.url + "/", content=b"x" * (1 << 21))
    assert not_json.json()["error"]["code"] == -32700  # JSON-RPC's parse error
    assert unknown.json()["error"]["code"] == -32601  # method not found
    assert huge.status_code == 413


async def test_a_chunked_body_over_the_bound_is_a_413(peer: Any) -> None:
    """The bound counts the bytes received: a chunked body has no content-length to trust."""
    p = await peer([echo])

    async def chunks(count: int) -> AsyncIterator[bytes]:
        for _ in range(count):
            yield b" " * (1 << 16)

    async with httpx.AsyncClient() as http:
        huge = await http.post(p.url + "/", content=chunks(17))  # 1 MiB and 64 KiB
        small = await http.post(p.url + "/", content=chunks(1))
    assert "content-length" not in huge.request.headers
    assert huge.request.headers["transfer-encoding"] == "chunked"
    assert huge.status_code == 413
    assert huge.json() == {"error": "the request body is over 1048576 bytes"}
    assert small.json()["error"]["code"] == -32700  # within the bound: read whole, then parsed


async def test_a_message_streams_its_answer_and_a_context_is_its_session(peer: Any) -> None:
    p = await peer([echo] * 4)
    task, answer = await p.send("hi", "ann")
    assert answer == "hi" and task.status.state == TaskState.TASK_STATE_COMPLETED
    assert task.context_id == "ann"
    _, answer = await p.send("again", "ann")
    assert answer == "hi / again"
    (ann, bob) = await asyncio.gather(p.send("more", "ann"), p.send("hello", "bob"))
    assert (ann[1], bob[1]) == ("hi / again / more", "hello")  # contexts never mix


async def test_an_approval_is_an_input_required_task_the_client_answers(peer: Any) -> None:
    ran.clear()
    steps = [pay("c1", 5), "paid", pay("c2", 9), "not paid"]
    p = await peer(steps, tools=[transfer], before_tool_call=ask_for_transfers)
    task, _ = await p.send("pay ann 5", "ann")
    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED and ran == []
    asked = "".join(part.text for part in task.status.message.parts)
    assert "transfer" in asked and "yes or no" in asked
    task, _ = await p.send("what?", "ann", task.id)  # not an answer: asked again
    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED and ran == []
    task, answer = await p.send("yes", "ann", task.id)
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert answer == "paid" and ran == ["transfer 5"]

    task, _ = await p.send("pay 9", "ann")  # a new task in the same context
    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    task, answer = await p.send({"approved": False}, "ann", task.id)  # answered as data
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert answer == "not paid" and ran == ["transfer 5"]


def pay_as_asked(request: Any) -> Message:
    """Pays the amount the user's first message names (``pay N``), then says it is done."""
    if request.messages[-1].role == "tool":
        return Message.assistant("done")
    return pay("c1", int(request.messages[0].text.split()[-1]))


#: Messages that answer no held call clearly: the task asks again, never reads them as yes.
UNCLEAR = [
    {"approved": "false"},
    {"approved": 0},
    {"approved": None},
    {"approvals": {"c1": "false"}},
    {"approvals": {"c1": 1}},
    {"approvals": {"c2": True}},
    {"approvals": {"c1": True, "ghost": False}},
    {"approvals": {}},
    {"approvals": ["c1"]},
    "maybe",
]


@pytest.mark.parametrize("answer", UNCLEAR, ids=repr)
async def test_an_unclear_answer_asks_again_and_the_call_still_waits(
    peer: Any, answer: Any
) -> None:
    ran.clear()
    p = await peer([pay_as_asked] * 2, tools=[transfer], before_tool_call=ask_for_transfers)
    task, _ = await p.send("pay 5", "ann")
    task, _ = await p.send(answer, "ann", task.id)
    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED and ran == []
    asked = "".join(part.text for part in task.status.message.parts)
    assert asked.endswith(ASK_AGAIN)
    task, answer_text = await p.send({"approvals": {"c1": True}}, "ann", task.id)
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert answer_text == "done" and ran == ["transfer 5"]


JSON = json_values(text=st.text(max_size=5), max_leaves=6)
#: Data parts near the accepted ones as well as anything JSON.
ANSWERS = st.one_of(
    st.dictionaries(st.text(max_size=8), JSON),
    st.fixed_dictionaries({"approved": JSON}),
    st.fixed_dictionaries({"approvals": st.dictionaries(st.sampled_from(["c1", "c2"]), JSON)}),
)


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(answers=st.lists(ANSWERS, min_size=6, max_size=6))
async def test_only_a_clear_yes_runs_a_held_call(peer: Any, answers: list[dict[str, Any]]) -> None:
    """Whatever the data part says, the call runs only for a clear yes; else it waits on."""
    ran.clear()
    p = await peer([pay_as_asked] * 12, tools=[transfer], before_tool_call=ask_for_transfers)
    for amount, data in enumerate(answers):
        task, _ = await p.send(f"pay {amount}", f"ctx{amount}")
        task, _ = await p.send(data, f"ctx{amount}", task.id)
        said = json.dumps(data.get("approvals", {"c1": data.get("approved")}))
        clear = ("approved" in data or "approvals" in data) and said in (
            '{"c1": true}',
            '{"c1": false}',
        )
        assert task.status.state == (
            TaskState.TASK_STATE_COMPLETED if clear else TaskState.TASK_STATE_INPUT_REQUIRED
        ), data
        assert (f"transfer {amount}" in ran) is (clear and said == '{"c1": true}'), data


async def test_a_task_can_be_read_and_cancelled(peer: Any) -> None:
    p = await peer([pay("c1", 5)], tools=[transfer], before_tool_call=ask_for_transfers)
    task, _ = await p.send("pay ann 5", "ann")
    got = await p.client.get_task(GetTaskRequest(id=task.id))
    assert got.id == task.id and got.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    canceled = await p.client.cancel_task(CancelTaskRequest(id=task.id))
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED


async def test_a_token_is_checked_on_every_request_but_the_card() -> None:
    async with await Kit.open(model=ScriptedModel(["hi"]), session="memory://") as kit:
        bound: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        server = asyncio.create_task(
            serve(kit, host="127.0.0.1", port=0, ready=bound.set_result, token="s3cret")
        )
        url = await bound
        try:
            async with httpx.AsyncClient() as http:
                assert (await http.get(url + "/.well-known/agent-card.json")).status_code == 200
                call = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
                assert (await http.post(url + "/", json=call)).status_code == 401
                bearer = {"authorization": "Bearer s3cret"}
                answered = await http.post(url + "/", json=call, headers=bearer)
                assert answered.status_code == 200 and "error" in answered.json()  # no such task
                old = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": "x"}}
                answered = await http.post(url + "/", json=old, headers=bearer)
                assert answered.json()["error"]["code"] != -32601  # A2A 0.3's names are served
        finally:
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)


def test_agentkit_serve_runs_it_from_the_command_line(tmp_path: Any) -> None:
    import subprocess
    import sys

    argv = [sys.executable, "-m", "agentkit_core", "serve", "--protocol", "a2a", "--port", "0"]
    with subprocess.Popen(
        [*argv, "--model", "test"], stderr=subprocess.PIPE, text=True, cwd=tmp_path
    ) as proc:
        try:
            assert proc.stderr is not None
            line = proc.stderr.readline()
            assert line.startswith("agentkit: serving a2a on http://127.0.0.1:"), line
            url = line.split(" on ", 1)[1].strip()
            card = httpx.get(url + "/.well-known/agent-card.json", timeout=10).json()
            assert card["name"] == "cli"
        finally:
            proc.terminate()
            proc.wait(timeout=10)


GRANTS = """\
default = "ask"

[[rules]]
id = "skills"
verdict = "allow"
tool = "read_skill"

[tools.bash]
aliases = ["Bash"]
specifier = { command = "prefix" }
"""


@tool
def bash(command: str) -> str:
    """Run a command."""
    ran.append(command)
    return f"ran {command}"


async def test_concurrent_contexts_keep_their_skill_grants_apart(peer: Any, tmp_path: Any) -> None:
    ran.clear()
    (tmp_path / "skills" / "release").mkdir(parents=True)
    (tmp_path / "skills" / "release" / "SKILL.md").write_text(
        "---\nname: release\ndescription: tag a release\n"
        "allowed-tools: Bash(git tag:*)\n---\nTag.\n"
    )
    (tmp_path / "grants.toml").write_text(GRANTS)

    def step(request: Any) -> Message:
        """Ann reads the skill then tags; bob tags at once; each then says done."""
        said = [m for m in request.messages if m.role == "user"][-1].text
        seen = {m.tool_call_id for m in request.messages if m.role == "tool"}
        if said == "ann" and not seen:
            return Message.assistant("", [ToolCall("r1", "read_skill", '{"name": "release"}')])
        if f"t-{said}" not in seen:
            command = json.dumps({"command": f"git tag {said}"})
            return Message.assistant("", [ToolCall(f"t-{said}", "bash", command)])
        return Message.assistant("done")

    p = await peer(
        [step] * 6,
        tools=[bash],
        policy=str(tmp_path / "grants.toml"),
        parts={"skills": {"dirs": [str(tmp_path / "skills")], "trusted": True}},
    )
    (ann, _), (bob, _) = await asyncio.gather(p.send("ann", "ann"), p.send("bob", "bob"))
    assert ann.status.state == TaskState.TASK_STATE_COMPLETED  # ann's grant allowed her tag
    assert bob.status.state == TaskState.TASK_STATE_INPUT_REQUIRED  # bob read no skill
    assert ran == ["git tag ann"]


@pytest.mark.parametrize(
    ("environment", "spans"),
    [
        ({}, False),  # OpenTelemetry unconfigured: the SDK's spans would go nowhere
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
        ({"OTEL_INSTRUMENTATION_A2A_SDK_ENABLED": "true"}, True),  # the user's choice stands
    ],
)
def test_the_sdks_spans_are_off_unless_opentelemetry_may_be_configured(
    environment: dict[str, str], spans: bool
) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")} | environment
    code = (
        "from agentkit_serve_a2a import a2a_app\n"
        "from a2a.utils import telemetry\n"
        "print(telemetry.otel_enabled)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == str(spans), out.stderr


class TestA2AServerConformance(ServerConformance):
    def make_server(self) -> ServerFactory:
        return serve

    async def open_kit(self) -> Kit:
        return await Kit.open(model=ScriptedModel(["hello"]), session="memory://")


async def test_a_kit_without_a_session_store_is_refused_before_it_listens() -> None:
    told: list[str] = []
    async with await Kit.open(model=ScriptedModel(["hi"])) as kit:
        with pytest.raises(ConfigError, match="session store"):
            await serve(kit, host="127.0.0.1", port=0, ready=told.append)
    assert told == []


def rpc_send(context: str, text: str) -> dict[str, Any]:
    """A JSON-RPC SendMessage of ``text`` in ``context``, as a client writes it by hand."""
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {**message, "contextId": context}},
    }


async def test_a_context_id_naming_a_tasks_record_is_refused_and_the_task_stays(
    peer: Any,
) -> None:
    """``a2a-task:<id>`` is where a task is kept, so it is no context id.

    As one it wrote a conversation over the task's record, and the task was gone.
    """
    p = await peer([echo] * 3)
    task, _ = await p.send("keep me", "ann")
    version = {"A2A-Version": "1.0"}
    async with httpx.AsyncClient(timeout=10) as http:
        hijack = await http.post(
            p.url + "/", json=rpc_send(f"a2a-task:{task.id}", "x"), headers=version
        )
    error = hijack.json()["error"]
    assert error["code"] == -32602, error  # invalid params, not an internal error
    assert f"a2a-task:{task.id}" in error["message"] and "context id" in error["message"]
    with pytest.raises(Exception, match="a2a-task:"):  # the streaming method refuses it too
        await p.send("x", f"a2a-task:{task.id}")
    kept = await p.client.get_task(GetTaskRequest(id=task.id))
    assert kept.status.state == TaskState.TASK_STATE_COMPLETED and kept.context_id == "ann"
    _, answer = await p.send("still here", "ann")
    assert answer == "keep me / still here"


@pytest.mark.parametrize("context", ["a b", "a\x00b", "x" * 201, "tab\there"])
async def test_a_context_id_no_session_can_have_is_invalid_params_naming_it(
    peer: Any, context: str
) -> None:
    p = await peer([echo])
    version = {"A2A-Version": "1.0"}
    async with httpx.AsyncClient(timeout=10) as http:
        answered = await http.post(p.url + "/", json=rpc_send(context, "hi"), headers=version)
    error = answered.json()["error"]
    assert error["code"] == -32602, error
    assert "session id" in error["message"] and repr(context)[1:20] in error["message"]


async def test_a_yes_on_a_task_whose_run_a_later_message_replaced_runs_nothing(
    peer: Any,
) -> None:
    """Each task answers for the calls it asked about, and no other task's.

    Task 1 asks about transfer 5; a later message in its context starts task 2, which asks
    about transfer 900. A yes on task 1 approved the calls the context held then, task 2's,
    and moved 900.
    """
    ran.clear()
    steps = [pay("c1", 5), pay("c2", 900), "paid", "never"]
    p = await peer(steps, tools=[transfer], before_tool_call=ask_for_transfers)
    first, _ = await p.send("pay 5", "ann")
    second, _ = await p.send("pay 900", "ann")
    assert first.status.state == second.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    stale, _ = await p.send("yes", "ann", first.id)
    assert ran == []
    assert stale.status.state == TaskState.TASK_STATE_FAILED
    said = "".join(part.text for part in stale.status.message.parts)
    assert "no longer held" in said and second.id not in said  # tasks are not named to others
    assert (await p.client.get_task(GetTaskRequest(id=second.id))).status.state == (
        TaskState.TASK_STATE_INPUT_REQUIRED
    )  # task 2 still waits, and its own yes runs its call
    done, answer = await p.send("yes", "ann", second.id)
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert answer == "paid" and ran == ["transfer 900"]


async def test_a_yes_on_a_task_after_a_later_task_ended_starts_no_run(peer: Any) -> None:
    """With nothing held any more, a stale task's yes was the conversation's next message."""
    ran.clear()
    p = await peer([pay("c1", 5), echo, echo], tools=[transfer], before_tool_call=ask_for_transfers)
    first, _ = await p.send("pay 5", "ann")
    _, answer = await p.send("hello", "ann")
    stale, answer = await p.send("yes", "ann", first.id)
    assert stale.status.state == TaskState.TASK_STATE_FAILED and answer == "" and ran == []
    _, answer = await p.send("again", "ann")
    assert answer.endswith("hello / again")  # "yes" never reached the conversation


async def test_a_body_nested_past_the_decoder_is_a_parse_error(peer: Any) -> None:
    """It was an internal error (-32603) with a traceback in the log."""
    p = await peer([echo])
    version = {"A2A-Version": "1.0"}
    bracketed = rpc_send("ann", "[" * 2000)  # brackets in a string: a message like any other
    async with httpx.AsyncClient(timeout=10) as http:
        for body in (b"[" * 100_000, b'{"a":' * 100_000):
            answered = await http.post(p.url + "/", content=body, headers=version)
            assert answered.json()["error"] == {
                "code": -32700,
                "message": "the request body is nested too deeply to decode",
            }
        answered = await http.post(p.url + "/", json=bracketed, headers=version)
    assert answered.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
