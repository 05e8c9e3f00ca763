"""agentkit-executor-dbos: durable agent runs on DBOS (SQLite or PostgreSQL).

Registers the run executor ``"dbos"``: ``Kit(executor="dbos", executor_options={"database":
"sqlite:///runs.sqlite", "queue": "agentkit"})``. Each run is a DBOS workflow whose model calls
and tool calls are steps, so a run interrupted at any point resumes after a restart from its
last completed step. Adds the commands ``agentkit worker``, ``submit``, ``result``,
``cancel`` and ``approve``. dbos is imported when a run starts, never at plugin load.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl
from agentkit_core.plugin import lazy_attributes

if TYPE_CHECKING:
    import argparse

    from agentkit_core.plugin import ExecutorFactory
    from agentkit_core.plugin import Register

    from ._executor import DBOSExecutor
    from ._executor import RunHandle
    from ._options import DBOSOptions as DBOSOptions
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


__getattr__ = lazy_attributes(
    __name__,
    {
        "DBOSExecutor": "._executor",
        "RunHandle": "._executor",
        "RunNotFound": "._executor",
        "DBOSOptions": "._options",
    },
)


def dbos_executor(**options: Any) -> DBOSExecutor:
    """The DBOS executor, built with ``options`` (see :class:`DBOSExecutor`)."""
    from ._executor import DBOSExecutor

    return DBOSExecutor(**options)


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
    register("dbos", _factory, settings=partial(__getattr__, "DBOSOptions"))


@hookimpl
def agentkit_register_commands(cli: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``agentkit worker``, ``submit``, ``result``, ``cancel`` and ``approve``."""
    from ._cli import add_commands

    add_commands(cli)
