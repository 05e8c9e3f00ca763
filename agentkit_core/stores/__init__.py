"""What a store plugin builds on: its registration, and the SQLite and PostgreSQL helpers.

- :func:`store_plugin` (and the :class:`StorePlugin` it returns): a store plugin's opener,
  ``agentkit_register_<seam>_stores`` hook and lazy store class, in one call.
- :class:`SqliteFile`, :func:`parse_sqlite_url` and ``SQLITE_DEFAULTS`` (the options of a
  ``sqlite:///path?...`` URL and their defaults): one SQLite file in WAL mode, with a worker
  thread, as the SQLite stores use it.
- :class:`PostgresPool` and ``POSTGRES_OPTIONS`` (the options a ``postgresql://`` store URL
  takes for itself; the rest go to libpq): a connection pool opened on first use, its table
  and its errors, as the PostgreSQL stores use it.

Importing this package stays light: the SQLite and PostgreSQL helpers (and asyncio, which they
use) are imported the first time one of their names is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes
from ._plugin import StorePlugin
from ._plugin import store_plugin

if TYPE_CHECKING:
    from ._postgres import POSTGRES_OPTIONS as POSTGRES_OPTIONS
    from ._postgres import PostgresPool as PostgresPool
    from ._sqlite import SQLITE_DEFAULTS as SQLITE_DEFAULTS
    from ._sqlite import SqliteFile as SqliteFile
    from ._sqlite import parse_sqlite_url as parse_sqlite_url

__all__ = [
    "POSTGRES_OPTIONS",
    "SQLITE_DEFAULTS",
    "PostgresPool",
    "SqliteFile",
    "StorePlugin",
    "parse_sqlite_url",
    "store_plugin",
]

if not TYPE_CHECKING:  # for type checkers the names are the imports above, and no others
    __getattr__ = lazy_attributes(
        __name__,
        {
            "POSTGRES_OPTIONS": "._postgres",
            "PostgresPool": "._postgres",
            "SQLITE_DEFAULTS": "._sqlite",
            "SqliteFile": "._sqlite",
            "parse_sqlite_url": "._sqlite",
        },
    )
