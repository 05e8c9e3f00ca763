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
