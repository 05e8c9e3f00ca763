"""The one DBOS of a process, and what the run workflow shares with the executor.

The executor (``_executor``) launches DBOS here and registers the agents it serves; the
workflow (``_workflow``) reads them, with the names of its events and topics and the context
variables of the execution in progress. Both import this module; neither imports the other for
it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from collections.abc import Iterable
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import StorageError
from agentkit_core.plugin import mask_url

if TYPE_CHECKING:
    from agentkit_core import Agent
    from agentkit_core import RunContext

    from ._liveness import Liveness

#: The workflow every agent run is (its name in the system database).
WORKFLOW = "agentkit.run"
#: The topic approvals are sent to a run on, and the event holding its calls waiting for them.
APPROVALS = "agentkit.approvals"
PENDING = "agentkit.pending"


def held_event(value: object) -> tuple[int | None, list[Any]]:
    """The suspension a PENDING event is of (its number in the run), and its calls.

    The event is ``{"suspension": N, "calls": [...]}``; a run suspended by an earlier version
    published the bare list (no number: None). None (no event) has no calls.
    """
    if isinstance(value, dict):
        return value.get("suspension"), list(value.get("calls") or [])
    return None, list(value or []) if isinstance(value, list) else []


def answers_for(message: object, suspension: int) -> Any:
    """The answers of ``message`` if it answers suspension ``suspension`` of the run, else None.

    ``approve()`` sends ``{"suspension": N, "answers": ...}``: answers for another suspension
    (a second approve() raced the first: the run has gone on since) are stale, and never
    answer a later call that reuses a call id. A message in another shape (sent around
    ``approve()``, or by an earlier version) is given to the gate as it is.
    """
    if isinstance(message, dict) and set(message) == {"suspension", "answers"}:
        return message["answers"] if message["suspension"] == suspension else None
    return message


#: How long a suspended run waits for approvals: the default of DBOSExecutor(approval_timeout=).
#: (The plugin's registered factory repeats it, so that loading the plugin imports no module.)
APPROVAL_TIMEOUT = 86_400.0

#: The id of the current execution of a workflow (a fresh one each time a run is started or
#: recovered): what tells a recorded marker of an earlier execution from this one's.
EXECUTION: contextvars.ContextVar[str] = contextvars.ContextVar("agentkit_dbos_execution")
#: The context of the run the workflow is running: a replayed step's usage and span go to it
#: (``replayed_step``), as the middlewares added them when the step ran.
RUN_CONTEXT: contextvars.ContextVar[RunContext | None] = contextvars.ContextVar(
    "agentkit_dbos_run_context", default=None
)


class RunNotFound(StorageError, LookupError):
    """No run ``.run_id`` in the DBOS database ``.database`` (its URL, password masked)."""

    def __init__(self, message: str, *, run_id: str, database: str) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.database = database

    def __str__(self) -> str:  # LookupError would repr() the message otherwise
        return str(self.args[0]) if self.args else ""

    @classmethod
    def of(cls, run_id: str, database: str) -> RunNotFound:
        """The error for ``run_id`` in ``database``, which it names masked."""
        shown = mask_url(database)
        return cls(
            f"no run {run_id!r} in {shown}; check the run id (agentkit submit printed it) and "
            "that this is the database it was submitted to",
            run_id=run_id,
            database=shown,
        )


def failure(exc: BaseException) -> str:
    """``exc`` on one line, for a message: a database error as its driver's reason.

    SQLAlchemy's text adds the statement and a link to its docs on lines of their own; the
    driver's error (``.orig``) says what went wrong.
    """
    import sqlalchemy as sa

    if isinstance(exc, sa.exc.DBAPIError) and exc.orig is not None:
        exc = exc.orig
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


class Runtime:
    """The one DBOS of this process: launched once, on one database, serving named agents.

    ``owner`` is the executor that registered agents or launched DBOS last (the one whose
    ``close`` stops it); ``approval_timeout`` is its setting, read by the workflow.
    """

    def __init__(self) -> None:
        self.database: str | None = None
        self.app = ""
        self.worker_id = ""
        self.agents: dict[str, Agent] = {}
        self.owner: object | None = None
        self.approval_timeout = APPROVAL_TIMEOUT
        self.liveness: Liveness | None = None

    def launch(
        self, owner: object, *, database: str, app: str, worker_id: str, queues: Iterable[str]
    ) -> None:
        """Start DBOS on ``database`` listening to ``queues``, unless it runs here already.

        The workflow module must be imported (registered with DBOS) before the first launch.
        """
        from dbos import DBOS

        if self.database is not None:
            if self.database != database:
                raise ConfigError(
                    f"DBOS already runs on {mask_url(self.database)} in this process; one "
                    f"process has one DBOS system database, so an executor on "
                    f"{mask_url(database)} cannot start here (close the other first)",
                    value=mask_url(database),
                    source="executor_options['database']",
                )
            return
        config: dict[str, Any] = {
            "name": app,
            "system_database_url": database,
            "executor_id": worker_id,
            "log_level": "WARNING",
            "notification_listener_polling_interval_sec": 0.05,
        }
        try:
            DBOS(config=config)  # type: ignore[arg-type]
            DBOS.listen_queues(list(queues))
            DBOS.launch()
        except Exception as exc:
            DBOS.destroy(destroy_registry=False)
            raise StorageError(
                f"cannot start DBOS on {mask_url(database)}: {failure(exc)}; check the URL in "
                "executor_options['database'] and that the server is up"
            ) from exc
        self.database, self.app, self.worker_id = database, app, worker_id
        self.owner = owner

    def watch(
        self, *, heartbeat: float, takeover_after: float, in_flight: Callable[[], bool]
    ) -> Liveness:
        """Beat for this serving worker and take over dead ones (once per process)."""
        if self.liveness is None:
            from dbos import DBOS

            from ._liveness import Liveness

            assert self.database is not None, "launch() first"
            liveness = Liveness(
                self.database,
                app=self.app,
                worker_id=self.worker_id,
                version=DBOS.application_version,
                heartbeat=heartbeat,
                takeover_after=takeover_after,
                # DBOS's recovery of other executors' runs: what its documented admin endpoint
                # POST /dbos-workflow-recovery calls (the installed dbos ships no admin
                # server). Each PENDING run of the dead executor goes back to ENQUEUED on its
                # own queue (a run started by executor.run, on none, goes to DBOS's internal
                # queue, which every DBOS process dequeues); the update is guarded by the dead
                # executor id, so a second recovery of a run already dequeued does nothing.
                recover=DBOS._recover_pending_workflows,
                in_flight=in_flight,
            )
            liveness.start()
            self.liveness = liveness
        return self.liveness

    def close(self) -> None:
        if self.database is None:
            return
        from dbos import DBOS

        DBOS.destroy(destroy_registry=False)
        liveness, self.liveness = self.liveness, None
        self.database = None
        self.owner = None
        self.approval_timeout = APPROVAL_TIMEOUT
        self.agents.clear()
        if liveness is not None:  # after DBOS stopped: no run can start past this check
            liveness.stop()


RUNTIME = Runtime()
