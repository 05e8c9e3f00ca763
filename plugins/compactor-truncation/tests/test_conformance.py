from agentkit_compactor_truncation import TruncationCompactor

from agentkit_core.testing import CompactorConformance


class TestTruncationConformance(CompactorConformance):
    def make_compactor(self, tight: bool) -> TruncationCompactor:
        return TruncationCompactor(max_tokens=60 if tight else 10**9)
