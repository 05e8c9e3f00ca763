from agentkit_guard_limits import MaxInput
from agentkit_guard_limits import MaxOutput

from agentkit_core.plugin import Guard
from agentkit_core.testing import GuardConformance


class TestMaxInput(GuardConformance):
    triggers = (("word " * 200, ()),)

    def make_guard(self) -> Guard:
        return MaxInput(max_tokens=50)


class TestMaxOutput(GuardConformance):
    def make_guard(self) -> Guard:
        return MaxOutput(max_chars=100)
