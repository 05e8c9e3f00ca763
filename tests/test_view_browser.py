"""The run viewer's page in a real headless Chromium: every turn and tool call is in the DOM,
a click on a tool call's result opens it, the search box filters; a screenshot is kept under
``.ci/artifacts/``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit_core.cli import read_trace_file
from tests.chromium import Browser
from tests.conftest import run_cli
from tests.view_runs import BIG
from tests.view_runs import traced_runs

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / ".ci" / "artifacts"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as made:
        yield made


def expected(trace: Path) -> tuple[int, list[str]]:
    """The turns and the tool-call ids a trace holds, read from its spans."""
    spans = read_trace_file(trace)
    turns = sum(1 for s in spans if s["name"] == "turn")
    ids = [i for s in spans if s["name"] == "model_call" for i in s["attributes"]["tool_call_ids"]]
    return turns, ids


def rendered(tmp_path: Path) -> tuple[Path, Path]:
    trace, page = tmp_path / "runs.jsonl", tmp_path / "runs.html"
    asyncio.run(traced_runs(trace))
    proc = run_cli("view", str(trace), "--out", str(page), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return trace, page


def click(browser: Browser, selector: str) -> None:
    """A real mouse click in the middle of the element ``selector`` finds."""
    box = browser.js(
        f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
        " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
    )
    for kind in ("mousePressed", "mouseReleased"):
        browser.call(
            "Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1
        )


def visible(browser: Browser, selector: str) -> bool:
    return bool(
        browser.js(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " return !!e && e.checkVisibility() && e.getClientRects().length > 0; })()"
        )
    )


def test_every_turn_and_tool_call_is_on_the_page(browser: Browser, tmp_path: Path) -> None:
    trace, page = rendered(tmp_path)
    turns, ids = expected(trace)
    browser.open(page)
    assert browser.js("document.querySelectorAll('section.turn').length") == turns
    shown = browser.js(
        "[...document.querySelectorAll('[data-call-id]')].map(e => e.dataset.callId)"
    )
    assert sorted(shown) == sorted(ids)
    assert all(visible(browser, f'[data-call-id="{i}"]') for i in ids)
    assert browser.js("document.querySelectorAll('article.run').length") == 2
    # nothing but the page itself was loaded
    assert browser.js("performance.getEntriesByType('resource').length") == 0
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.screenshot(ARTIFACTS / "run-viewer.png")


def test_expanding_a_tool_call_shows_its_result(browser: Browser, tmp_path: Path) -> None:
    _, page = rendered(tmp_path)
    browser.open(page)
    result = '[data-call-id="t2c1"] details.result'
    assert browser.js(f"document.querySelector('{result}').open") is False
    assert not visible(browser, f"{result} pre")
    click(browser, f"{result} > summary")
    assert browser.js(f"document.querySelector('{result}').open") is True
    assert visible(browser, f"{result} pre")
    text = browser.js(f"document.querySelector('{result} pre').innerText")
    assert BIG.splitlines()[-1] in text
    browser.screenshot(ARTIFACTS / "run-viewer-expanded.png")


def test_search_keeps_only_what_matches(browser: Browser, tmp_path: Path) -> None:
    _, page = rendered(tmp_path)
    browser.open(page)
    click(browser, "#search")
    browser.call("Input.insertText", text="disk is on fire")
    shown = browser.js(
        "[...document.querySelectorAll('.tool.searchable')]"
        ".filter(e => e.checkVisibility()).map(e => e.dataset.callId)"
    )
    assert shown == ["t2c0"]
    assert browser.js("document.querySelector('[data-call-id=\"t2c0\"] details.result').open")


def test_a_page_from_agentkit_run_trace_opens(browser: Browser, tmp_path: Path) -> None:
    trace, page = tmp_path / "cli.jsonl", tmp_path / "cli.html"
    proc = run_cli(
        "run",
        "What is 6 * 7?",
        "--model",
        "test",
        "--tools",
        "examples.tools:TOOLS",
        "-q",
        "--trace",
        str(trace),
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert run_cli("view", str(trace), "--out", str(page), cwd=ROOT).returncode == 0
    turns, ids = expected(trace)
    browser.open(page)
    assert browser.js("document.querySelectorAll('section.turn').length") == turns == 2
    assert browser.js("document.querySelectorAll('[data-call-id]').length") == len(ids) == 4


def png(width: int = 3, height: int = 2) -> bytes:
    """A real PNG (red pixels) the browser decodes."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def test_an_image_part_renders_as_an_img_the_csp_allows(
    browser: Browser, tmp_path: Path, pm
) -> None:
    from agentkit_core import Message
    from agentkit_core import open_checkpointer
    from agentkit_core.cli._viewer import render_html
    from agentkit_core.cli._viewer import view_from_checkpoint
    from agentkit_core.content import DocumentPart
    from agentkit_core.content import ImagePart
    from agentkit_core.content import TextPart

    task = Message.user(
        (
            TextPart("what is this?"),
            ImagePart(data=png(), media_type="image/png"),
            ImagePart(url="https://example.com/cat.png"),
            DocumentPart(data=b"%PDF-1.7", name="r.pdf"),
        )
    )

    async def checkpoint() -> Any:
        async with await open_checkpointer("memory://", manager=pm) as cp:
            await cp.snapshot("r1", {"task": task.text, "transcript": [task]})
            return await cp.resume("r1")

    page = tmp_path / "image.html"
    page.write_text(render_html([view_from_checkpoint(asyncio.run(checkpoint()), 1)], "image"))
    browser.open(page)
    images = browser.js(
        "[...document.querySelectorAll('figure.media img')]"
        ".map(i => [i.src.slice(0, 22), i.complete && i.naturalWidth, i.naturalHeight])"
    )
    assert images == [["data:image/png;base64,", 3, 2]]  # decoded: the CSP let it in
    lines = browser.js("[...document.querySelectorAll('div.media')].map(e => e.innerText)")
    assert lines == [
        "image (by URL, https://example.com/cat.png) (not loaded: the page fetches nothing)",
        "document (application/pdf, 8 bytes) (not loaded: the page fetches nothing)",
    ]
    assert browser.js("performance.getEntriesByType('resource').length") == 0


