"""Publishing leaves generic aliases alone on every Python the project declares (issue 35).

On Python 3.10 ``isinstance(Callable[[str], None], type)`` holds (the alias forwards
``__class__``), so publishing treated core's callable aliases (``Grounder``, ``Estimator``...)
as classes and failed setting their read-only ``__module__``: ``from agentkit_core import
Hooks`` then raised ImportError, in every pytest session, since the pytest plugin imports core.
These tests keep it from coming back on the Pythons the project declares.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core._public import publish


class Published:
    """A class to publish beside the aliases."""


def published() -> None:
    """A function to publish beside the aliases."""


def test_the_pytest_plugin_then_a_public_name_imports_in_a_fresh_interpreter() -> None:
    """The order a test session takes: the pytest11 entry point first, then a test's import."""
    code = (
        "import agentkit_core.testing._pytest_plugin\n"
        "import agentkit_core, agentkit_core.plugin, agentkit_core.testing\n"
        "from agentkit_core import Hooks\n"
        "from agentkit_core.plugin import Grounder, Estimator\n"
        "for module in (agentkit_core, agentkit_core.plugin, agentkit_core.testing):\n"
        "    for name in module.__all__:\n"
        "        getattr(module, name)\n"
        "print(Hooks.__module__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "agentkit_core"


ELEMENTS = st.sampled_from([int, str, bytes, float, Published, Any, None])


def aliases() -> st.SearchStrategy[Any]:
    """Generic aliases of the kinds core exports: ``Callable[...]`` and builtin generics."""
    args = st.lists(ELEMENTS, max_size=3)
    return st.one_of(
        st.builds(lambda a, r: Callable[a, r], args, ELEMENTS),
        st.builds(lambda a, r: Callable[a, Awaitable[r]], args, ELEMENTS),
        st.builds(lambda e: list[e], ELEMENTS),
        st.builds(lambda k, v: dict[k, v], ELEMENTS, ELEMENTS),
        st.builds(lambda es: tuple[tuple(es)], st.lists(ELEMENTS, min_size=1, max_size=3)),
    )


@settings(max_examples=60, deadline=None)
@given(alias=aliases())
def test_publishing_leaves_any_generic_alias_unchanged(alias: Any) -> None:
    """An alias is published under its name only; classes and functions beside it still move."""
    before = (repr(alias), getattr(alias, "__module__", None))
    namespace = {"Alias": alias, "Published": Published, "published": published}
    publish(list(namespace), namespace, "public_home")
    assert (repr(alias), getattr(alias, "__module__", None)) == before
    assert Published.__module__ == published.__module__ == "public_home"
