r"""The error for a string a store cannot keep as text: one holding a lone surrogate.

SQLite and PostgreSQL keep text as UTF-8, and a lone surrogate (``'\ud800'``, or the
``'\udcc3'`` that ``os.fsdecode`` makes of a byte that is no UTF-8) has no UTF-8 form: the
driver's ``UnicodeEncodeError`` names neither the value nor the store. Both store helpers turn
it into this :class:`ConfigError`, whichever name or text it was (a run id, a session id, a
scope, a title), so a lookup and a write of it are refused alike, never merged with another.
"""

from __future__ import annotations

from .._errors import ConfigError


def unstorable(exc: UnicodeEncodeError, store: str) -> ConfigError:
    """The :class:`ConfigError` for ``exc``, raised binding a string to a statement of ``store``."""
    value = exc.object
    bad = value[exc.start : exc.end]
    return ConfigError(
        f"{store} cannot keep {value!r}: it holds {bad!r} ({exc.reason}), which is no text "
        "UTF-8 can hold; give the name or text as proper Unicode (decode bytes with "
        "errors='replace', or drop the surrogates)",
        value=value,
        source=store,
    )