#: What a model, a tool or a person can put in a run, each meant to run script in the page,
#: break out of where it is shown, or show as something else.
HOSTILE = (
    "</script><script>window.pwned='script'</script>",
    "<img src=x onerror=\"window.pwned='img'\">",
    "<svg onload=\"window.pwned='svg'\"></svg>",
    "<!-- <iframe src=\"javascript:window.parent.pwned='iframe'\">",
    '"><a href="javascript:window.pwned=\'href\'" id="click-me">x</a>',
    "a\u2028b\u2029c ]]> <![CDATA[ {{7*7}} ${7*7}",
)


def hostile_run(trace: Path, pm: Any) -> str:
    """A run whose task, answer, tool name, call id, arguments and result are all hostile,
    traced to ``trace``; its checkpoint's page is returned."""
    from agentkit_core import Agent
    from agentkit_core import Message
    from agentkit_core import ToolCall
    from agentkit_core import open_checkpointer
    from agentkit_core.cli import TraceFile
    from agentkit_core.cli._viewer import render_html
    from agentkit_core.cli._viewer import view_from_checkpoint
    from agentkit_core.testing import ScriptedModel

    text = " ".join(HOSTILE)

    def echo(value: str) -> str:
        """Echo a value."""
        return value

    steps = [
        Message.assistant(
            text,
            tool_calls=[
                ToolCall(HOSTILE[1], "echo", json.dumps({"value": text})),
                ToolCall("c2", HOSTILE[2], json.dumps({HOSTILE[0]: HOSTILE[3]})),
            ],
        ),
        text,
    ]

    async def go() -> str:
        async with await open_checkpointer("memory://", manager=pm) as store:
            with TraceFile(trace) as exporter:
                agent = Agent(
                    "a",
                    ScriptedModel(steps),
                    tools=[echo],
                    exporters=[exporter],
                    checkpointer=store,
                )
                result = await agent.run(text)
            saved = await store.resume(result.run_id, include_terminal=True)
            assert saved is not None
            return render_html([view_from_checkpoint(saved, 1)], HOSTILE[0])

    return asyncio.run(go())


