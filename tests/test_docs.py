"""Every ```python block in docs/ and README.md runs.

The blocks of one file run in order, as one script, in a fresh interpreter inside an empty
temporary directory, so a guide may build on its earlier blocks. A block whose fence line says
``python no-run`` is shown to the reader but not run (use it only for code that needs a hosted
model or a real network peer).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.S | re.M)


def python_blocks(path: Path) -> list[str]:
    return [
        body
        for options, body in FENCE.findall(path.read_text(encoding="utf-8"))
        if "no-run" not in options
    ]


DOCS = [p for p in sorted([*ROOT.glob("docs/*.md"), ROOT / "README.md"]) if python_blocks(p)]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_doc_code_blocks_run(doc: Path, tmp_path: Path) -> None:
    blocks = python_blocks(doc)
    script = tmp_path / "doc_blocks.py"
    script.write_text("\n\n".join(blocks), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, f"{doc.name} code blocks failed:\n{proc.stdout}\n{proc.stderr}"


def test_fence_parser_finds_blocks_and_honours_no_run(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text("```python\nprint(1)\n```\n\n```python no-run\nboom()\n```\n```bash\nls\n```\n")
    assert python_blocks(doc) == ["print(1)\n"]
