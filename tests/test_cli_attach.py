"""``agentkit run --attach FILE``: files become content parts of the task, or a clear refusal."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from agentkit_core import open_sessions
from agentkit_core.cli._attach import attached_task
from agentkit_core.content import MAX_PART_BYTES
from agentkit_core.content import AudioPart
from agentkit_core.content import DocumentPart
from agentkit_core.content import ImagePart
from agentkit_core.content import TextPart
from tests.test_cli_run import agentkit
from tests.test_cli_run import one_error

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


def test_each_file_becomes_a_part_after_the_text(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    (tmp_path / "b.pdf").write_bytes(b"%PDF-1.7")
    (tmp_path / "c.wav").write_bytes(b"RIFF")
    task = attached_task("what is this?", [str(tmp_path / n) for n in ("a.png", "b.pdf", "c.wav")])
    assert task == [
        "what is this?",
        ImagePart(data=PNG, media_type="image/png"),
        DocumentPart(data=b"%PDF-1.7", name="b.pdf"),
        AudioPart(b"RIFF", "audio/wav"),
    ]
    assert attached_task("just text", []) == "just text"


def test_an_attached_image_reaches_the_recorded_task(tmp_path: Path, pm) -> None:
    (tmp_path / "cat.png").write_bytes(PNG)
    url = f"sqlite:///{tmp_path / 's.db'}"
    proc = agentkit(
        "run",
        "describe",
        "--attach",
        str(tmp_path / "cat.png"),
        "--model",
        "test",
        "--session",
        url,
    )
    assert proc.returncode == 0, proc.stderr
    session = re.search(r"agentkit: session (\S+)", proc.stderr)
    assert session is not None

    async def first_user_message() -> object:
        async with await open_sessions(url, manager=pm) as sessions:
            items = await sessions.path(session.group(1))
        return next(i.body["message"] for i in items if i.kind == "user")

    message = asyncio.run(first_user_message())
    assert message.content == (TextPart("describe"), ImagePart(data=PNG, media_type="image/png"))  # type: ignore[attr-defined]


def test_unknown_unsupported_and_oversized_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.qqq").write_text("x")
    (tmp_path / "page.html").write_text("<p>")
    big = tmp_path / "huge.png"
    with big.open("wb") as f:  # sparse: the size is checked before anything is read
        f.truncate(MAX_PART_BYTES + 1)
    for name, says in [
        ("notes.qqq", "its suffix is not one agentkit sends"),
        ("page.html", "media type 'text/html' is not one agentkit sends"),
        ("huge.png", f"is over the limit of {MAX_PART_BYTES} bytes"),
        ("missing.png", "cannot read it"),
    ]:
        proc = agentkit("run", "x", "--model", "test", "--attach", str(tmp_path / name))
        one_error(proc, f"--attach {tmp_path / name}", says)


def test_a_task_of_attachments_alone_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    proc = agentkit("run", "", "--model", "test", "--attach", str(tmp_path / "a.png"))
    assert proc.returncode == 0, proc.stderr
