"""The kit rule: every field the kit sets is documented in docs/manual.md, and the manual
calls named there build the same configuration."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any

import agentkit_instructions_agentsmd
import agentkit_instructions_skills
from agentkit_instructions_agentsmd import AgentsMD
from agentkit_instructions_skills import Skills

from agentkit_core import Agent
from agentkit_core import AgentConfig
from agentkit_core import Folding
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import LiveInstructions
from agentkit_core import MemoryGrounder
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Recorder
from agentkit_core import Sessions
from agentkit_core import TextPart
from agentkit_core import ToolCall
from agentkit_core import ToolUnion
from agentkit_core import agent_tool
from agentkit_core import compaction
from agentkit_core import get_plugin_manager
from agentkit_core import open_memory
from agentkit_core import open_memory_block
from agentkit_core import tool
from agentkit_core.plugin import Middleware
from agentkit_core.plugin import SessionHeader
from agentkit_core.plugin import compose_instructions
from agentkit_core.plugin import get_compactor
from agentkit_core.plugin import get_executor
from agentkit_core.plugin import get_guardrail
from agentkit_core.plugin import load_policy
from agentkit_core.plugin import open_session_store
from agentkit_core.plugin import resolve_model
from agentkit_core.testing import ScriptedModel

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

MANUAL = Path(__file__).resolve().parent.parent / "docs" / "manual.md"


def documented_fields() -> set[str]:
    rows = re.findall(r"^\| `(\w+)` \|", MANUAL.read_text(encoding="utf-8"), re.M)
    return set(rows)


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return key


def user_guard(ctx: Any, message: Any) -> None:
    return None


def observe(verdict: Any) -> None:
    return None


class Stamp(Middleware):
    pass


STAMP = Stamp()


def full_options(root: Path) -> dict[str, Any]:
    (root / "AGENTS.md").write_text("Repository rules.")
    (root / "policy.toml").write_text(
        'default = "ask"\n[[rules]]\nid = "lookups"\nverdict = "allow"\ntool = "lookup"\n'
    )
    (root / "skills" / "triage").mkdir(parents=True)
    (root / "skills" / "triage" / "SKILL.md").write_text(
        "---\nname: triage\ndescription: Sort issues\n---\nSort them."
    )
    return {
        "name": "full",
        "model": "test",
        "instructions": "Be brief.",
        "parts": {
            "agentsmd": {"path": root, "root": root},
            "skills": {"dirs": [root / "skills"]},
        },
        "order": ["product", "agentsmd", "skills"],
        "instruction_budget": 2_000,
        "tools": [lookup],
        "agents": [Agent("helper", "test")],
        "compaction": {"budget": 50_000, "keep_recent": 20_000, "model": "test"},
        "compactor": "truncation",
        "compactor_options": {"max_tokens": 5_000},
        "guardrail": "web",
        "guardrail_options": {"egress_allow": ["example.com"], "redact_tool_output": True},
        "middlewares": [STAMP],
        "output_guard": user_guard,
        "max_turns": 7,
        "verdict_observer": observe,
        "policy": str(root / "policy.toml"),
        "description": "Answers in full.",
        "settings": {"temperature": 0.2, "stop": "END"},
        "max_parallel_tools": 3,
        "executor": "in-process",
        "executor_options": {"step_timeout": 30},
    }


def describe(config: AgentConfig) -> dict[str, Any]:
    """A comparable view: tools by (name, source), middlewares by type and settings."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(AgentConfig):
        value = getattr(config, f.name)
        if f.name == "tools":
            value = [(o.name, o.source) for o in value.origins()]
        elif f.name == "model":
            value = (type(value).__name__, value.name)
        elif f.name == "middlewares":
            value = [(type(m).__name__, _settings(m)) for m in value]
        elif f.name == "compaction":
            value = (type(value).__name__, value.budget, value.keep_recent, value.model.name)
        elif f.name == "executor":
            value = (type(value).__name__, vars(value))
        elif f.name in ("guardrail", "policy"):
            value = (type(value).__name__, repr(value))
        out[f.name] = value
    return out


