"""The files store's BM25 index: files written by hand are found, a write is seen at once."""

from __future__ import annotations

from pathlib import Path

from agentkit_memory_files._bm25 import stem

from agentkit_core import open_memory

FILE = "---\nversion: 3\nupdated: 2025-01-02T00:00:00+00:00\n---\n{body}\n"


async def test_files_written_before_are_found(tmp_path: Path, pm) -> None:
    scope = tmp_path / "user"
    scope.mkdir()
    (scope / "Deploys.md").write_text(FILE.format(body="Production deploys on Tuesdays."))
    (scope / "Coffee.md").write_text(FILE.format(body="The user drinks espresso."))
    async with await open_memory(f"file://{tmp_path}", manager=pm) as memory:
        [hit] = await memory.query("deploying", 5)
        assert (hit.entry.title, hit.entry.version) == ("Deploys", 3)


async def test_the_index_follows_writes_here_and_by_hand(tmp_path: Path, pm) -> None:
    async with await open_memory(f"file://{tmp_path}", manager=pm) as memory:
        await memory.save("user", "Coffee", "The user drinks espresso.", base=0)
        assert [h.entry.title for h in await memory.query("espresso", 5)] == ["Coffee"]
        await memory.save("user", "Coffee", "The user drinks tea.", base=1)
        assert await memory.query("espresso", 5) == []
        # another process (here: a person) writes a file: the next query reads it
        (tmp_path / "user" / "Tea.md").write_text(FILE.format(body="Green tea, no sugar."))
        assert {h.entry.title for h in await memory.query("tea", 5)} == {"Coffee", "Tea"}


def test_stem_folds_common_endings() -> None:
    assert {stem(w) for w in ("deploy", "deploys", "deployed", "deploying")} == {"deploy"}
    assert stem("queries") == "query" and stem("is") == "is"
