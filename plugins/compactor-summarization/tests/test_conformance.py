from agentkit_compactor_summarization import SummarizationCompactor

from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core.testing import CompactorConformance
from agentkit_core.testing import TestModel
from agentkit_core.testing import make_test_ctx


async def short_summary(messages: list[Message], ctx: RunContext) -> str:
    return f"{len(messages)} messages"


class TestSummarizerConformance(CompactorConformance):
    def make_compactor(self, budget: int) -> SummarizationCompactor:
        return SummarizationCompactor(
            short_summary, max_tokens=max(1, budget), keep_recent=max(1, budget // 2)
        )


class TestModelSummaryConformance(CompactorConformance):
    """The summary written by a model through ctx.invoker (TestModel answers every request)."""

    def make_compactor(self, budget: int) -> SummarizationCompactor:
        return SummarizationCompactor(max_tokens=max(1, budget), keep_recent=max(1, budget // 2))

    def make_ctx(self, messages: list[Message]) -> RunContext:
        return make_test_ctx(TestModel())
