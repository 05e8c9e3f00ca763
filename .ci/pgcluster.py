"""A throwaway PostgreSQL cluster on 127.0.0.1: initdb into a temp dir, pg_ctl on a free port.

Shared by the PostgreSQL plugins' tests (their fixtures are in ``pgfixtures.py`` beside this)
and by the PostgreSQL benchmarks; nothing here is installed with a plugin. As root
the server programs run as the ``postgres`` system user (initdb refuses root), which
``.ci/setup.d/20-postgres.sh`` provides together with the server binaries.
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

SETUP_HINT = (
    "run .ci/setup (its .ci/setup.d/20-postgres.sh installs the PostgreSQL server package "
    "and the postgres system user)"
)


class ClusterError(RuntimeError):
    """The throwaway cluster could not be created, started or stopped."""


def find_bindir() -> Path:
    """Where initdb and pg_ctl are: ``pg_config --bindir``, else the newest Debian one."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        if out.returncode == 0:
            candidates.append(Path(out.stdout.strip()))
    debian = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")]
    debian.sort(key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0, reverse=True)
    for bindir in [*candidates, *debian]:
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
            return bindir
    raise ClusterError(
        "no PostgreSQL server binaries (initdb, pg_ctl) in `pg_config --bindir` or "
        f"/usr/lib/postgresql/*/bin; {SETUP_HINT}"
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


#: The one role that must log in with its password (scram-sha-256); every other role is
#: trusted. Tests give it a password (``pgfixtures.password_urls``) to see a password reach
#: the server: under ``trust`` any password, right or wrong, would do.
PASSWORD_ROLE = "agentkit_password"


class PgCluster:
    """One private cluster; ``start()`` returns its DSN, ``stop()`` removes every file of it.

    ``settings`` are extra server settings (``-c name=value``); fsync stays on, so the
    durability the tests and benchmark see is the real one. Roles are trusted, but for
    :data:`PASSWORD_ROLE`.
    """

    def __init__(self, *, database: str = "agentkit", settings: dict[str, str] | None = None):
        self.bindir = find_bindir()
        self.database = database
        self.settings = {"fsync": "on", "shared_buffers": "32MB", **(settings or {})}
        self.root: Path | None = None
        self.port = 0

    @property
    def dsn(self) -> str:
        """The libpq URL of the cluster's database, as the superuser, without a password."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{self.database}"

    def _run(self, *cmd: str) -> subprocess.CompletedProcess[str]:
        """Run a server program as the postgres user when we are root, else as ourselves."""
        argv = [str(self.bindir / cmd[0]), *cmd[1:]]
        if os.geteuid() == 0:
            if shutil.which("runuser"):
                argv = ["runuser", "-u", "postgres", "--", *argv]
            else:
                argv = ["su", "postgres", "-s", "/bin/sh", "-c", shlex.join(argv)]
        out = subprocess.run(argv, cwd=self.root, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            log = self.root / "server.log" if self.root else None
            tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
            raise ClusterError(
                f"{shlex.join(argv)} failed ({out.returncode}): {out.stderr.strip()}\n{tail}\n"
                f"If the postgres user or the binaries are missing, {SETUP_HINT}"
            )
        return out

    def start(self) -> str:
        """Create a fresh cluster (initdb), start it on a free port, make the database; the DSN."""
        self.root = Path(tempfile.mkdtemp(prefix="agentkit-pg-"))
        if os.geteuid() == 0:
            try:
                shutil.chown(self.root, user="postgres", group=None)
            except LookupError:
                raise ClusterError(f"there is no postgres system user; {SETUP_HINT}") from None
        try:
            # --no-sync only skips flushing the fresh catalog files; the server runs with fsync.
            data = str(self.root / "data")
            self._run(
                "initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"
            )
            hba = self.root / "data" / "pg_hba.conf"  # the first matching line decides
            nets = ("127.0.0.1/32", "::1/128")
            rules = [f"host all {PASSWORD_ROLE} {net} scram-sha-256" for net in nets]
            hba.write_text("\n".join(rules) + "\n" + hba.read_text())
            for attempt in range(3):
                self.port = free_port()
                try:
                    self._pg_ctl_start()
                    break
                except ClusterError:
                    if attempt == 2:  # a port taken between free_port() and bind is retried
                        raise
            host = ("-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres")
            self._run("createdb", *host, self.database)
        except BaseException:
            self.stop()
            raise
        return self.dsn

    def _pg_ctl_start(self) -> None:
        assert self.root is not None
        options = [f"-p {self.port}", f"-k {self.root}", "-c listen_addresses=127.0.0.1"]
        options += [f"-c {name}={value}" for name, value in self.settings.items()]
        self._run(
            "pg_ctl",
            *("-D", str(self.root / "data"), "-l", str(self.root / "server.log")),
            *("-w", "-t", "60", "-o", " ".join(options), "start"),
        )

    def restart(self, *, immediate: bool = True) -> None:
        """Stop the server, then start it again on the same port.

        ``immediate`` stops it the way a power cut would (no shutdown checkpoint); otherwise
        it is a clean, fast shutdown (clients are told, then disconnected).
        """
        assert self.root is not None
        mode = "immediate" if immediate else "fast"
        self._run("pg_ctl", "-D", str(self.root / "data"), "-w", "stop", "-m", mode)
        self._pg_ctl_start()

    def stop(self) -> None:
        """Stop the server (fast shutdown) and delete the cluster's directory."""
        if self.root is None:
            return
        try:
            if (self.root / "data" / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.root / "data"), "-w", "stop", "-m", "fast")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
