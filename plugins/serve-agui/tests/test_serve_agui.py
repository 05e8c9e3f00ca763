"""The AG-UI endpoint on a real socket, driven over HTTP: threads, approvals, grants, errors."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from ag_ui.core import Event
from ag_ui.core import EventType
from ag_ui.core import RunAgentInput
from agentkit_serve_agui import serve
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import SessionNotFound
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


@tool
def bash(command: str) -> str:
    """Run a command."""
    ran.append(command)
    return f"ran {command}"


def ask_for_transfers(call: ToolCall) -> ToolDecision | None:
    return ToolDecision.ask("a person approves transfers") if call.name == "transfer" else None


def echo(request: Any) -> Message:
    """Answers with every user message of the conversation it was sent."""
    return Message.assistant(" / ".join(m.text for m in request.messages if m.role == "user"))


def pay(call_id: str, amount: int) -> Message:
    return Message.assistant("", [ToolCall(call_id, "transfer", json.dumps({"amount": amount}))])


def run_input(thread: str, text: str | None = None, **extra: Any) -> dict[str, Any]:
    """A RunAgentInput's JSON: ``text`` as the new user message."""
    messages = [] if text is None else [{"id": uuid.uuid4().hex, "role": "user", "content": text}]
    return {
        "threadId": thread,
        "runId": uuid.uuid4().hex,
        "messages": messages,
        "state": None,
        "tools": [],
        "context": [],
        "forwardedProps": None,
        **extra,
    }


class Client:
    """An AG-UI client over real HTTP, reading the SSE stream into events."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def run(self, thread: str, text: str | None = None, **extra: Any) -> list[dict[str, Any]]:
        body = run_input(thread, text, **extra)
        RunAgentInput.model_validate(body)  # what we send is the protocol's own input type
        events = []
        async with self.http.stream("POST", "/agent", json=body) as response:
            assert response.status_code == 200, await response.aread()
            assert response.headers["content-type"].startswith("text/event-stream")
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    events.append(json.loads(line[len("data: ") :]))
        return checked(events)


EVENT: TypeAdapter[Any] = TypeAdapter(Event)


def checked(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events``, each one of the protocol's own event types, in an order AG-UI allows."""
    for event in events:
        EVENT.validate_python(event)
    assert events[0]["type"] == "RUN_STARTED"
    assert events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR")
    open_: dict[str, set[str]] = {"TEXT": set(), "TOOL": set(), "STEP": set()}
    for event in events:
        kind = event["type"]
        key = event.get("messageId") or event.get("toolCallId") or event.get("stepName")
        group = (
            "TEXT"
            if kind.startswith("TEXT")
            else "TOOL"
            if kind.startswith("TOOL_CALL")
            else "STEP"
        )
        if kind in ("TEXT_MESSAGE_START", "TOOL_CALL_START", "STEP_STARTED"):
            assert key not in open_[group], event
            open_[group].add(key)
        elif kind in ("TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS"):
            assert key in open_[group], event
        elif kind in ("TEXT_MESSAGE_END", "TOOL_CALL_END", "STEP_FINISHED"):
            open_[group].remove(key)
    assert open_ == {"TEXT": set(), "TOOL": set(), "STEP": set()}, open_
    return events


def text(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == EventType.TEXT_MESSAGE_CONTENT)


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


async def served(kit: Kit, **options: Any) -> tuple[asyncio.Task[None], str]:
    bound: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(
        serve(kit, host="127.0.0.1", port=0, ready=bound.set_result, **options)
    )
    return server, await bound


@pytest.fixture
async def endpoint() -> AsyncIterator[Callable[..., Any]]:
    """``await endpoint(steps, **kit_options)``: a client of a server over a kit on ``steps``."""
    opened: list[tuple[Kit, asyncio.Task[None], httpx.AsyncClient]] = []

    async def start(steps: list[Any], *, token: str | None = None, **options: Any) -> Client:
        kit = await Kit.open(model=ScriptedModel(steps), session="memory://", **options)
        server, url = await served(kit, **({"token": token} if token else {}))
        http = httpx.AsyncClient(base_url=url, timeout=10)
        opened.append((kit, server, http))
        return Client(http)

    yield start
    for kit, server, http in opened:
        await http.aclose()
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)
        await kit.aclose()


