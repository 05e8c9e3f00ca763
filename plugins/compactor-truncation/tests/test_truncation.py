import json

import agentkit_compactor_truncation as plugin
import pytest
from agentkit_compactor_truncation import TruncationCompactor

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import ToolCall
from agentkit_core.plugin import estimate_tokens
from agentkit_core.testing import make_test_ctx


async def test_tool_arguments_count_towards_the_budget() -> None:
    # 80 messages whose weight is almost all in tool-call arguments
    msgs = [Message.system("sys")]
    for i in range(40):
        msgs.append(
            Message.assistant("", [ToolCall(f"c{i}", "write", json.dumps({"body": "x" * 4000}))])
        )
        msgs.append(Message.tool(f"c{i}", "ok"))
    assert estimate_tokens(msgs) > 40_000
    out = await TruncationCompactor(max_tokens=5_000).compact(msgs, make_test_ctx())
    assert estimate_tokens(out) <= 5_000
    assert out[0] is msgs[0] and out[-1] is msgs[-1]


async def test_drops_oldest_turns_first_and_keeps_the_newest_even_if_too_big() -> None:
    msgs = [Message.user("old " * 50), Message.user("new " * 50)]
    out = await TruncationCompactor(max_tokens=60).compact(msgs, make_test_ctx())
    assert out == [msgs[1]]
    out = await TruncationCompactor(max_tokens=5).compact(msgs, make_test_ctx())
    assert out == [msgs[1]]


async def test_a_caller_estimator_is_used_when_given_on_purpose() -> None:
    msgs = [Message.user("a"), Message.user("b"), Message.user("c")]
    out = await TruncationCompactor(max_tokens=2, estimate=lambda ms: len(list(ms))).compact(
        msgs, make_test_ctx()
    )
    assert [m.text for m in out] == ["b", "c"]


def test_bad_budget_and_registration() -> None:
    with pytest.raises(ConfigError, match="max_tokens must be at least 1"):
        TruncationCompactor(max_tokens=0)
    pm = PluginManager(entry_points=False, plugins=[plugin])
    assert pm.lookup("compactors", "truncation").value is TruncationCompactor
