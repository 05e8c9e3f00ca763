"""Recorded conversations across processes: what a store several processes share must carry.

A store plugin's test subclasses :class:`RecorderProcessConformance` and defines
:meth:`~RecorderProcessConformance.make_url`, as for ``SessionStoreProcessConformance``. Each
step runs in a new ``python -m agentkit_core.testing._recorder_worker`` process with this
interpreter: a run suspended for approval in one process is approved in another, and continued
there with a new message; two processes continuing one session race; a restart on another
model sends none of the first model's reasoning. Requires pytest (pytest-asyncio, auto mode).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .._lookup import open_sessions
from .._messages import Message
from .._plugins import PluginManager

WORKER = "agentkit_core.testing._recorder_worker"


def step(mode: str, url: str, *args: str) -> dict[str, Any]:
    """Run one worker step to its end and return the JSON it printed."""
    out = subprocess.run(
        [sys.executable, "-m", WORKER, mode, url, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


class RecorderProcessConformance:
    """Resume at the leaf, approvals and races, each step in a process of its own."""

    def make_url(self, tmp_path: Path) -> str:
        raise NotImplementedError("define make_url(tmp_path) in the conformance subclass")

    @pytest.fixture
    def url(self, tmp_path: Path) -> str:
        return self.make_url(tmp_path)

    async def test_a_call_held_for_approval_is_released_in_a_new_process(
        self, url: str, pm: PluginManager
    ) -> None:
        first = step("suspend", url)
        assert first["status"] == "suspended"
        assert first["pending"] == ["c2"]
        second = step("approve", url, first["session"], "c2")
        # the new process finds the run and its calls where the first left them: both to be
        # settled, the transfer held for a person
        assert second["run"] == first["run"]
        assert (second["pending"], second["held"]) == (["c1", "c2"], ["c2"])
        assert (second["status"], second["output"]) == ("done", "paid")
        # the follow-up is sent the instructions as recorded and the whole conversation
        seen = second["seen"]
        assert seen[0] == "system: You move money for people."
        assert seen[1] == "user: pay ann 5"
        assert any("account of ann" in s for s in seen)
        assert any("moved 5" in s for s in seen)
        assert seen[-2:] == ["assistant: paid", "user: did it work?"]
        async with await open_sessions(url, manager=pm) as sessions:
            path = await sessions.path(first["session"])
        kinds = [i.kind for i in path]
        assert kinds.count("header") == 1  # same kit, same model: no header change recorded
        assert kinds.count("instructions") == 1  # the same render is not recorded again
        approvals = [i.body for i in path if i.kind == "verdict" and i.body["hook"] == "approval"]
        assert [(v["call"], v["decision"], v["by"]) for v in approvals] == [
            ("c2", "allow", "person")
        ]
        results = [i.body["message"] for i in path if i.kind == "tool_result"]
        assert sorted(m.tool_call_id for m in results) == ["c1", "c2"]
        assert {i.body["run"] for i in path if i.kind == "tool_result"} == {first["run"]}

    async def test_two_processes_continuing_one_session_never_interleave(
        self, url: str, pm: PluginManager
    ) -> None:
        sid = step("suspend", url)["session"]
        async with await open_sessions(url, manager=pm) as sessions:
            before = [i.id for i in await sessions.path(sid)]
        racers = [
            subprocess.Popen(
                [sys.executable, "-m", WORKER, "race", url, sid, name],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in ("p", "q")
        ]
        for racer, name in zip(racers, ("p", "q"), strict=True):
            assert racer.stdout is not None  # both have read the leaf before either writes
            assert json.loads(racer.stdout.readline()) == {"ready": name}
        outcomes = []
        for racer in racers:
            out, err = racer.communicate("go\n", timeout=120)
            assert racer.returncode == 0, err
            outcomes.append(json.loads(out.strip().splitlines()[-1]))
        conflicts = [o for o in outcomes if "conflict" in o]
        winners = [o for o in outcomes if "ok" in o]
        assert len(conflicts) == 1 and len(winners) == 1, outcomes
        assert conflicts[0]["conflict"] == sid
        assert sid in conflicts[0]["message"]
        async with await open_sessions(url, manager=pm) as sessions:
            path = await sessions.path(sid)
        assert [i.id for i in path[: len(before)]] == before
        added = path[len(before) :]
        runs = {i.body.get("run") for i in added}
        assert len(runs) == 1  # one process's run, alone on the path
        texts = [i.body["message"].text for i in added if i.kind in ("user", "response")]
        name = winners[0]["ok"].split()[-1]
        assert texts == [f"from {name}", f"hello {name}"]

    async def test_a_restart_on_another_model_sends_none_of_the_first_models_reasoning(
        self, url: str, pm: PluginManager
    ) -> None:
        sid = step("reason", url, "model-a")["session"]
        async with await open_sessions(url, manager=pm) as sessions:
            path = await sessions.path(sid)
        [answer] = [i.body for i in path if i.kind == "response"]
        assert answer["model"] == "model-a"
        message = answer["message"]
        assert isinstance(message, Message)
        assert message.metadata["reasoning"] == {"model": "model-a", "text": "2+2"}
        # the same model after a restart is sent its own reasoning back ...
        assert step("switch", url, sid, "model-a")["reasoning"] == [
            {"model": "model-a", "text": "2+2"}
        ]
        # ... another model is not, and the session records the switch in a new header
        assert step("switch", url, sid, "model-b")["reasoning"] == []
        async with await open_sessions(url, manager=pm) as sessions:
            path = await sessions.path(sid)
        models = [i.body["model"] for i in path if i.kind == "header"]
        assert models == ["model-a", "model-b"]
