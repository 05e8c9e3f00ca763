"""``DenylistOptions``, made when first read, not when the plugin loads."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TypedDict


class DenylistOptions(TypedDict, total=False):
    """The options of ``denylist`` (``guard_options={"denylist": {...}}``), checked at lookup.

    At least one of ``path``, ``terms`` and ``patterns`` gives entries.
    """

    #: A denylist file: one term or ``re:`` expression a line, ``#`` comments.
    path: str | os.PathLike[str] | None
    #: Terms refused in any case (as whole words where they start or end with a letter).
    terms: Sequence[str]
    #: Regular expressions refused (matched ignoring case).
    patterns: Sequence[str]
    #: Whether requests are checked (default true).
    input: bool
    #: Whether answers are checked (default true).
    output: bool
