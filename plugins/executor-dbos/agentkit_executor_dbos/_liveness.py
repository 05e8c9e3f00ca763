"""Workers' liveness: serving workers beat into a table; the survivors take over a dead one.

Each serving worker writes its beat (database time, in ms) into ``agentkit_workers`` of the
DBOS system database every ``heartbeat`` seconds. A worker whose beat is older than
``takeover_after`` seconds is taken for dead: one survivor claims its row (an UPDATE guarded by
the beat it read, so exactly one claimant wins) and has DBOS recover the dead executor's pending
runs, which go back to their queue and are dequeued by whichever worker is free. A takeover cut
short by the claimant's own death leaves the row stale again, so another survivor claims it.

There is no fencing of the work: a worker stalled (not dead) past ``takeover_after`` is taken
over while it may still be in a call. DBOS refuses its records of the recovered runs from then on
(recovery revokes its ownership), so it goes no further in them, but a call it had in flight
completes. It notices at its next beat and logs it. Hence a conservative default.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

_log = logging.getLogger("agentkit.executor_dbos")

TABLE = "agentkit_workers"
_METADATA = sa.MetaData()
WORKERS = sa.Table(
    TABLE,
    _METADATA,
    sa.Column("app", sa.String(255), primary_key=True),
    sa.Column("worker_id", sa.String(255), primary_key=True),
    #: the DBOS application version: DBOS recovers only the runs of its own version
    sa.Column("version", sa.String(255), nullable=False),
    #: the last beat, in ms of the database's clock
    sa.Column("seen", sa.BigInteger, nullable=False),
    #: the survivor taking the worker over (None while it is alive)
    sa.Column("taken_by", sa.String(255), nullable=True),
)


def engine_for(database: str) -> sa.Engine:
    """A small engine on the system database, with DBOS's driver and SQLite lock wait."""
    url = sa.make_url(database)
    if url.get_backend_name() == "sqlite":
        engine = sa.create_engine(url, connect_args={"timeout": 30})
    else:
        url = url.set(drivername="postgresql+psycopg")
        engine = sa.create_engine(url, pool_size=2, max_overflow=0, pool_pre_ping=True)
    return engine


def _now_ms(engine: sa.Engine) -> sa.TextClause:
    """The database's clock in ms: one clock for every worker, whatever their hosts say."""
    if engine.dialect.name == "sqlite":
        return sa.text("SELECT CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)")
    return sa.text("SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)")