def _settings(obj: Any) -> Any:
    state = getattr(obj, "__dict__", None)
    if state is None:
        return None
    return {k: type(v).__name__ for k, v in state.items()}


def test_every_field_the_kit_sets_is_in_the_manual(tmp_path: Path) -> None:
    config = Kit(**full_options(tmp_path)).config()
    default = AgentConfig()
    set_by_kit = {
        f.name
        for f in dataclasses.fields(AgentConfig)
        if f.name == "tools" or getattr(config, f.name) != getattr(default, f.name)
    }
    missing = set_by_kit - documented_fields()
    assert not missing, f"docs/manual.md does not name the manual call for {sorted(missing)}"
    assert documented_fields() <= {f.name for f in dataclasses.fields(AgentConfig)}


async def test_the_manual_path_is_the_same_path(tmp_path: Path) -> None:
    """Both paths on one explicit manager (a fresh one, not the process-wide default)."""
    pm = PluginManager()
    options = full_options(tmp_path)
    kit = Kit(manager=pm, **options)
    skills = Skills([tmp_path / "skills"])
    manual = AgentConfig(
        name="full",
        model=resolve_model("test", manager=pm),
        instructions=compose_instructions(
            [TextPart("Be brief."), AgentsMD(tmp_path, root=tmp_path), skills],
            order=["product", "agentsmd", "skills"],
            budget=2_000,
        ).text,
        tools=await ToolUnion.create(
            [
                ("tools", [lookup]),
                ("agent:#1 helper", [agent_tool(options["agents"][0])]),
                ("skills", skills.tools),
            ]
        ),
        hooks=Hooks.from_plugins(pm).merged(Hooks.of("user", output_guard=user_guard)),
        middlewares=(compaction(get_compactor("truncation", manager=pm, max_tokens=5_000)), STAMP),
        max_turns=7,
        description="Answers in full.",
        settings={"temperature": 0.2, "stop": ["END"]},
        max_parallel_tools=3,
        compaction=Folding(
            budget=50_000, keep_recent=20_000, model=resolve_model("test", manager=PM)
        ),
        manager=pm,
        guardrail=get_guardrail(
            "web", manager=pm, egress_allow=["example.com"], redact_tool_output=True
        ),
        verdict_observer=observe,
        policy=load_policy(tmp_path / "policy.toml", manager=pm),
        executor=get_executor("in-process", manager=pm, step_timeout=30),
    )
    assert describe(manual) == describe(kit.config())
    assert kit.config().manager is pm


def test_the_plugins_named_in_the_manual_are_the_registered_ones() -> None:
    pm = get_plugin_manager()
    assert pm.lookup("instruction_parts", "agentsmd").value is AgentsMD
    assert pm.lookup("instruction_parts", "skills").value is Skills
    assert agentkit_instructions_agentsmd.PART_ID == "agentsmd"
    assert agentkit_instructions_skills.PART_ID == "skills"


