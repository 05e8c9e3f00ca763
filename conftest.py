"""What every test session of this checkout shares: core's tests and each plugin's."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

# Hypothesis fails an example that takes over 200 ms by default. The suite runs four xdist
# workers on two cores beside other tox environments, where a pause of the scheduler alone
# exceeds that (a JSON-decoding example once took 563 ms): such a deadline measures the
# machine, not the code. Speed is measured in benchmarks/, never asserted in a test.
settings.register_profile("agentkit", deadline=None)
settings.load_profile("agentkit")

DURATIONS = Path(__file__).parent / ".ci" / "test-durations.txt"


def file_seconds() -> dict[str, float]:
    """The slow test files' last measured seconds, by path from the checkout's root."""
    seconds: dict[str, float] = {}
    for line in DURATIONS.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            value, path = line.split(maxsplit=1)
            seconds[path] = float(value)
    return seconds


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest test files first: xdist's ``loadfile`` hands out files in this order.

    A long file handed out last keeps one worker busy while the others have nothing left
    (longest first is the classic cure). The sort is stable: each file's tests, and the files
    not listed, keep their order.
    """
    seconds = file_seconds()
    items.sort(key=lambda item: -seconds.get(item.nodeid.split("::", 1)[0], 0.0))
