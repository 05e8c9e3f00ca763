"""``RedactOptions``, made when first read, not when the plugin loads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict


class RedactOptions(TypedDict, total=False):
    """The options of ``redact`` (``guard_options={"redact": {...}}``), checked at lookup."""

    #: The detectors applied, in this order (default: all of ``agentkit_core.PII_DETECTORS``).
    kinds: Sequence[str] | None
    #: Whether requests are redacted (default true).
    input: bool
    #: Whether answers are redacted (default true).
    output: bool
    #: How many redacted texts are remembered (default 1024).
    cache: int