async def test_a_run_streams_as_agui_events_and_a_thread_is_its_session(endpoint: Any) -> None:
    client = await endpoint([echo] * 3)
    first = await client.run("ann", "hi")
    assert types(first)[0] == EventType.RUN_STARTED and types(first)[-1] == EventType.RUN_FINISHED
    assert first[0]["threadId"] == "ann" and text(first) == "hi"
    assert first[-1]["result"] == "hi" and first[-1]["outcome"]["type"] == "success"
    kinds = types(first)
    start, end = kinds.index("TEXT_MESSAGE_START"), kinds.index("TEXT_MESSAGE_END")
    assert start < kinds.index("TEXT_MESSAGE_CONTENT") < end
    assert kinds.count("STEP_STARTED") == kinds.count("STEP_FINISHED") == 1
    # a reconnect to the thread (a new client, a new request) continues its session
    async with httpx.AsyncClient(base_url=str(client.http.base_url)) as other:
        again = await Client(other).run("ann", "again")
    assert text(again) == "hi / again"
    history = (await client.http.get("/threads/ann")).json()
    assert [(m["role"], m.get("content")) for m in history["messages"]] == [
        ("user", "hi"),
        ("assistant", "hi"),
        ("user", "again"),
        ("assistant", "hi / again"),
    ]


async def test_concurrent_threads_never_see_each_others_transcript(endpoint: Any) -> None:
    client = await endpoint([echo] * 6)
    said = await asyncio.gather(*(client.run(t, f"{t} 1") for t in ("ann", "bob", "cy")))
    assert [text(e) for e in said] == ["ann 1", "bob 1", "cy 1"]
    said = await asyncio.gather(*(client.run(t, f"{t} 2") for t in ("ann", "bob", "cy")))
    assert [text(e) for e in said] == ["ann 1 / ann 2", "bob 1 / bob 2", "cy 1 / cy 2"]


