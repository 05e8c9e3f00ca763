"""``SlidingWindowOptions``: the options this plugin declares (``settings=``).

Made when the options are first read, not when the plugin loads: a first run loads every
installed plugin, and making a ``TypedDict`` costs ~0.8 M instructions (its string hints
compiled one by one), more than loading a light entry module.
"""

from __future__ import annotations

from typing import TypedDict


class SlidingWindowOptions(TypedDict, total=False):
    """The options of ``sliding-window`` (``Kit(compactor_options=...)``), checked at lookup."""

    #: How many of the latest messages to keep (at least 1; default 10).
    keep_recent: int
