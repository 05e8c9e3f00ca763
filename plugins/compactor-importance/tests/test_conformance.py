import json
import re
from collections.abc import Sequence

from agentkit_compactor_importance import ImportanceFilteringCompactor

from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import Usage
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.testing import CompactorConformance
from agentkit_core.testing import make_test_ctx


async def keep_every_other(turns: list[list[Message]], ctx: RunContext) -> Sequence[int]:
    return range(0, len(turns), 2)


class KeepOddTurns:
    """A model double that answers any number of requests: the odd turn numbers it was shown."""

    name = "keep-odd"

    async def request(self, request: ModelRequest) -> ModelResponse:
        shown = re.findall(r"^Turn (\d+):$", request.messages[-1].text, re.M)
        return ModelResponse(
            Message.assistant(json.dumps([int(n) for n in shown if int(n) % 2])), Usage(1, 1, 1)
        )


class TestFiltererConformance(CompactorConformance):
    def make_compactor(self, budget: int) -> ImportanceFilteringCompactor:
        return ImportanceFilteringCompactor(keep_every_other, max_tokens=max(1, budget))


class TestModelFilterConformance(CompactorConformance):
    """The choice made by a model through ctx.invoker."""

    def make_compactor(self, budget: int) -> ImportanceFilteringCompactor:
        return ImportanceFilteringCompactor(max_tokens=max(1, budget))

    def make_ctx(self, messages: list[Message]) -> RunContext:
        return make_test_ctx(KeepOddTurns())  # type: ignore[arg-type]