async def test_an_approval_is_an_interrupt_the_client_answers(endpoint: Any) -> None:
    ran.clear()
    steps = [pay("c1", 5), "paid", pay("c2", 9), "not paid"]
    client = await endpoint(steps, tools=[transfer], before_tool_call=ask_for_transfers)
    held = await client.run("ann", "pay ann 5")
    finished = held[-1]
    assert finished["type"] == EventType.RUN_FINISHED and finished["outcome"]["type"] == "interrupt"
    (interrupt,) = finished["outcome"]["interrupts"]
    assert (interrupt["toolCallId"], interrupt["reason"]) == ("c1", "tool_approval")
    assert interrupt["id"].startswith("c1@")  # the call and the run that holds it
    assert ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"] == [
        t for t in types(held) if t.startswith("TOOL_CALL")
    ]
    assert ran == []
    pending = (await client.http.get("/threads/ann")).json()["interrupts"]
    assert [i["id"] for i in pending] == [interrupt["id"]]

    answer = {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
    done = await client.run("ann", resume=[answer])
    (result,) = [e for e in done if e["type"] == EventType.TOOL_CALL_RESULT]
    assert (result["toolCallId"], result["content"]) == ("c1", "moved 5")
    assert text(done) == "paid" and ran == ["transfer 5"]

    await client.run("ann", "pay 9")
    second = await open_interrupt(client.http, "ann")
    refused = await client.run("ann", resume=[{"interruptId": second, "status": "cancelled"}])
    (result,) = [e for e in refused if e["type"] == EventType.TOOL_CALL_RESULT]
    assert result["toolCallId"] == "c2" and "refused by a person" in result["content"]
    (answered,) = [e for e in refused if e.get("name") == "approval_answered"]
    assert answered["value"]["approved"] is False and ran == ["transfer 5"]
    assert text(refused) == "not paid"


async def open_interrupt(http: httpx.AsyncClient, thread: str) -> str:
    """The id of the one interrupt open on ``thread``, as a client reloading it reads it."""
    (interrupt,) = (await http.get(f"/threads/{thread}")).json()["interrupts"]
    return str(interrupt["id"])


async def test_a_yes_to_an_interrupt_a_later_run_replaced_runs_nothing(endpoint: Any) -> None:
    """An interrupt answers for its own run's call, even when a later run reuses the call id.

    A model may number its calls per answer (``call_0``). The first run asks about transfer 5;
    a later message starts a run that holds transfer 900 under the same call id. Answering the
    first interrupt by its call id approved the 900.
    """
    ran.clear()
    steps = [pay("call_0", 5), pay("call_0", 900), "paid"]
    client = await endpoint(steps, tools=[transfer], before_tool_call=ask_for_transfers)
    first = (await client.run("t", "pay 5"))[-1]["outcome"]["interrupts"][0]
    await client.run("t", "pay 900")
    now = await open_interrupt(client.http, "t")
    assert now != first["id"] and now.startswith("call_0@")
    for stale in (first["id"], "call_0"):  # the first run's interrupt, and the bare call id
        answer = [{"interruptId": stale, "status": "resolved"}]
        response = await client.http.post("/agent", json=run_input("t", resume=answer))
        assert response.status_code == 400 and ran == []
        assert (
            f"no interrupt {stale} is open on this thread; open: {now}" in response.json()["error"]
        )
    done = await client.run("t", resume=[{"interruptId": now, "status": "resolved"}])
    assert text(done) == "paid" and ran == ["transfer 900"]


def pay_as_asked(request: Any) -> Message:
    """Pays the amount the user's last message names (``pay N``), then says it is done."""
    last = request.messages[-1]
    if last.role != "user":
        return Message.assistant("done")
    return pay("c1", int(last.text.split()[-1]))


#: Payloads that say neither yes nor no: each is a 400, never read as yes.
UNCLEAR = [
    False,
    0,
    "no",
    [],
    {"approved": "false"},
    {"approved": 0},
    {"approved": None},
    {"approve": False},
    {"approved": False, "note": "typo'd key beside a real answer"},
]


@pytest.mark.parametrize("payload", UNCLEAR, ids=repr)
async def test_an_unclear_answer_is_a_400_and_the_call_still_waits(
    endpoint: Any, payload: Any
) -> None:
    ran.clear()
    client = await endpoint(
        [pay_as_asked] * 3, tools=[transfer], before_tool_call=ask_for_transfers
    )
    await client.run("ann", "pay 5")
    held = await open_interrupt(client.http, "ann")
    resume = [{"interruptId": held, "status": "resolved", "payload": payload}]
    response = await client.http.post("/agent", json=run_input("ann", resume=resume))
    assert response.status_code == 400 and ran == []
    said = response.json()["error"]
    assert said.startswith(f"interrupt {held} is answered with the payload {payload!r}")
    assert '{"approved": true}' in said
    pending = (await client.http.get("/threads/ann")).json()["interrupts"]
    assert [i["id"] for i in pending] == [held]  # the run was left as it was
    done = await client.run("ann", resume=[{"interruptId": held, "status": "resolved"}])
    assert text(done) == "done" and ran == ["transfer 5"]


async def test_an_interrupt_answered_twice_is_a_400(endpoint: Any) -> None:
    ran.clear()
    client = await endpoint(
        [pay_as_asked] * 2, tools=[transfer], before_tool_call=ask_for_transfers
    )
    await client.run("ann", "pay 5")
    held = await open_interrupt(client.http, "ann")
    for twice in (["resolved", "cancelled"], ["cancelled", "resolved"]):
        resume = [{"interruptId": held, "status": status} for status in twice]
        response = await client.http.post("/agent", json=run_input("ann", resume=resume))
        assert response.status_code == 400 and "answered twice" in response.json()["error"]
    assert ran == []


JSON = json_values(text=st.text(max_size=5), max_leaves=6)
#: Payloads near the accepted ones as well as anything JSON.
PAYLOADS = st.one_of(
    JSON,
    st.fixed_dictionaries({"approved": JSON}),
    st.fixed_dictionaries({"approved": st.booleans()}, optional={"extra": JSON}),
)


@settings(max_examples=6, deadline=None)
@given(
    answers=st.lists(
        st.tuples(st.sampled_from(["resolved", "cancelled"]), PAYLOADS), min_size=8, max_size=8
    )
)
async def test_only_a_clear_yes_runs_a_held_call(answers: list[tuple[str, Any]]) -> None:
    """Whatever the answer, the call runs only for a clear yes; an unclear one waits on."""
    ran.clear()
    kit = await Kit.open(
        model=ScriptedModel([pay_as_asked] * 16),
        session="memory://",
        tools=[transfer],
        before_tool_call=ask_for_transfers,
    )
    server, url = await served(kit)
    try:
        async with httpx.AsyncClient(base_url=url, timeout=10) as http:
            client = Client(http)
            for amount, (status, payload) in enumerate(answers):
                thread = f"t{amount}"
                await client.run(thread, f"pay {amount}")
                held = await open_interrupt(http, thread)
                entry = {"interruptId": held, "status": status, "payload": payload}
                response = await http.post("/agent", json=run_input(thread, resume=[entry]))
                said = json.dumps(payload)  # as sent: 0 == False and 1.0 == True in Python
                yes = status == "resolved" and said in ("null", "{}", '{"approved": true}')
                clear = status == "cancelled" or yes or said == '{"approved": false}'
                assert response.status_code == (200 if clear else 400), (status, payload)
                await response.aread()
                assert (f"transfer {amount}" in ran) is yes, (status, payload)
                pending = (await http.get(f"/threads/{thread}")).json()["interrupts"]
                assert [i["toolCallId"] for i in pending] == ([] if clear else ["c1"])
    finally:
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)
        await kit.aclose()


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


