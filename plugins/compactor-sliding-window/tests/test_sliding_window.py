import agentkit_compactor_sliding_window as plugin
import pytest
from agentkit_compactor_sliding_window import SlidingWindowCompactor

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import ToolCall
from agentkit_core.testing import make_test_ctx


def transcript() -> list[Message]:
    calls = [ToolCall("a", "search"), ToolCall("b", "read")]
    return [
        Message.system("sys"),
        Message.user("one"),
        Message.assistant("", calls),
        Message.tool("a", "A"),
        Message.tool("b", "B"),
        Message.user("two"),
        Message.assistant("done"),
    ]


async def test_keeps_system_and_the_most_recent_messages() -> None:
    out = await SlidingWindowCompactor(keep_recent=2).compact(transcript(), make_test_ctx())
    assert [m.text for m in out] == ["sys", "two", "done"]


async def test_never_cuts_parallel_calls_from_their_results() -> None:
    # a window of 4 would start inside the tool turn; the whole turn goes instead
    out = await SlidingWindowCompactor(keep_recent=4).compact(transcript(), make_test_ctx())
    assert [m.role for m in out] == ["system", "user", "assistant"]
    out = await SlidingWindowCompactor(keep_recent=5).compact(transcript(), make_test_ctx())
    assert [m.role for m in out] == ["system", "assistant", "tool", "tool", "user", "assistant"]


async def test_the_newest_turn_survives_a_window_smaller_than_it() -> None:
    msgs = transcript()[:5]
    out = await SlidingWindowCompactor(keep_recent=1).compact(msgs, make_test_ctx())
    # and the question it works on: the newest user message is kept whatever the window
    assert [m.text or m.role for m in out] == ["sys", "one", "assistant", "A", "B"]


async def test_the_question_survives_a_long_run_of_tool_turns() -> None:
    """A question followed by more tool turns than the window holds keeps the question."""
    turns = [
        m
        for n in range(6)
        for m in (Message.assistant("", [ToolCall(f"c{n}", "search")]), Message.tool(f"c{n}", "r"))
    ]
    msgs = [Message.system("sys"), Message.user("old"), Message.user("task"), *turns]
    out = await SlidingWindowCompactor(keep_recent=4).compact(msgs, make_test_ctx())
    assert [m.text for m in out[:2]] == ["sys", "task"]
    assert out[2:] == turns[-2:]  # the window less the question's one message: one tool turn


@pytest.mark.parametrize("head", [[], [Message.system("sys")]])
async def test_a_transcript_of_only_orphaned_results_comes_back_unchanged(
    head: list[Message],
) -> None:
    """No turn can be sent, so there is none to keep: never an empty transcript."""
    msgs = [*head, Message.tool("gone", "x"), Message.tool("a", "y"), Message.tool("gone", "z")]
    out = await SlidingWindowCompactor(keep_recent=1).compact(msgs, make_test_ctx())
    assert out == msgs
    msgs.insert(len(head), Message.user("hello"))  # one message to keep: the orphans go
    out = await SlidingWindowCompactor(keep_recent=1).compact(msgs, make_test_ctx())
    assert [m.role for m in out] == [*(m.role for m in head), "user"]


def test_bad_window_and_registration() -> None:
    with pytest.raises(ConfigError, match="keep_recent must be at least 1, got 0"):
        SlidingWindowCompactor(keep_recent=0)
    pm = PluginManager(entry_points=False, plugins=[plugin])
    assert pm.lookup("compactors", "sliding-window").value is SlidingWindowCompactor
