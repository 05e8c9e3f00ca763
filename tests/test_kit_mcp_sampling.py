"""A kit's MCP server samples the run's model, as the kit's policy file decides (policy-rules)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkit_core import Agent
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call

MODULES = Path(__file__).resolve().parent.parent / ".ci" / "cache" / "mcp" / "node_modules"
SAMPLE = tool_call("trigger-sampling-request", json.dumps({"prompt": "hi", "maxTokens": 20}))


@pytest.fixture(scope="module")
def everything() -> str:
    node, js = MODULES / ".bin" / "node", MODULES / ".bin" / "mcp-server-everything"
    if not js.exists():
        pytest.fail(f"mcp-server-everything is not in {MODULES}; install the peers: bash .ci/setup")
    return f"{node} {js.resolve()} stdio"


@pytest.mark.parametrize(("verdict", "said"), [("allow", "sampled"), ("deny", "no-sampling")])
async def test_the_policy_file_decides_a_servers_sampling(everything, tmp_path, verdict, said):
    policy = tmp_path / "policy.toml"
    policy.write_text(
        'default = "allow"\n\n[[rules]]\nid = "no-sampling"\n'
        f'verdict = "{verdict}"\ntool = "mcp_sampling"\nsource = "mcp:*"\n'
    )
    model = ScriptedModel([Message.assistant("", [SAMPLE]), "sampled", "sampled"])
    async with await Kit.open(model=model, policy=str(policy), mcp=[everything]) as kit:
        result = await Agent.from_config(kit.config()).run("go")
    text = next(m for m in result.transcript if m.role == "tool").text
    assert said in text, text
