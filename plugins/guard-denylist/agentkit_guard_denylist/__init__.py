"""agentkit-guard-denylist: terms and regular expressions refused on input or output.

Registered as the guard ``"denylist"``:
``Kit(guards=["denylist"], guard_options={"denylist": {"path": "denylist.txt"}})``. The file
holds one entry a line: a term (matched in any case, as a whole word where it starts or ends
with a letter or digit), or ``re:`` and a regular expression; ``#`` starts a comment. The guard
(``_guard``) is imported on first use.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl
from agentkit_core.plugin import lazy_attributes

if TYPE_CHECKING:
    from agentkit_core.plugin import GuardFactory
    from agentkit_core.plugin import Register

    from ._guard import Denylist
    from ._options import DenylistOptions as DenylistOptions

__all__ = ["GUARD", "Denylist", "DenylistOptions", "agentkit_register_guards", "make"]

#: The name the guard is registered under (``Kit(guards=["denylist"])``).
GUARD = "denylist"


def make(**options: Any) -> Denylist:
    """The guard, built with ``options`` (see :class:`Denylist`)."""
    from ._guard import Denylist

    return Denylist(**options)


@hookimpl
def agentkit_register_guards(register: Register[GuardFactory]) -> None:
    """Offer the denylist guard as ``"denylist"``."""
    register(GUARD, make, settings=partial(__getattr__, "DenylistOptions"))


__getattr__ = lazy_attributes(__name__, {"Denylist": "._guard", "DenylistOptions": "._options"})
