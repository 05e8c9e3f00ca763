"""A kit under a policy file: what the model is offered, what runs, what waits for a person and
who approved it, across processes through the session or the checkpoint, recorded verdict by
verdict; with the product's hooks folded in last, and a real MCP server's tools by their label."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentkit_core import Agent
from agentkit_core import Approval
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import open_sessions
from agentkit_core.plugin import Verdict
from agentkit_core.testing import ScriptedModel

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

APP = Path(__file__).resolve().parent / "policy_app.py"
_spec = importlib.util.spec_from_file_location("policy_app", APP)
assert _spec is not None and _spec.loader is not None
policy_app = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(policy_app)
batch, open_kit = policy_app.batch, policy_app.open_kit
ROOT = Path(__file__).resolve().parent.parent
TIME_SERVER = ROOT / ".ci" / "cache" / "mcp" / "time-venv" / "bin" / "mcp-server-time"


def step(directory: Path, name: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(APP), name, str(directory), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


async def verdicts(directory: Path, session: str) -> list[Verdict]:
    async with await open_sessions(
        f"sqlite:///{directory / 'sessions.db'}", manager=PM
    ) as sessions:
        path = await sessions.path(session)
    return [Verdict.from_body(i.body) for i in path if i.kind == "verdict"]


@pytest.fixture(autouse=True)
def fresh_app() -> None:
    policy_app.ran.clear()


async def test_the_model_is_offered_what_no_bare_deny_removes(tmp_path: Path) -> None:
    async with await open_kit(tmp_path, ["nothing to do"], session=False) as kit:
        agent = Agent.from_config(kit.config())
        await agent.run("look around")
        offered = [t.name for t in agent.model.requests[0].tools]  # type: ignore[attr-defined]
    assert offered == ["bash", "transfer"]
    assert [o.name for o in kit.tools()] == ["bash", "transfer", "wipe"]  # before the policy


async def test_a_batch_is_held_for_its_ask_and_released_in_this_process(tmp_path: Path) -> None:
    seen: list[Verdict] = []
    async with await open_kit(tmp_path, [batch(), "done"], verdict_observer=seen.append) as kit:
        agent = Agent.from_config(kit.config())
        held = await agent.run("tidy up and pay ann")
        assert held.status == "suspended" and [c.id for c in held.pending] == ["c2", "c4"]
        assert policy_app.ran == []  # nothing of the batch ran
        assert kit.policy is not None
        deferred = kit.policy.deferred(held.run_id)
        assert [(d.call.id, d.decision.rule) for d in deferred] == [
            ("c2", "transfers"),
            ("c4", "default"),
        ]
        answers = kit.policy.release(held.run_id, [Approval("c2", by="human:alice")])
        done = await agent.resume(held.run_id, answers)
        assert done.output == "done"
        session = kit.session_id
    # the allowed sibling and the approved call ran; the denied one and the unanswered one did not
    assert policy_app.ran == ["git status", "transfer 5"]
    results = {m.tool_call_id: m for m in done.transcript if m.role == "tool"}
    assert "people push" in results["c3"].text and results["c3"].is_error
    assert "no approval given" not in results["c4"].text and results["c4"].is_error
    recorded = await verdicts(tmp_path, session)
    policy = [(v.subject_id, v.verdict, v.rule) for v in recorded if v.namespace == "policy"]
    assert policy[:4] == [
        ("c1", "allow", "read-only-git"),
        ("c2", "ask", "transfers"),
        ("c3", "deny", "no-push"),
        ("c4", "ask", "default"),
    ]
    assert all(v.tool_source == "tools" for v in recorded if v.namespace == "policy")
    approvals = [(v.subject_id, v.verdict, v.by) for v in recorded if v.namespace == "approval"]
    assert ("c2", "allow", "human:alice") in approvals
    assert [v for v in recorded if v.namespace == "policy"] == [
        v for v in seen if v.namespace == "policy"
    ]


def test_an_approval_in_another_process_through_the_session(tmp_path: Path) -> None:
    first = step(tmp_path, "suspend")
    assert (first["status"], first["pending"], first["ran"]) == ("suspended", ["c2", "c4"], [])
    second = step(tmp_path, "approve-session", first["session"], "c2", "human:bob")
    assert second["held"] == ["c2", "c4"]
    assert (second["output"], second["ran"]) == ("done", ["git status", "transfer 5"])
    recorded = asyncio.run(verdicts(tmp_path, first["session"]))
    approvals = [(v.subject_id, v.verdict, v.by) for v in recorded if v.namespace == "approval"]
    assert approvals == [("c2", "allow", "human:bob"), ("c4", "deny", "")]
    assert next(v for v in recorded if v.subject_id == "c3").rule == "no-push"


def test_an_approval_in_another_process_through_the_checkpoint(tmp_path: Path) -> None:
    first = step(tmp_path, "suspend")
    second = step(tmp_path, "approve-checkpoint", first["run"], "c2", "human:carol")
    assert (second["output"], second["ran"]) == ("done", ["git status", "transfer 5"])


async def test_the_products_hooks_fold_in_last(tmp_path: Path) -> None:
    def product(ctx: Any, call: ToolCall) -> ToolDecision | None:
        if call.name == "bash" and "status" in call.arguments:
            return ToolDecision.deny("not today")  # over the policy's allow
        if call.name == "transfer":
            return ToolDecision.allow("we trust ann")  # cannot lift the policy's ask
        return None

    async with await open_kit(
        tmp_path, [batch(), "ok"], session=False, before_tool_call=product
    ) as kit:
        held = await Agent.from_config(kit.config()).run("go")
    assert [c.id for c in held.pending] == ["c2", "c4"]
    assert "policy-rules: rule 'transfers' asks" in (held.stop_reason or "")


async def test_an_mcp_servers_tools_are_decided_by_their_label(tmp_path: Path) -> None:
    if not TIME_SERVER.exists():  # a fresh checkout: install the peers the way CI does
        subprocess.run(["bash", str(ROOT / ".ci" / "setup.d" / "30-mcp.sh")], check=True)
    (tmp_path / "policy.toml").write_text(
        '[[rules]]\nid = "no-conversions"\nverdict = "deny"\ntool = "convert_*"\n'
        'source = "mcp:*"\n\n'
        '[[rules]]\nid = "clock"\nverdict = "allow"\ntool = "get_current_time"\n'
        'source = "mcp:#1 mcp-server-time"\n'
    )
    ask = Message.assistant("", [ToolCall("c1", "get_current_time", '{"timezone": "UTC"}')])
    async with await Kit.open(
        model=ScriptedModel([ask, "it is late"]),
        mcp=[f"{TIME_SERVER} --local-timezone UTC"],
        policy=str(tmp_path / "policy.toml"),
    ) as kit:
        agent = Agent.from_config(kit.config())
        done = await agent.run("what time is it?")
    assert done.status == "done"
    offered = [t.name for t in agent.model.requests[0].tools]  # type: ignore[attr-defined]
    assert "get_current_time" in offered and not any(n.startswith("convert_") for n in offered)
    (result,) = [m for m in done.transcript if m.role == "tool"]
    assert not result.is_error and "UTC" in result.text


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


def release_skill(root: Path, body: str = "Tag the release.") -> None:
    (root / "release").mkdir(parents=True, exist_ok=True)
    (root / "release" / "SKILL.md").write_text(
        f"---\nname: release\ndescription: tag a release\nallowed-tools: Bash(git tag:*)\n---\n"
        f"{body}\n",
        encoding="utf-8",
    )


async def open_skills_kit(directory: Path, steps: list[Any], **options: Any) -> Kit:
    (directory / "grants.toml").write_text(GRANTS, encoding="utf-8")
    return await Kit.open(
        model=ScriptedModel(steps),
        tools=[policy_app.bash],
        policy=str(directory / "grants.toml"),
        parts={"skills": {"dirs": [str(directory / "skills")], "trusted": True}},
        session=f"sqlite:///{directory / 'sessions.db'}",
        **options,
    )


def bash(call_id: str, command: str) -> Message:
    return Message.assistant("", [ToolCall(call_id, "bash", json.dumps({"command": command}))])


async def test_a_trusted_skills_grant_lasts_its_task_and_comes_back_only_unchanged(
    tmp_path: Path,
) -> None:
    release_skill(tmp_path / "skills")
    read = Message.assistant("", [ToolCall("r1", "read_skill", '{"name": "release"}')])
    async with await open_skills_kit(tmp_path, [read, bash("c1", "git tag v1"), "tagged"]) as kit:
        first = await Agent.from_config(kit.config()).run("tag v1")
        session = kit.session_id
    assert (first.status, policy_app.ran) == ("done", ["git tag v1"])  # the grant allowed it

    # a restart: the session's record grants again the unchanged skill, in its conversation
    tag = ToolCall("c3", "bash", '{"command": "git tag v3"}')
    steps = [bash("c2", "git tag v2"), "refused"]
    async with await open_skills_kit(tmp_path, steps, resume=session) as kit:
        (report,) = kit.regranted
        assert report.replayed and report.granted == ("Bash(git tag:*)",) and not report.error
        assert kit.policy is not None
        assert kit.policy.would(tag, scope=session).kind == "allow"
        assert kit.policy.would(tag, scope="another conversation").kind == "ask"
        second = await Agent.from_config(kit.config()).run("tag v2")  # a new task ends it
    assert policy_app.ran == ["git tag v1"]
    (refused,) = [m for m in second.transcript if m.role == "tool" and m.tool_call_id == "c2"]
    assert refused.is_error and "read_skill" in refused.text and "release" in refused.text
    recorded = await verdicts(tmp_path, session)
    assert [(v.hook, v.verdict, v.subject) for v in recorded if v.hook in ("grant", "revoke")] == [
        ("grant", "allow", "skill:release"),
        ("revoke", "revoke", "skill:release"),
    ]

    # an ended grant is not made again; and a changed skill is reported, not granted
    async with await open_skills_kit(tmp_path, [], resume=session) as kit:
        assert kit.regranted == []
    async with await open_skills_kit(tmp_path, [read, "read"], fork=session) as kit:
        await Agent.from_config(kit.config()).run("read it again")
        forked = kit.session_id
    release_skill(tmp_path / "skills", body="Tag and push the release.")
    seen: list[Verdict] = []
    async with await open_skills_kit(
        tmp_path, [], resume=forked, verdict_observer=seen.append
    ) as kit:
        (report,) = kit.regranted
        assert "changed" in report.error and report.granted == ()
        assert kit.policy is not None and kit.policy.would(tag, scope=forked).kind == "ask"
    assert [(v.hook, v.verdict, v.subject) for v in seen] == [("grant", "deny", "skill:release")]
