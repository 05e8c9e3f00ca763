"""agentkit-executor-dbos: durable agent runs on DBOS (SQLite or PostgreSQL).

Registers the run executor ``"dbos"``: ``Kit(executor="dbos", executor_options={"database":
"sqlite:///runs.sqlite", "queue": "agentkit"})``. Each run is a DBOS workflow whose model calls
and tool calls are steps, so a run interrupted at any point resumes after a restart from its
last completed step. Adds the commands ``agentkit worker``, ``submit``, ``result``,
``cancel`` and ``approve``. dbos is imported when a run starts, never at plugin load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any
from typing import TypedDict

from agentkit_core import hookimpl

if TYPE_CHECKING:
    import argparse

    from agentkit_core.plugin import ExecutorFactory
    from agentkit_core.plugin import Register

    from ._executor import DBOSExecutor
    from ._executor import RunHandle
    from ._runtime import RunNotFound

__all__ = [
    "DBOSExecutor",
    "DBOSOptions",
    "RunHandle",
    "RunNotFound",
    "agentkit_register_commands",
    "agentkit_register_executors",
    "dbos_executor",
]


def __getattr__(name: str) -> Any:
    if name not in ("DBOSExecutor", "RunHandle", "RunNotFound"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import _executor

    return getattr(_executor, name)


def dbos_executor(**options: Any) -> DBOSExecutor:
    """The DBOS executor, built with ``options`` (see :class:`DBOSExecutor`)."""
    from ._executor import DBOSExecutor

    return DBOSExecutor(**options)


class DBOSOptions(TypedDict, total=False):
    """The options of ``dbos`` (``Kit(executor_options={...})``), checked at lookup.

    See :class:`DBOSExecutor` for each in full.
    """

    #: The DBOS system database: ``sqlite:///PATH`` or ``postgresql://user@host:port/db``.
    database: str
    #: The queue runs are submitted to and served from (default ``"agentkit"``).
    queue: str
    #: Runs one worker process runs at once (None: no limit).
    concurrency: int | None
    #: Seconds one step may take (None: no limit).
    step_timeout: float | None
    #: This process's identity among the workers (default ``"local"``).
    worker_id: str
    #: The DBOS application name (default ``"agentkit"``).
    app: str
    #: Seconds a suspended run waits for approvals (default a day).
    approval_timeout: float
    #: Seconds between a serving worker's beats (default 2).
    heartbeat: float
    #: Seconds without a beat before a worker is taken for dead (default 30).
    takeover_after: float


def _factory(
    *,
    database: str = "sqlite:///agentkit-runs.sqlite",
    queue: str = "agentkit",
    concurrency: int | None = None,
    step_timeout: float | None = None,
    worker_id: str = "local",
    app: str = "agentkit",
    approval_timeout: float = 86_400.0,
    heartbeat: float = 2.0,
    takeover_after: float = 30.0,
) -> DBOSExecutor:
    """The registered factory: its keywords are the options the host checks.

    Declared here so that loading the plugin does not import the executor module.
    """
    return dbos_executor(**locals())


@hookimpl
def agentkit_register_executors(register: Register[ExecutorFactory]) -> None:
    """Offer the ``"dbos"`` executor."""
    register("dbos", _factory, settings=DBOSOptions)


@hookimpl
def agentkit_register_commands(cli: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``agentkit worker``, ``submit``, ``result``, ``cancel`` and ``approve``."""
    from ._cli import add_commands

    add_commands(cli)
