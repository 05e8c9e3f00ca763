from agentkit_compactor_truncation import TruncationCompactor

from agentkit_core.testing import CompactorConformance


class TestTruncationConformance(CompactorConformance):
    def make_compactor(self, budget: int) -> TruncationCompactor:
        return TruncationCompactor(max_tokens=max(1, budget))