async def test_a_skills_grant_stays_in_its_thread(endpoint: Any, tmp_path: Path) -> None:
    ran.clear()
    (tmp_path / "skills" / "release").mkdir(parents=True)
    (tmp_path / "skills" / "release" / "SKILL.md").write_text(
        "---\nname: release\ndescription: tag a release\n"
        "allowed-tools: Bash(git tag:*)\n---\nTag.\n"
    )
    (tmp_path / "grants.toml").write_text(GRANTS)
    read = Message.assistant("", [ToolCall("r1", "read_skill", '{"name": "release"}')])
    tag = Message.assistant("", [ToolCall("t1", "bash", '{"command": "git tag v1"}')])
    tag2 = Message.assistant("", [ToolCall("t2", "bash", '{"command": "git tag v2"}')])
    client = await endpoint(
        [read, tag, "tagged", tag2],
        tools=[bash],
        policy=str(tmp_path / "grants.toml"),
        parts={"skills": {"dirs": [str(tmp_path / "skills")], "trusted": True}},
    )
    ann = await client.run("ann", "tag v1")
    assert text(ann) == "tagged" and ran == ["git tag v1"]  # the grant allowed it in ann's thread
    bob = await client.run("bob", "tag v2")  # bob read no skill: the same call waits for a person
    assert bob[-1]["outcome"]["type"] == "interrupt" and ran == ["git tag v1"]


def nested(depth: int) -> Any:
    """A JSON value ``depth`` lists deep."""
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"{not json", 400, "not JSON"),
        (b'{"threadId": "t"}', 422, "RunAgentInput"),
        (json.dumps(run_input("t")).encode(), 400, "no user message"),
        (json.dumps(run_input(" ", "hi")).encode(), 400, "threadId is empty"),
        (
            json.dumps(
                run_input("t", resume=[{"interruptId": "x", "status": "resolved"}])
            ).encode(),
            409,
            "no run waiting",
        ),
        (b"x" * (1 << 21), 413, "over"),
        # nested past the decoder: a 500 (RecursionError) before
        (b"[" * 100_000, 400, "nested too deeply"),
        (b'{"a":' * 100_000, 400, "nested too deeply"),
        (json.dumps(run_input("t", "hi", state=nested(900))).encode(), 200, ""),
        # a thread id no session may have: a 500 (the store's ConfigError) before
        (json.dumps(run_input("a\x00b", "hi")).encode(), 400, "threadId 'a\\x00b'"),
        (json.dumps(run_input("a b", "hi")).encode(), 400, "threadId 'a b'"),
        (json.dumps(run_input("x" * 201, "hi")).encode(), 400, "200 printable characters"),
        (json.dumps(run_input("\ud800", "hi")).encode(), 400, "lone surrogate"),
    ],
)
async def test_a_malformed_request_is_a_clear_4xx(
    endpoint: Any, body: bytes, status: int, says: str
) -> None:
    client = await endpoint(["fine"])
    response = await client.http.post(
        "/agent", content=body, headers={"content-type": "application/json"}
    )
    if status == 200:  # deep, yet within the decoder: a run
        assert response.status_code == 200 and "RUN_FINISHED" in response.text
        return
    assert response.status_code == status and says in response.json()["error"]


