from agentkit_compactor_summarization import SummarizationCompactor

from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core.testing import CompactorConformance
from agentkit_core.testing import TestModel
from agentkit_core.testing import make_test_ctx


async def short_summary(messages: list[Message], ctx: RunContext) -> str:
    return f"{len(messages)} messages"


class TestSummarizerConformance(CompactorConformance):
    def make_compactor(self, tight: bool) -> SummarizationCompactor:
        if tight:
            return SummarizationCompactor(short_summary, max_tokens=60, keep_recent=30)
        return SummarizationCompactor(short_summary, max_tokens=10**9)


class TestModelSummaryConformance(CompactorConformance):
    """The summary written by a model through ctx.invoker (TestModel answers every request)."""

    def make_compactor(self, tight: bool) -> SummarizationCompactor:
        return SummarizationCompactor(max_tokens=60 if tight else 10**9, keep_recent=30)

    def make_ctx(self, messages: list[Message]) -> RunContext:
        return make_test_ctx(TestModel())
