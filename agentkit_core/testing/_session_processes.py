"""The session-store conformance suite's part for stores several processes share.

A store other processes can open (SQLite, PostgreSQL; not ``memory://``) runs
:class:`SessionStoreProcessConformance` beside :class:`SessionStoreConformance`: writer
processes killed mid-append, and writers racing for one leaf.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from .._lookup import open_sessions
from .._plugins import PluginManager
from ._sessions import ids
from ._sessions import user
from ._writer_process import start_writer


class SessionStoreProcessConformance:
    """Several processes on one store: a writer killed mid-append, and writers racing.

    For stores other processes can share (not ``memory://``). Subclass and define
    :meth:`make_url`; override :meth:`after_kill` to do more once a writer was killed (crash
    the server, check the file). The writers are ``python -m
    agentkit_core.testing._session_writer`` processes with this interpreter.
    """

    def make_url(self, tmp_path: Path) -> str:
        raise NotImplementedError("define make_url(tmp_path) in the conformance subclass")

    def after_kill(self, url: str) -> None:
        """Called once a writer was killed with SIGKILL, before the store is read again."""

    @pytest.fixture
    def url(self, tmp_path: Path) -> str:
        return self.make_url(tmp_path)

    @staticmethod
    def start(url: str, session_id: str, after: str, count: int, name: str) -> _Writer:
        return _Writer.start(url, session_id, after, count, name)

    async def test_a_writer_killed_mid_append_loses_nothing_it_reported(
        self, url: str, pm: PluginManager
    ) -> None:
        async with await open_sessions(url, manager=pm) as sessions:
            head = await sessions.create()
        writer = self.start(url, head.session_id, "-", 0, "w")
        writer.go()
        reported = writer.read_oks(40)
        writer.kill()
        reported += writer.rest_oks()  # printed before the kill landed
        self.after_kill(url)
        async with await open_sessions(url, manager=pm) as sessions:
            path = await sessions.path(head.session_id)
            assert path[0].id == head.id
            items = path[1:]
            # a batch is all or nothing: pairs only, each (i, a) followed by its (i, b)
            assert len(items) % 2 == 0, [i.body for i in items[-3:]]
            bodies = [(i.body["i"], i.body["half"]) for i in items]
            assert bodies == [(n, h) for n in range(len(items) // 2) for h in "ab"]
            on_path = ids(items)
            for n, first, second in reported:
                assert on_path[2 * n : 2 * n + 2] == [first, second]
            # a batch in flight at the kill may have committed without being printed
            assert len(items) // 2 in (len(reported), len(reported) + 1)
            [more] = await sessions.append(head.session_id, items[-1].id, user("after"))
            assert (await sessions.leaf(head.session_id)).id == more.id

    async def test_two_processes_after_one_leaf_one_conflicts(
        self, url: str, pm: PluginManager
    ) -> None:
        async with await open_sessions(url, manager=pm) as sessions:
            head = await sessions.create()
        writers = [self.start(url, head.session_id, head.id, 1, name) for name in ("p", "q")]
        for writer in writers:
            writer.go()
        outputs = [writer.finish() for writer in writers]
        conflicts = [line for out in outputs for line in out if line.startswith("conflict")]
        assert len(conflicts) == 1, outputs
        winner = 0 if outputs[1][0].startswith("conflict") else 1
        winner_ok = outputs[winner][0].split()
        loser_ok = outputs[1 - winner][1].split()
        assert conflicts[0].split() == ["conflict", "0", winner_ok[3]]  # names the leaf it met
        async with await open_sessions(url, manager=pm) as sessions:
            path = await sessions.path(head.session_id)
        assert ids(path) == [head.id, winner_ok[2], winner_ok[3], loser_ok[2], loser_ok[3]]

    async def test_processes_appending_to_one_session_never_interleave(
        self, url: str, pm: PluginManager
    ) -> None:
        async with await open_sessions(url, manager=pm) as sessions:
            head = await sessions.create()
        per_writer = 15
        writers = [self.start(url, head.session_id, "-", per_writer, f"w{n}") for n in range(3)]
        for writer in writers:
            writer.go()
        outputs = [writer.finish() for writer in writers]
        async with await open_sessions(url, manager=pm) as sessions:
            path = await sessions.path(head.session_id)
        items = path[1:]
        assert len(items) == 2 * 3 * per_writer
        seen: dict[str, list[int]] = {}
        for first, second in zip(items[::2], items[1::2], strict=True):
            assert (first.body["writer"], first.body["i"], first.body["half"]) == (
                second.body["writer"],
                second.body["i"],
                "a",
            ) and second.body["half"] == "b", "a batch was split by another writer's items"
            seen.setdefault(first.body["writer"], []).append(first.body["i"])
        assert seen == {f"w{n}": list(range(per_writer)) for n in range(3)}
        reported = {line.split()[2] for out in outputs for line in out if line.startswith("ok")}
        assert reported == set(ids(items[::2]))


class _Writer:
    """One writer process and what it printed."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.proc = proc
        self.stdin, self.stdout, self.stderr = proc.stdin, proc.stdout, proc.stderr

    @classmethod
    def start(cls, url: str, session_id: str, after: str, count: int, name: str) -> _Writer:
        module = "agentkit_core.testing._session_writer"
        args = (url, session_id, after, str(count), name)
        return cls(start_writer(module, *args, name=f"writer {name}"))

    def go(self) -> None:
        self.stdin.write("go\n")
        self.stdin.flush()

    def read_oks(self, count: int) -> list[tuple[int, str, str]]:
        oks: list[tuple[int, str, str]] = []
        while len(oks) < count:
            line = self.stdout.readline()
            assert line, f"the writer died early (exit {self.proc.poll()})"
            oks.extend(_oks([line]))
        return oks

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        assert self.proc.returncode == -signal.SIGKILL

    def rest_oks(self) -> list[tuple[int, str, str]]:
        rest = self.stdout.read()
        for stream in (self.stdin, self.stdout, self.stderr):
            stream.close()
        return _oks(rest.splitlines())

    def finish(self) -> list[str]:
        out, err = self.proc.communicate(timeout=120)
        assert self.proc.returncode == 0, err
        lines: list[str] = out.splitlines()
        return lines


def _oks(lines: list[str]) -> list[tuple[int, str, str]]:
    oks = []
    for line in lines:
        if line.startswith("ok "):
            _, n, first, second = line.split()
            oks.append((int(n), first, second))
    return oks
