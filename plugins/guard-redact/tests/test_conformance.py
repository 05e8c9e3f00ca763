from agentkit_guard_redact import RedactGuard

from agentkit_core.plugin import Guard
from agentkit_core.testing import GuardConformance


class TestRedactGuard(GuardConformance):
    triggers = (
        ("write to jane.doe@example.org", ("jane.doe@example.org",)),
        ("card 4111 1111 1111 1111 please", ("4111 1111 1111 1111",)),
        ("IBAN DE89 3704 0044 0532 0130 00", ("DE89 3704 0044 0532 0130 00",)),
        ("key sk-proj-abcdefghijklmnopqrstuvwx", ("sk-proj-abcdefghijklmnopqrstuvwx",)),
        ("call +44 20 7946 0958", ("+44 20 7946 0958",)),
    )

    def make_guard(self) -> Guard:
        return RedactGuard()