async def test_a_missing_thread_is_a_404_and_reading_it_creates_nothing() -> None:
    kit = await Kit.open(model=ScriptedModel([]), session="memory://")
    server, url = await served(kit)
    try:
        async with httpx.AsyncClient(base_url=url) as http:
            response = await http.get("/threads/nobody")
        assert response.status_code == 404
        assert response.json() == {"error": "no thread 'nobody': none has run on it yet"}
        with pytest.raises(SessionNotFound):
            await kit.recorder_for("nobody", create=False)
    finally:
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)
        await kit.aclose()


async def test_a_token_is_checked_on_every_request(endpoint: Any) -> None:
    client = await endpoint(["hi"], token="s3cret")
    body = run_input("t", "hi")
    assert (await client.http.post("/agent", json=body)).status_code == 401
    wrong = {"authorization": "Bearer nope"}
    assert (await client.http.get("/threads/t", headers=wrong)).status_code == 401
    client.http.headers["authorization"] = "Bearer s3cret"
    assert text(await client.run("t", "hi")) == "hi"


async def test_a_busy_thread_refuses_a_second_run(endpoint: Any) -> None:
    gate = asyncio.Event()

    @tool
    async def wait() -> str:
        """Wait for the gate."""
        await gate.wait()
        return "opened"

    call = Message.assistant("", [ToolCall("w1", "wait", "{}")])
    client = await endpoint([call, echo, echo], tools=[wait])
    first = asyncio.create_task(client.run("ann", "one"))
    for _ in range(100):
        await asyncio.sleep(0.02)
        second = await client.http.post("/agent", json=run_input("ann", "two"))
        if second.status_code == 409:
            break
    assert second.status_code == 409 and "in progress" in second.json()["error"]
    assert text(await client.run("bob", "three")) == "three"  # another thread is not held up
    gate.set()
    assert text(await first) == "one"


