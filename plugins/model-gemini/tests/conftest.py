"""The recorded-wire server the tests talk to (agentkit_core.testing's WireServer), with Gemini
answers written from the API reference under recordings/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit_core.testing import WireServer

RECORDINGS = Path(__file__).parent / "recordings"


def recording(name: str) -> bytes:
    return (RECORDINGS / name).read_bytes()


@pytest.fixture
def server() -> Iterator[WireServer]:
    wire = WireServer(RECORDINGS)
    yield wire
    wire.close()