async def test_the_manual_path_records_the_same_session() -> None:
    """``recorder``: the session the kit opens, opened by hand, records the same items."""
    sessions = Sessions(await open_session_store("memory://", manager=PM))
    steps = [Message.assistant("", [ToolCall("c1", "lookup", '{"key": "k"}')]), "found"]
    pm = PluginManager(entry_points=False)  # no plugin hooks that would differ run to run
    kit = await Kit.open(
        model=ScriptedModel(steps),
        instructions="Be brief.",
        tools=[lookup],
        manager=pm,
        session=sessions,
    )
    await Agent.from_config(kit.config()).run("look k up")

    instructions = compose_instructions([TextPart("Be brief.")])

    def parts_for(text: str) -> Any:
        if text != instructions.text:
            return None
        return list(instructions.parts), list(instructions.omissions)

    header = SessionHeader(cwd=os.getcwd(), model="scripted", plugin_fingerprint=pm.fingerprint())
    recorder = await Recorder.start(sessions, header, parts=parts_for)
    manual = AgentConfig(
        model=ScriptedModel(steps),
        instructions=instructions.text,
        tools=await ToolUnion.create([("tools", [lookup])]),
        hooks=Hooks.from_plugins(pm),
        recorder=recorder,
    )
    await Agent.from_config(manual).run("look k up")

    by_kit = await sessions.path(kit.session_id)
    by_hand = await sessions.path(recorder.session_id)
    assert [_comparable(i.kind, i.body) for i in by_kit] == [
        _comparable(i.kind, i.body) for i in by_hand
    ]
    assert [i.kind for i in by_kit] == [
        "header",
        "user",
        "instructions",
        "response",
        "tool_result",
        "response",
    ]


def _comparable(kind: str, body: Any) -> tuple[str, Any]:
    """An item without what differs between two runs (run ids, the kit's own fingerprint)."""
    return kind, {k: v for k, v in body.items() if k not in ("run", "kit_fingerprint")}


async def test_the_manual_path_with_memory_is_the_same_path(tmp_path: Path) -> None:
    """``instructions``, ``tools`` and ``hooks`` with ``memory=``: a block, a live composition
    whose hook goes first, the block's tools under ``memory``; the same requests either way."""
    import agentkit_memory_files

    pm = PluginManager(entry_points=False, plugins=[agentkit_memory_files])
    # one store each, holding the same, so both runs save into what the other never touched
    url, hand_url = f"file://{tmp_path}/mem", f"file://{tmp_path}/hand"
    for each in (url, hand_url):
        async with await open_memory(each, manager=pm) as memory:
            await memory.save("user", "Tabs", "Indent with tabs.", base=0)
    steps: list[Any] = [
        Message.assistant(
            "",
            [ToolCall("c1", "memory_save", '{"scope": "project", "title": "k", "body": "v"}')],
        ),
        "done",
    ]
    kit_model, hand_model = ScriptedModel(steps), ScriptedModel(steps)
    kit = await Kit.open(
        model=kit_model,
        manager=pm,
        instructions="Be brief.",
        tools=[lookup],
        instruction_budget=3_000,
        memory={"store": url, "scopes": ["project"], "read_only": ["user"], "ground": 2},
    )
    block = await open_memory_block(hand_url, ["project"], read_only=["user"], manager=pm)
    live = LiveInstructions([TextPart("Be brief."), block], budget=3_000)
    manual = AgentConfig(
        model=hand_model,
        instructions=live.text,
        tools=await ToolUnion.create([("tools", [lookup]), ("memory", block.tools)]),
        hooks=Hooks.of("instructions", before_model_call=live.before_model_call).merged(
            Hooks.from_plugins(pm)
        ),
        manager=pm,
        memory=MemoryGrounder(block.memory, 2, block.scopes),
    )
    by_kit = kit.config()
    assert manual.instructions == by_kit.instructions
    assert manual.tools.origins() == by_kit.tools.origins()  # type: ignore[union-attr]
    for name in ("before_model_call", "transform", "before_tool_call"):
        assert [s for s, _ in getattr(manual.hooks, name)] == [
            s for s, _ in getattr(by_kit.hooks, name)
        ]
    await Agent.from_config(by_kit).run("save k, with tabs")
    await Agent.from_config(manual).run("save k, with tabs")
    assert "### Tabs" in kit_model.requests[0].messages[1].text  # grounded on the task
    for a, b in zip(kit_model.requests, hand_model.requests, strict=True):
        assert [m.text for m in a.messages] == [m.text.replace(hand_url, url) for m in b.messages]
        assert [t.name for t in a.tools] == [t.name for t in b.tools]
    await kit.aclose()
    await block.aclose()