class Liveness:
    """One serving worker's beat, and its watch over the others of its application.

    ``recover(worker_ids)`` recovers the pending runs of those DBOS executor ids.
    ``in_flight()`` says whether this worker still holds unfinished runs, asked after DBOS
    stopped: a worker that stops holding none removes its row; one that holds some leaves it
    to go stale, so a survivor takes those runs over.
    """

    def __init__(
        self,
        database: str,
        *,
        app: str,
        worker_id: str,
        version: str,
        heartbeat: float,
        takeover_after: float,
        recover: Callable[[list[str]], object],
        in_flight: Callable[[], bool],
    ) -> None:
        self.app = app
        self.worker_id = worker_id
        self.version = version
        self.heartbeat = heartbeat
        self.takeover_ms = int(takeover_after * 1000)
        self.recover = recover
        self.in_flight = in_flight
        self.engine = engine_for(database)
        self._now = _now_ms(self.engine)
        #: the database time since which this worker's beats went through without a gap
        self._steady_since: int | None = None
        self._last_beat: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Create the table, write this worker's row, then beat and watch in a thread."""
        self._create_table()
        with self.engine.begin() as c:
            self._enter(c, self._clock(c))
        self._thread = threading.Thread(
            target=self._loop, name=f"agentkit-liveness-{self.worker_id}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop beating; remove this worker's row unless it still holds unfinished runs."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
        try:
            if not self.in_flight():
                with self.engine.begin() as c:
                    c.execute(sa.delete(WORKERS).where(*self._mine()))
                return
        except Exception:  # unsure what it holds: the row stays, as for runs in flight
            _log.warning("worker %r could not check its runs", self.worker_id, exc_info=True)
        finally:
            self.engine.dispose()
        _log.warning(
            "worker %r stopped holding runs: a worker still serving takes them over once its "
            "beat is %s s old (or restart it with the same worker_id)",
            self.worker_id,
            self.takeover_ms / 1000,
        )

    # ------------------------------------------------------------------ the thread

    def _loop(self) -> None:
        while not self._stop.wait(self.heartbeat):
            try:
                self._tick()
            except Exception:  # the database may be down a while: beat again next time
                _log.warning("worker %r could not beat", self.worker_id, exc_info=True)
                self._steady_since = None

    def _tick(self) -> None:
        """Beat once, then take over the workers found dead."""
        with self.engine.begin() as c:
            now = self._beat(c)
        # After a gap in our own beats (the database was away, or this process stalled) the
        # others' beats are stale too: wait one takeover_after of steady beats before judging.
        if self._steady_since is None or now - self._steady_since < self.takeover_ms:
            return
        with self.engine.begin() as c:
            dead = c.execute(
                sa.select(WORKERS.c.worker_id, WORKERS.c.seen).where(
                    WORKERS.c.app == self.app,
                    WORKERS.c.version == self.version,
                    WORKERS.c.worker_id != self.worker_id,
                    WORKERS.c.seen < now - self.takeover_ms,
                )
            ).all()
        for worker, seen in dead:
            self._take_over(worker, seen)

    def _take_over(self, worker: str, seen: int) -> None:
        with self.engine.begin() as c:
            claimed = self._clock(c)
            won = c.execute(
                sa.update(WORKERS)
                .where(WORKERS.c.app == self.app, WORKERS.c.worker_id == worker)
                .where(WORKERS.c.seen == seen)
                .values(seen=claimed, taken_by=self.worker_id)
            ).rowcount
        if won != 1:  # another survivor claimed it, or it beat again
            return
        _log.warning(
            "worker %r missed its beats for over %s s: worker %r recovers its runs",
            worker,
            self.takeover_ms / 1000,
            self.worker_id,
        )
        self.recover([worker])
        with self.engine.begin() as c:  # unless it came back meanwhile (then its row is new)
            c.execute(
                sa.delete(WORKERS).where(
                    WORKERS.c.app == self.app,
                    WORKERS.c.worker_id == worker,
                    WORKERS.c.seen == claimed,
                    WORKERS.c.taken_by == self.worker_id,
                )
            )

    # ------------------------------------------------------------------ statements

    def _mine(self) -> tuple[Any, ...]:
        return WORKERS.c.app == self.app, WORKERS.c.worker_id == self.worker_id

    def _clock(self, c: sa.Connection) -> int:
        return int(c.execute(self._now).scalar_one())

    def _beat(self, c: sa.Connection) -> int:
        now = self._clock(c)
        beat = c.execute(
            sa.update(WORKERS)
            .where(*self._mine(), WORKERS.c.taken_by.is_(None))
            .values(seen=now, version=self.version)
        )
        if beat.rowcount != 1:
            _log.warning(
                "worker %r was taken for dead (no beat for %s s): another worker recovered the "
                "runs it held, and a call it had in flight may have acted alongside; raise "
                "takeover_after above the longest stall of a worker",
                self.worker_id,
                self.takeover_ms / 1000,
            )
            self._enter(c, now)
        elif self._last_beat is None or now - self._last_beat >= self.takeover_ms:
            self._steady_since = now
        elif self._steady_since is None:
            self._steady_since = now
        self._last_beat = now
        return now

    def _enter(self, c: sa.Connection, now: int) -> None:
        c.execute(sa.delete(WORKERS).where(*self._mine()))
        c.execute(
            sa.insert(WORKERS).values(
                app=self.app, worker_id=self.worker_id, version=self.version, seen=now
            )
        )
        self._steady_since = self._last_beat = now

    def _create_table(self) -> None:
        try:
            _METADATA.create_all(self.engine, checkfirst=True)
        except sa.exc.DBAPIError:
            # workers starting together race to create it: fine when one of them did
            if not sa.inspect(self.engine).has_table(TABLE):
                raise
