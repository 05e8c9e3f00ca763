"""The AG-UI endpoint: a starlette app over one opened kit, a session per thread.

``POST /agent`` takes a ``RunAgentInput`` and answers with the run's AG-UI events over SSE.
The thread's session holds the conversation, so of the messages a client sends only the last
user message is new: it is the task. A request with ``resume`` answers the interrupts the
thread's held run is waiting on (``{"approved": false}`` or ``status: "cancelled"`` refuses a
call) and streams the run on. ``GET /threads/{id}`` gives a thread's transcript and its open
interrupts, for a client that reloads (a 404 for a thread no run has started). One run at a
time per thread in this process: a second request on a busy thread is a 409; across processes
the session store refuses the second writer (``SessionConflict``, streamed as the run's error).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import AsyncIterator
from typing import Any

from ag_ui.core import ResumeEntry
from ag_ui.core import RunAgentInput
from ag_ui.encoder import EventEncoder
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.responses import JSONResponse
from starlette.responses import Response
from starlette.responses import StreamingResponse
from starlette.routing import Route

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import Recorder
from agentkit_core import SessionNotFound

from ._mapping import APPROVAL
from ._mapping import Mapper
from ._mapping import interrupt_id
from ._mapping import messages_of

#: Each AG-UI event as its SSE lines.
ENCODER = EventEncoder()
#: The largest request body taken, in bytes (a conversation's new message, not its history).
MAX_BODY = 1 << 20


class RequestError(Exception):
    """A request the endpoint refuses: its status and what to fix."""

    def __init__(self, status: int, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.status, self.details = status, details

    def response(self) -> JSONResponse:
        body: dict[str, Any] = {"error": str(self)}
        if self.details is not None:
            body["details"] = self.details
        return JSONResponse(body, status_code=self.status)


class Endpoint:
    """The kit's agent served to many threads, each recorded as its own session."""

    def __init__(self, kit: Kit, *, token: str | None, max_body: int = MAX_BODY) -> None:
        self.kit, self.token, self.max_body = kit, token, max_body
        self.agent = Agent.from_config(kit.config())
        self.busy: set[str] = set()  # the threads with a run streaming in this process

    def check_token(self, request: Request) -> None:
        if self.token is None:
            return
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
            raise RequestError(401, "this server needs 'Authorization: Bearer <token>'")

    async def read_input(self, request: Request) -> RunAgentInput:
        size = request.headers.get("content-length")
        if size is not None and size.isdigit() and int(size) > self.max_body:
            raise RequestError(413, f"the request body is over {self.max_body} bytes")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > self.max_body:
                raise RequestError(413, f"the request body is over {self.max_body} bytes")
        try:
            data = json.loads(body)
        except ValueError as exc:
            raise RequestError(400, f"the request body is not JSON: {exc}") from None
        except RecursionError:
            raise RequestError(
                400, "the request body is not JSON: it is nested too deeply to decode"
            ) from None
        try:
            return RunAgentInput.model_validate(data)
        except ValidationError as exc:
            details = exc.errors(include_url=False, include_context=False, include_input=False)
            raise RequestError(
                422, "the request body is not an AG-UI RunAgentInput", details
            ) from None

    async def run(self, request: Request) -> Response:
        try:
            self.check_token(request)
            given = await self.read_input(request)
            task = None if given.resume else last_user_text(given)
            thread = given.thread_id
            if not thread.strip():
                raise RequestError(400, "threadId is empty; name the conversation")
            if thread in self.busy:
                raise RequestError(
                    409, f"thread {thread!r} has a run in progress; wait for its end"
                )
            recorder = await self.recorder(thread)
            answers = None if task is not None else held_answers(recorder, given.resume or [])
        except RequestError as exc:
            return exc.response()
        return StreamingResponse(
            self.stream(given, recorder, task, answers),
            media_type=ENCODER.get_content_type(),
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )

    async def recorder(self, thread: str) -> Recorder:
        """The thread's recorder; a thread id no session may have is a 400 naming it."""
        try:
            return await self.kit.recorder_for(thread)
        except ConfigError as exc:
            raise RequestError(400, f"threadId {thread!r}: {exc}") from None

    async def stream(
        self, given: RunAgentInput, recorder: Any, task: str | None, answers: Any
    ) -> AsyncIterator[str]:
        """The run's AG-UI events, encoded for SSE; the thread is busy while they stream.

        The thread is claimed here, where its release is certain (a stream never started, its
        client gone before the first byte, claims nothing).
        """
        thread = given.thread_id
        mapper = Mapper(thread, given.run_id)
        if thread in self.busy:  # another request on the thread began since this one's check
            for out in mapper.failed(f"thread {thread!r} has a run in progress", "Conflict"):
                yield ENCODER.encode(out)
            return
        self.busy.add(thread)
        try:
            wc = recorder.working_context(self.agent.model.name)
            if task is not None:
                ctx = self.agent.new_context()
                ctx.recorder = recorder
                events = self.agent.run_stream_events(task, ctx=ctx, wc=wc)
            else:
                run_id, approvals = answers
                ctx = self.agent.new_context(run_id)
                ctx.recorder = recorder
                events = self.agent.resume_stream_events(run_id, approvals, ctx=ctx, wc=wc)
            ended = False
            try:
                async for event in events:
                    for out in mapper.map(event):
                        yield ENCODER.encode(out)
                    ended = ended or event.kind == "run_failed"
            except Exception as exc:
                if not ended:
                    for out in mapper.failed(str(exc), type(exc).__name__):
                        yield ENCODER.encode(out)
        finally:
            self.busy.discard(thread)

    async def thread(self, request: Request) -> Response:
        try:
            self.check_token(request)
        except RequestError as exc:
            return exc.response()
        thread = request.path_params["thread_id"]
        try:
            recorder = await self.kit.recorder_for(thread, create=False)
        except SessionNotFound:  # reading creates nothing: a thread begins with its first run
            return RequestError(404, f"no thread {thread!r}: none has run on it yet").response()
        state = recorder.state
        messages = [*state.conversation, *state.run_messages] if state.run else state.conversation
        body = {
            "threadId": thread,
            "messages": [m.model_dump(by_alias=True) for m in messages_of(messages)],
            "interrupts": [
                {
                    "id": interrupt_id(c.id, state.run or ""),
                    "reason": APPROVAL,
                    "toolCallId": c.id,
                    "tool": c.name,
                    "arguments": c.arguments,
                }
                for c in state.held
            ],
        }
        return JSONResponse(body)


