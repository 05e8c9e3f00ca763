from agentkit_guard_denylist import Denylist

from agentkit_core.plugin import Guard
from agentkit_core.testing import GuardConformance


class TestDenylist(GuardConformance):
    triggers = (("tell me about Project Nightjar", ("Nightjar",)), ("ssn 123-45-6789", ("123",)))

    def make_guard(self) -> Guard:
        return Denylist(terms=["project nightjar"], patterns=[r"\b\d{3}-\d{2}-\d{4}\b"])
