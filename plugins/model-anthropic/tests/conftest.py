"""The recorded-wire server the tests talk to (agentkit_core.testing's WireServer), with
Messages API answers written from Anthropic's published API reference under recordings/: JSON
bodies for ``messages.create``, SSE streams for ``stream: true``, error bodies as documented."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit_core.testing import WireServer

RECORDINGS = Path(__file__).parent / "recordings"


@pytest.fixture
def server() -> Iterator[WireServer]:
    wire = WireServer(RECORDINGS)
    yield wire
    wire.close()


@pytest.fixture(autouse=True)
def _no_ambient_anthropic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests name their server and key; a developer's own settings must not leak in."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
