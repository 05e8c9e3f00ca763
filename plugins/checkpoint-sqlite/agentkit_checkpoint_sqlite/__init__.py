"""The ``sqlite:///path`` checkpoint store: one SQLite file in WAL mode, safe for many processes.

The compare-and-set is the table's primary key ``(run_id, namespace, version)``: a put is one
``INSERT`` in its own transaction, and a taken version fails on the key, so two writers — two
tasks, two threads or two processes — can never overwrite each other.

A put runs on the caller's thread when the database is free (``writes=inline``, the default:
it never waits for a lock there — a busy database sends the put to the store's worker thread —
but the event loop does wait for the commit's fsync, a fraction of a millisecond on a local
disk). With ``?writes=thread`` every SQLite call runs on the worker thread, so the event loop
never waits on the disk, at the price of a thread hop per call. Reads always use the worker.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from urllib.parse import parse_qsl

from agentkit_core import ConfigError
from agentkit_core import hookimpl
from agentkit_core import mask_url

if TYPE_CHECKING:
    from ._store import SqliteCheckpointStore

__all__ = ["SqliteCheckpointStore", "parse_url"]

SYNCHRONOUS = ("off", "normal", "full", "extra")
WRITES = ("thread", "inline")
DEFAULTS = {"synchronous": "full", "busy_timeout": "30000", "writes": "inline"}
PREFIX = "sqlite:///"


def parse_url(url: str) -> tuple[Path, dict[str, str]]:
    """The file path and options of ``sqlite:///path?synchronous=normal&busy_timeout=5000``.

    Like SQLAlchemy: ``sqlite:///runs.db`` is relative to the working directory,
    ``sqlite:////var/lib/runs.db`` absolute.
    """
    shown = mask_url(url)  # how messages show the URL: never with a password
    if not url.startswith(PREFIX):
        raise ConfigError(
            f"{shown!r} is not a sqlite checkpoint URL; write sqlite:///relative/runs.db or "
            "sqlite:////absolute/runs.db",
            value=shown,
            source="sqlite checkpoint store",
        )
    path, _, query = url[len(PREFIX) :].partition("?")
    if not path or path == ":memory:":
        raise ConfigError(
            f"{shown!r} names no database file; a checkpoint store needs one (use memory:// for "
            "an in-process store)",
            value=shown,
            source="sqlite checkpoint store",
        )
    options = dict(DEFAULTS)
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key not in DEFAULTS:
            raise ConfigError(
                f"unknown option {key!r} in {shown!r}; the options are {', '.join(DEFAULTS)}",
                value=key,
                source="sqlite checkpoint store",
            )
        options[key] = value.lower()
    if options["synchronous"] not in SYNCHRONOUS:
        raise ConfigError(
            f"synchronous={options['synchronous']!r} in {shown!r} is not one of "
            f"{', '.join(SYNCHRONOUS)}",
            value=options["synchronous"],
            source="sqlite checkpoint store",
        )
    if options["writes"] not in WRITES:
        raise ConfigError(
            f"writes={options['writes']!r} in {shown!r} is not one of {', '.join(WRITES)}",
            value=options["writes"],
            source="sqlite checkpoint store",
        )
    if not options["busy_timeout"].isdigit():
        raise ConfigError(
            f"busy_timeout={options['busy_timeout']!r} in {shown!r} must be whole milliseconds",
            value=options["busy_timeout"],
            source="sqlite checkpoint store",
        )
    return Path(path), options


async def open_store(url: str) -> SqliteCheckpointStore:
    """The opener registered for ``sqlite``: parse the URL, open the file."""
    from ._store import SqliteCheckpointStore

    path, options = parse_url(url)
    return await SqliteCheckpointStore.open(
        path,
        synchronous=options["synchronous"],
        busy_timeout=int(options["busy_timeout"]),
        writes=options["writes"],
    )


@hookimpl
def agentkit_register_checkpoint_stores(register: Any) -> None:
    """Offer ``sqlite:///path``."""
    register("sqlite", open_store)


def __getattr__(name: str) -> Any:
    # sqlite3 and the worker thread only when a store is asked for.
    if name == "SqliteCheckpointStore":
        from ._store import SqliteCheckpointStore

        return SqliteCheckpointStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
