"""``DBOSOptions``, made when first read, not when the plugin loads."""

from __future__ import annotations

from typing import TypedDict


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