def last_user_text(given: RunAgentInput) -> str:
    """The text of the last user message: the new message of the conversation."""
    for message in reversed(given.messages):
        if message.role == "user":
            content = message.content
            text = (
                content
                if isinstance(content, str)
                else "".join(getattr(part, "text", "") or "" for part in content)
            )
            if text.strip():
                return text
            break
    raise RequestError(
        400, "no user message with text: send the new message last in messages, or resume"
    )


def held_answers(recorder: Any, resume: list[ResumeEntry]) -> tuple[str, dict[str, bool]]:
    """The held run and its answers, from the interrupts ``resume`` answers; else a 4xx."""
    state = recorder.state
    if not state.held or state.run is None:
        raise RequestError(409, "this thread has no run waiting for approval")
    held = {interrupt_id(call.id, state.run): call.id for call in state.held}
    unknown = sorted({entry.interrupt_id for entry in resume} - set(held))
    if unknown:
        raise RequestError(
            400,
            f"no interrupt {', '.join(unknown)} is open on this thread; "
            f"open: {', '.join(sorted(held))} (an interrupt's id names its call and its run: "
            "one a later message replaced is answered by nothing)",
        )
    approvals: dict[str, bool] = {}
    for entry in resume:
        if held[entry.interrupt_id] in approvals:
            raise RequestError(
                400, f"interrupt {entry.interrupt_id} is answered twice; answer once"
            )
        approvals[held[entry.interrupt_id]] = approved(entry)
    return state.run, approvals


def approved(entry: ResumeEntry) -> bool:
    """Whether ``entry`` approves its call; an answer that says neither yes nor no is a 400.

    A resolved interrupt with no payload (or ``{}``) approves; otherwise only ``approved``, a
    boolean, decides. Another shape (``false``, ``{"approve": false}``, ``{"approved":
    "false"}``) is refused rather than read as yes.
    """
    if entry.status == "cancelled":
        return False
    payload = entry.payload
    if payload is None or payload == {}:
        return True
    if isinstance(payload, dict) and set(payload) == {"approved"}:
        if isinstance(payload["approved"], bool):
            return payload["approved"]
    raise RequestError(
        400,
        f"interrupt {entry.interrupt_id} is answered with the payload {payload!r}: send "
        '{"approved": true} or {"approved": false}, or no payload to approve',
    )


def agui_app(
    kit: Kit, *, token: str | None = None, ui: bool = False, max_body: int = MAX_BODY
) -> Starlette:
    """The AG-UI endpoint over ``kit`` (opened, with a session store) as an ASGI app.

    ``token``: every request but the page's must carry ``Authorization: Bearer <token>``.
    ``ui``: ``GET /`` serves the chat page.
    """
    endpoint = Endpoint(kit, token=token, max_body=max_body)
    routes = [
        Route("/agent", endpoint.run, methods=["POST"]),
        # a thread id may hold a slash ("team/ann"): the rest of the path is the id
        Route("/threads/{thread_id:path}", endpoint.thread, methods=["GET"]),
    ]
    if ui:
        from ._page import PAGE
        from ._page import POLICY

        async def page(request: Request) -> Response:
            return HTMLResponse(PAGE, headers={"content-security-policy": POLICY})

        routes.append(Route("/", page, methods=["GET"]))
    return Starlette(routes=routes)