def test_hostile_text_in_a_run_shows_as_text_and_runs_nothing(
    browser: Browser, tmp_path: Path, pm: Any
) -> None:
    trace = tmp_path / "hostile.jsonl"
    checkpoint_page = tmp_path / "checkpoint.html"
    checkpoint_page.write_text(hostile_run(trace, pm), encoding="utf-8")
    trace_page = tmp_path / "trace.html"
    assert run_cli("view", str(trace), "--out", str(trace_page), cwd=ROOT).returncode == 0
    for page in (trace_page, checkpoint_page):
        browser.open(page)
        click(browser, "#search")
        browser.call("Input.insertText", text=HOSTILE[0])
        browser.js("document.querySelectorAll('details').forEach(d => d.open = true)")
        assert browser.js("typeof window.pwned") == "undefined", page.name
        # the page's own elements only: no script, frame, image, link or svg came from the run
        assert browser.js("document.scripts.length") == 1
        assert browser.js("document.querySelectorAll('iframe, img, svg, a, object').length") == 0
        shown = browser.js("document.body.innerText")
        for item in HOSTILE:
            assert item.replace("\u2028", "").replace("\u2029", "")[:20] in shown.replace(
                "\u2028", ""
            ).replace("\u2029", ""), (page.name, item)
        assert browser.js("document.title") == HOSTILE[0] or page == trace_page
        assert browser.js("performance.getEntriesByType('resource').length") == 0


def test_a_bidi_override_in_a_tool_name_is_shown_not_obeyed(
    browser: Browser, tmp_path: Path
) -> None:
    """A right-to-left override showed the tool ``\\u202etxt.exe`` as ``exe.txt``."""
    from agentkit_core import Agent
    from agentkit_core import Message
    from agentkit_core import ToolCall
    from agentkit_core.cli import TraceFile
    from agentkit_core.testing import ScriptedModel

    name, argument = "\u202etxt.exe", "\u2067delete\u2069 all"
    steps = [
        Message.assistant("", tool_calls=[ToolCall("c1", name, json.dumps({"p": argument}))]),
        "done",
    ]
    trace, page = tmp_path / "bidi.jsonl", tmp_path / "bidi.html"

    async def go() -> None:
        with TraceFile(trace) as exporter:
            await Agent("a", ScriptedModel(steps), exporters=[exporter]).run("go")

    asyncio.run(go())
    assert run_cli("view", str(trace), "--out", str(page), cwd=ROOT).returncode == 0
    browser.open(page)
    browser.js("document.querySelectorAll('details').forEach(d => d.open = true)")
    shown = browser.js("document.body.innerText")
    assert "tool \\u202etxt.exe" in shown and "\\u2067delete\\u2069 all" in shown
    assert not set(shown) & {"\u202e", "\u2067", "\u2069"}


def test_markup_that_got_past_the_escaping_still_runs_nothing(
    browser: Browser, tmp_path: Path
) -> None:
    """Defence in depth: the page's policy lets only its own search script run, by its hash.
    Before, ``script-src 'unsafe-inline'`` would have run a ``<script>`` or an ``onerror=``
    that an escaping bug let onto the page."""
    _, page = rendered(tmp_path)
    text = page.read_text(encoding="utf-8")
    planted = (
        "<script>window.pwned='script'</script><img src=x onerror=\"window.pwned='img'\">"
        "<svg onload=\"window.pwned='svg'\"></svg>"
    )
    page.write_text(text.replace("<main>", "<main>" + planted, 1), encoding="utf-8")
    browser.open(page)
    assert browser.js("typeof window.pwned") == "undefined"
    click(browser, "#search")  # the page's own script still runs: the search filters
    browser.call("Input.insertText", text="disk is on fire")
    shown = browser.js(
        "[...document.querySelectorAll('.tool.searchable')]"
        ".filter(e => e.checkVisibility()).map(e => e.dataset.callId)"
    )
    assert shown == ["t2c0"]
    assert "script-src 'sha256-" in text and "script-src 'unsafe-inline'" not in text
