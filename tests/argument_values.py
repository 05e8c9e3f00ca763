"""Values of every shape, for properties that hand them to an API as its arguments."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


def argument_values(*names: str) -> st.SearchStrategy[Any]:
    """None, bools, huge ints, floats (nan too), text, bytes, and lists, tuples and tables of
    them; ``names`` are strings the API may read as names (plugins, guards), tried as keys too.
    """
    atoms = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(),
        st.text(max_size=6),
        st.sampled_from([*names, "\u202e", ""]),
        st.binary(max_size=3),
    )
    keys = st.one_of(st.text(max_size=4), st.sampled_from([*names, ""]))
    return st.recursive(
        atoms,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.tuples(inner),
            st.dictionaries(keys, inner, max_size=3),
        ),
        max_leaves=6,
    )
