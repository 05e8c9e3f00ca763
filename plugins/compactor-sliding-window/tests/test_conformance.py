from agentkit_compactor_sliding_window import SlidingWindowCompactor

from agentkit_core.testing import CompactorConformance
from agentkit_core.tokens import MESSAGE_OVERHEAD


class TestSlidingWindowConformance(CompactorConformance):
    def make_compactor(self, budget: int) -> SlidingWindowCompactor:
        # every message costs at least MESSAGE_OVERHEAD tokens: a window as wide as the budget
        return SlidingWindowCompactor(keep_recent=max(1, budget // MESSAGE_OVERHEAD))
