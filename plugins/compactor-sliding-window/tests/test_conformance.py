from agentkit_compactor_sliding_window import SlidingWindowCompactor

from agentkit_core import Message
from agentkit_core.plugin import estimate_message
from agentkit_core.testing import CompactorConformance

#: What the cheapest message costs: an empty one.
MESSAGE_OVERHEAD = estimate_message(Message.user(""))


class TestSlidingWindowConformance(CompactorConformance):
    def make_compactor(self, budget: int) -> SlidingWindowCompactor:
        # every message costs at least MESSAGE_OVERHEAD tokens: a window as wide as the budget
        return SlidingWindowCompactor(keep_recent=max(1, budget // MESSAGE_OVERHEAD))
