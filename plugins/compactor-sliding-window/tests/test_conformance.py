from agentkit_compactor_sliding_window import SlidingWindowCompactor

from agentkit_core.testing import CompactorConformance


class TestSlidingWindowConformance(CompactorConformance):
    def make_compactor(self, tight: bool) -> SlidingWindowCompactor:
        return SlidingWindowCompactor(keep_recent=4 if tight else 10_000)
