"""One function for a store plugin's entry module: its opener, its hook and its lazy class.

Every store plugin needs the same three things, and all of them must leave the store module
unimported until a store is opened (``agentkit plugins list`` imports every entry module): an
``open_store(url)`` that imports the store and opens it, the ``agentkit_register_*_stores``
hook that registers that opener under its URL schemes, and a module ``__getattr__`` that gives
the store class on first use.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from collections.abc import Sequence
from typing import NamedTuple

from .._urls import url_scheme
from ..hookspecs import Register
from ..hookspecs import hookimpl

#: The seams keyed by URL scheme: ``agentkit_register_<seam>_stores``.
SEAMS = ("checkpoint", "session", "memory", "mcp_token")


class StorePlugin(NamedTuple):
    """What :func:`store_plugin` returns, to bind in the entry module in this order.

    ``open_store`` is the opener: ``open_store(url)`` imports the store module, then returns
    what the target returns (a store, or an awaitable of one). ``hook`` is the
    ``agentkit_register_<seam>_stores`` implementation registering ``open_store`` under each
    scheme. ``module_getattr`` is the module ``__getattr__`` that imports the store class
    (the target's first name) when it is asked for.
    """

    open_store: Callable[[str], object]
    hook: Callable[[Register[Callable[[str], object]]], None]
    module_getattr: Callable[[str], object]


def store_plugin(
    module: str,
    seam: str,
    *,
    schemes: str | Sequence[str],
    opener: str | Callable[[str], object],
) -> StorePlugin:
    """A store plugin's opener, registration hook and module ``__getattr__``, in one call.

    In the plugin's entry module::

        open_store, agentkit_register_session_stores, __getattr__ = store_plugin(
            __name__, "session", schemes="sqlite", opener="._store:SqliteSessionStore.open"
        )

    ``module`` is the entry module's ``__name__``; ``seam`` is ``checkpoint``, ``session``,
    ``memory`` or ``mcp_token`` (bind the hook to ``agentkit_register_<seam>_stores``).
    ``schemes`` are the URL schemes the store answers, lower-case as ``open_*_store`` looks
    them up. ``opener`` is ``"module:Class.method"`` (the module relative to ``module``'s
    package when it starts with a dot), imported on the first open, so the entry module stays
    light; or the opener itself, for a store defined in the entry module. A bad value raises
    here, when the plugin loads.
    """
    if seam not in SEAMS:
        raise ValueError(
            f"store_plugin(): seam {seam!r} is not one of {', '.join(SEAMS)}; a store plugin "
            "registers through agentkit_register_<seam>_stores"
        )
    listed = _schemes(schemes)
    if isinstance(opener, str):
        open_store, module_getattr = _lazy_opener(module, opener)
    elif callable(opener):
        open_store, module_getattr = opener, _no_attribute(module)
    else:
        raise TypeError(
            f"store_plugin(): opener must be 'module:Class.method' or a callable taking the URL, "
            f"got {opener!r}"
        )

    @hookimpl
    def hook(register: Register[Callable[[str], object]]) -> None:
        for scheme in listed:
            register(scheme, open_store)

    hook.__module__ = module
    hook.__name__ = hook.__qualname__ = f"agentkit_register_{seam}_stores"
    hook.__doc__ = f"Offer the {seam} store for {', '.join(f'{s}://' for s in listed)}."
    return StorePlugin(open_store, hook, module_getattr)


def _schemes(schemes: str | Sequence[str]) -> tuple[str, ...]:
    """``schemes`` checked: each one ``url_scheme`` reads back unchanged, none twice."""
    listed = (schemes,) if isinstance(schemes, str) else tuple(schemes)
    if not listed:
        raise ValueError("store_plugin(): no schemes given; name at least one, like 'sqlite'")
    for scheme in listed:
        if not isinstance(scheme, str) or not scheme or url_scheme(f"{scheme}:") != scheme:
            raise ValueError(
                f"store_plugin(): {scheme!r} is not a URL scheme a store URL can start with: "
                "write it lower-case, a letter then letters, digits, '+', '-' or '.', two "
                "characters at least (like 'sqlite' for sqlite:///path)"
            )
        if listed.count(scheme) > 1:
            raise ValueError(f"store_plugin(): scheme {scheme!r} is given twice; name it once")
    return listed


def _lazy_opener(
    module: str, target: str
) -> tuple[Callable[[str], object], Callable[[str], object]]:
    """The opener and module ``__getattr__`` for ``"module:Class.method"``, both importing late."""
    where, colon, qualname = target.partition(":")
    path = qualname.split(".")
    if not colon or not all(name.isidentifier() for name in where.lstrip(".").split(".") + path):
        raise ValueError(
            f"store_plugin(): opener {target!r} is not 'module:Class.method'; write it like "
            "'._store:SqliteSessionStore.open' (the module relative to the plugin's package)"
        )

    def imported() -> object:
        anchor = getattr(sys.modules.get(module), "__package__", None) or module
        return importlib.import_module(where, anchor if where.startswith(".") else None)

    def open_store(url: str) -> object:
        value = imported()
        for part in path:
            try:
                value = getattr(value, part)
            except AttributeError:
                raise ImportError(
                    f"store opener {target!r} of {module}: {value!r} has no {part!r}; fix the "
                    "opener given to store_plugin()"
                ) from None
        if not callable(value):
            raise ImportError(
                f"store opener {target!r} of {module} is {value!r}, which cannot be called; fix "
                "the opener given to store_plugin()"
            )
        return value(url)

    open_store.__module__, open_store.__qualname__ = module, "open_store"
    open_store.__doc__ = f"Open the store for ``url`` with ``{target}``, imported on first use."

    def module_getattr(name: str) -> object:
        if name != path[0]:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(imported(), name)
        setattr(sys.modules[module], name, value)  # the next use is a plain attribute read
        return value

    return open_store, module_getattr


def _no_attribute(module: str) -> Callable[[str], object]:
    def module_getattr(name: str) -> object:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return module_getattr
