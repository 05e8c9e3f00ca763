"""serve-agui's chat page in a real headless Chromium: type a message, see the streamed text,
approve a held call, reload and see the conversation continue; a screenshot is kept under
``.ci/artifacts/``."""

from __future__ import annotations

import asyncio
import json
import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import tool
from agentkit_core.testing import ScriptedModel
from tests.chromium import Browser

agui = pytest.importorskip("agentkit_serve_agui")
ARTIFACTS = Path(__file__).resolve().parent.parent / ".ci" / "artifacts"


@tool
def transfer(amount: int) -> str:
    """Move money."""
    return f"moved {amount}"


def ask_for_transfers(call: ToolCall) -> ToolDecision | None:
    return ToolDecision.ask("a person approves transfers") if call.name == "transfer" else None


def echo(request: Any) -> Message:
    return Message.assistant(" / ".join(m.text for m in request.messages if m.role == "user"))


STEPS: list[Any] = [
    Message.assistant("", [ToolCall("c1", "transfer", '{"amount": 5}')]),
    "paid ann 5",
    echo,
]


@pytest.fixture
def server() -> Iterator[str]:
    """The AG-UI endpoint with its page, served from a thread of its own; yields its URL."""
    told: queue.Queue[str] = queue.Queue()
    loop = asyncio.new_event_loop()
    stop = loop.create_future()

    async def main() -> None:
        kit = await Kit.open(
            model=ScriptedModel(STEPS),
            tools=[transfer],
            before_tool_call=ask_for_transfers,
            session="memory://",
        )
        async with kit:
            serving = asyncio.ensure_future(
                agui.serve(kit, host="127.0.0.1", port=0, ready=told.put, ui=True)
            )
            await asyncio.wait([stop, serving], return_when=asyncio.FIRST_COMPLETED)
            serving.cancel()
            await asyncio.gather(serving, return_exceptions=True)

    runner = threading.Thread(target=loop.run_until_complete, args=(main(),))
    runner.start()
    try:
        yield told.get(timeout=30)
    finally:
        loop.call_soon_threadsafe(stop.set_result, None)
        runner.join(timeout=30)
        loop.close()


def goto(browser: Browser, url: str) -> None:
    browser.events.clear()
    browser.call("Page.navigate", url=url)
    browser.wait_event("Page.loadEventFired")


def wait_for(browser: Browser, expression: str, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = browser.js(expression)
        if value:
            return value
        time.sleep(0.05)
    shown = browser.js("document.getElementById('log').innerHTML")
    raise AssertionError(f"never true: {expression}; the page shows: {shown}")


def say(browser: Browser, text: str) -> None:
    """Type ``text`` into the box and press Enter, as a person would."""
    browser.js("document.getElementById('input').focus()")
    browser.call("Input.insertText", text=text)
    for kind in ("keyDown", "keyUp"):
        browser.call(
            "Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13
        )


def click(browser: Browser, selector: str) -> None:
    box = browser.js(
        f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
        " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
    )
    for kind in ("mousePressed", "mouseReleased"):
        browser.call(
            "Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1
        )


def texts(browser: Browser, selector: str) -> list[str]:
    found = f"[...document.querySelectorAll({json.dumps(selector)})].map(e => e.textContent)"
    return list(browser.js(found))


def test_chat_approve_reload_and_continue(server: str) -> None:
    with Browser() as browser:
        goto(browser, server + "/")
        wait_for(browser, "document.body.dataset.idle === 'yes'")
        thread = browser.js("new URLSearchParams(location.search).get('thread')")
        assert thread  # the thread is in the address

        say(browser, "pay ann 5")
        wait_for(browser, "!!document.querySelector('.approval button.approve')")
        assert texts(browser, "details.tool summary") == ["transfer"]
        assert texts(browser, "details.tool pre.args") == ['{"amount": 5}']
        click(browser, "details.tool summary")  # a tool call folds open
        assert browser.js("document.querySelector('details.tool').open") is True
        click(browser, ".approval button.approve")
        wait_for(browser, "!!document.querySelector('.msg.assistant')")
        wait_for(browser, "document.body.dataset.idle === 'yes'")
        assert texts(browser, ".msg.assistant") == ["paid ann 5"]
        assert texts(browser, "details.tool pre.result") == ["→ moved 5"]

        goto(browser, f"{server}/?thread={thread}")  # a reload continues the conversation
        wait_for(browser, "document.body.dataset.idle === 'yes'")
        assert texts(browser, ".msg.user") == ["pay ann 5"]
        assert texts(browser, ".msg.assistant") == ["paid ann 5"]
        assert texts(browser, "details.tool pre.result") == ["→ moved 5"]
        say(browser, "thanks")
        wait_for(browser, "document.querySelectorAll('.msg.assistant').length === 2")
        wait_for(browser, "document.body.dataset.idle === 'yes'")
        assert texts(browser, ".msg.assistant")[-1] == "pay ann 5 / thanks"
        policy = browser.js("document.querySelectorAll('.error').length")
        assert policy == 0
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        browser.screenshot(ARTIFACTS / "serve-agui-chat.png")
