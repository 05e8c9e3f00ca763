"""JSON values for property tests over wire data and stored records: one strategy to share."""

from __future__ import annotations

from hypothesis import strategies as st

from .._messages import JSONValue


def json_values(
    *,
    text: st.SearchStrategy[str] | None = None,
    keys: st.SearchStrategy[str] | None = None,
    integers: st.SearchStrategy[int] | None = None,
    floats: bool = True,
    max_size: int = 3,
    max_leaves: int = 8,
) -> st.SearchStrategy[JSONValue]:
    """Any JSON value: null, booleans, numbers and text, and lists and objects of them.

    Only what JSON carries: a float is finite (JSON has no NaN or infinity), and ``floats=False``
    leaves floats out for a format that keeps whole numbers only. ``text`` draws the strings
    (``st.text(max_size=8)`` by default) and, unless ``keys`` is given, the objects' keys;
    ``integers`` the whole numbers (unbounded by default: narrow it to what a store keeps).
    ``max_size`` bounds each list and object, ``max_leaves`` the whole value.
    """
    strings = st.text(max_size=8) if text is None else text
    scalars: list[st.SearchStrategy[JSONValue]] = [st.none(), st.booleans(), strings]
    scalars.append(st.integers() if integers is None else integers)
    if floats:
        scalars.append(st.floats(allow_nan=False, allow_infinity=False))
    names = strings if keys is None else keys
    return st.recursive(
        st.one_of(scalars),
        lambda inner: (
            st.lists(inner, max_size=max_size) | st.dictionaries(names, inner, max_size=max_size)
        ),
        max_leaves=max_leaves,
    )
