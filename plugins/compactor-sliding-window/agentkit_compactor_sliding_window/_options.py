"""``SlidingWindowOptions``, made when first read, not when the plugin loads."""

from __future__ import annotations

from typing import TypedDict


class SlidingWindowOptions(TypedDict, total=False):
    """The options of ``sliding-window`` (``Kit(compactor_options=...)``), checked at lookup."""

    #: How many of the latest messages to keep (at least 1; default 10).
    keep_recent: int