def test_agentkit_serve_runs_it_from_the_command_line(tmp_path: Path) -> None:
    """``agentkit serve --protocol agui`` in its own process, on port 0, told on stderr."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "agentkit_core", "serve", "--protocol", "agui"]
    argv = [*command, "--port", "0", "--model", "test"]
    with subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=tmp_path) as proc:
        try:
            assert proc.stderr is not None
            line = proc.stderr.readline()
            assert line.startswith("agentkit: serving agui on http://127.0.0.1:"), line
            url = line.split(" on ", 1)[1].strip()
            body = run_input("t", "hi")
            with httpx.stream("POST", f"{url}/agent", json=body, timeout=10) as response:
                lines = [x for x in response.iter_lines() if x.startswith("data: ")]
            assert json.loads(lines[-1][6:])["type"] == "RUN_FINISHED"
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--host", "0.0.0.0"], "lets other machines in: give a token"),
        (["--protocol", "nope"], "no server named 'nope' is installed"),
    ],
)
def test_agentkit_serve_refuses_clearly(args: list[str], says: str, tmp_path: Path) -> None:
    import subprocess
    import sys

    command = [sys.executable, "-m", "agentkit_core", "serve", "--protocol", "agui", *args]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr


def test_agentkit_serve_on_a_taken_port_says_so_in_one_line(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "agentkit_core", "serve", "--protocol", "agui"]
        argv = [*command, "--port", str(port), "--model", "test", "--store", "memory://"]
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert proc.returncode == 2, proc.stderr
    assert errors == [
        f"agentkit: error: cannot listen on 127.0.0.1:{port}: Address already in use; pick "
        "another port (--port; 0 picks a free one)"
    ], proc.stderr


async def test_the_page_is_served_with_ui_only_and_a_strict_policy() -> None:
    from agentkit_serve_agui import agui_app

    async with await Kit.open(model=ScriptedModel([]), session="memory://") as kit:
        for ui, status in ((False, 404), (True, 200)):
            transport = httpx.ASGITransport(app=agui_app(kit, ui=ui))
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
                page = await http.get("/")
            assert page.status_code == status
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "unsafe" not in policy
        assert "script-src 'sha256-" in policy and "connect-src 'self'" in policy
        assert "http://" not in page.text and "https://" not in page.text  # nothing fetched


async def test_two_servers_on_one_store_serve_one_thread_in_turn(tmp_path: Path) -> None:
    """A thread started on one server continues on another sharing the session store."""
    store = f"sqlite:///{tmp_path / 'sessions.db'}"
    kits = [await Kit.open(model=ScriptedModel([echo] * 2), session=store) for _ in range(2)]
    servers = [await served(kit) for kit in kits]
    try:
        async with httpx.AsyncClient(base_url=servers[0][1], timeout=10) as a:
            assert text(await Client(a).run("ann", "on a")) == "on a"
        async with httpx.AsyncClient(base_url=servers[1][1], timeout=10) as b:
            assert text(await Client(b).run("ann", "on b")) == "on a / on b"
            history = (await b.get("/threads/ann")).json()["messages"]
        assert [m["content"] for m in history if m["role"] == "user"] == ["on a", "on b"]
    finally:
        for kit, (server, _) in zip(kits, servers, strict=True):
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)
            await kit.aclose()


async def test_a_run_another_server_overtook_fails_with_a_conflict(tmp_path: Path) -> None:
    """Two servers, one thread, at once: the record stays one chain, never interleaved.

    The message on the second server is a new task at the leaf (as a new message abandons a run
    in progress in one process); the first server's run fails at its next write.
    """
    gate, waiting = asyncio.Event(), asyncio.Event()

    @tool
    async def wait() -> str:
        """Wait for the gate."""
        waiting.set()
        await gate.wait()
        return "opened"

    store = f"sqlite:///{tmp_path / 'sessions.db'}"
    call = Message.assistant("", [ToolCall("w1", "wait", "{}")])
    kits = [
        await Kit.open(model=ScriptedModel(steps), session=store, tools=[wait])
        for steps in ([call, echo], [echo])
    ]
    (sa, ua), (sb, ub) = [await served(kit) for kit in kits]
    try:
        async with httpx.AsyncClient(base_url=ua, timeout=10) as a:
            async with httpx.AsyncClient(base_url=ub, timeout=10) as b:
                first = asyncio.create_task(Client(a).run("ann", "one"))
                await waiting.wait()  # the first run has begun, and is in its tool
                assert text(await Client(b).run("ann", "two")) == "two"
                gate.set()
                overtaken = (await first)[-1]
                history = (await b.get("/threads/ann")).json()["messages"]
        assert (overtaken["type"], overtaken["code"]) == ("RUN_ERROR", "SessionConflict")
        assert [(m["role"], m["content"]) for m in history] == [
            ("user", "two"),
            ("assistant", "two"),
        ]
    finally:
        for kit, server in zip(kits, (sa, sb), strict=True):
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)
            await kit.aclose()


async def test_a_client_gone_mid_run_cancels_it_and_frees_the_thread(endpoint: Any) -> None:
    never = asyncio.Event()

    @tool
    async def wait() -> str:
        """Wait for ever."""
        await never.wait()
        return "never"

    call = Message.assistant("", [ToolCall("w1", "wait", "{}")])
    client = await endpoint([call, echo], tools=[wait])
    async with client.http.stream("POST", "/agent", json=run_input("ann", "one")) as response:
        async for line in response.aiter_lines():
            if "TOOL_CALL_END" in line:
                break  # the run is in its tool: hang up
    for _ in range(100):
        again = await client.http.post("/agent", json=run_input("ann", "two"))
        if again.status_code != 409:
            break
        await asyncio.sleep(0.05)
    assert again.status_code == 200 and '"delta":"two"' in again.text


class TestAGUIServerConformance(ServerConformance):
    def make_server(self) -> ServerFactory:
        return serve

    async def open_kit(self) -> Kit:
        return await Kit.open(model=ScriptedModel(["hello"]), session="memory://")


@pytest.mark.parametrize("thread", ["team/ann", "a/b/c", "x%2Fy"])
async def test_a_thread_whose_id_holds_a_slash_is_read_back(endpoint: Any, thread: str) -> None:
    """Such a thread ran, and then GET /threads/team/ann was a plain 404 'Not Found': the
    route took one path segment, so a client reloading it lost the conversation."""
    client = await endpoint([echo])
    assert text(await client.run(thread, "hello")) == "hello"
    for safe in ("/", ""):  # the slash written as it is, or escaped
        response = await client.http.get(f"/threads/{quote(thread, safe=safe)}")
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["threadId"] == thread
        assert [m["content"] for m in body["messages"]] == ["hello", "hello"]
