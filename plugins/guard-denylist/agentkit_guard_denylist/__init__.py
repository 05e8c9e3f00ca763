"""agentkit-guard-denylist: terms and regular expressions refused on input or output.

Registered as the guard ``"denylist"``:
``Kit(guards=["denylist"], guard_options={"denylist": {"path": "denylist.txt"}})``. The file
holds one entry a line: a term (matched in any case, as a whole word where it starts or ends
with a letter or digit), or ``re:`` and a regular expression; ``#`` starts a comment. The guard
(``_guard``) is imported on first use.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import TypedDict

from agentkit_core import hookimpl

if TYPE_CHECKING:
    from agentkit_core.plugin import GuardFactory
    from agentkit_core.plugin import Register

    from ._guard import Denylist

__all__ = ["GUARD", "Denylist", "DenylistOptions", "agentkit_register_guards", "make"]

#: The name the guard is registered under (``Kit(guards=["denylist"])``).
GUARD = "denylist"


def __getattr__(name: str) -> Any:
    if name != "Denylist":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ._guard import Denylist

    return Denylist


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


def make(**options: Any) -> Denylist:
    """The guard, built with ``options`` (see :class:`Denylist`)."""
    from ._guard import Denylist

    return Denylist(**options)


@hookimpl
def agentkit_register_guards(register: Register[GuardFactory]) -> None:
    """Offer the denylist guard as ``"denylist"``."""
    register(GUARD, make, settings=DenylistOptions)
