"""Two stores for MCP servers' OAuth grants, keyed by (server URL, user).

``file:///dir`` keeps one JSON file per server and user, readable by its owner only (0600, in
a 0700 directory), replaced atomically (written beside, then renamed over), so a crash leaves
the old grant or the new one. ``sqlite:///tokens.db`` keeps one row per key in one file
(created 0600). Both are registered on ``agentkit_register_mcp_token_stores``; a grant is any
JSON object (see :class:`agentkit_core.hookspecs.MCPTokenStore`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Awaitable
from pathlib import Path
from typing import Any
from urllib.parse import unquote
from urllib.parse import urlsplit

from agentkit_core import ConfigError
from agentkit_core import StorageError
from agentkit_core.plugin import mask_url
from agentkit_core.stores import SqliteFile
from agentkit_core.stores import parse_sqlite_url


def _key_name(server: str, user: str) -> str:
    """A file name for the key: a hash, so any server URL and user (``/``, ``..``) is safe."""
    digest = hashlib.sha256(json.dumps([server, user]).encode("utf-8", "surrogatepass"))
    return f"{digest.hexdigest()[:40]}.json"


class FileTokenStore:
    """Grants as files ``<dir>/<sha256 of (server, user)>.json``, each ``{server, user, grant}``."""

    def __init__(self, root: Path, url: str) -> None:
        self.root = root
        self.url = url
        self._closed = False

    @classmethod
    def from_url(cls, url: str) -> FileTokenStore:
        """The store of ``file:///absolute/dir`` or ``file:relative/dir``."""
        parts = urlsplit(url)
        problem = ""
        if parts.netloc not in ("", "localhost"):
            problem = f"it names the host {parts.netloc!r}; a token directory is local"
        elif parts.query or parts.fragment:
            problem = "the file token store takes no options"
        elif not unquote(parts.path):
            problem = "it names no directory"
        root = Path(unquote(parts.path))
        if not problem and root.exists() and not root.is_dir():
            problem = f"{str(root)!r} is not a directory"
        if problem:
            raise ConfigError(
                f"MCP token store URL {mask_url(url)!r}: {problem}; write it like "
                "'file:///var/lib/agent/mcp-tokens' (absolute) or 'file:.agentkit/mcp-tokens' "
                "(relative to the working directory)",
                value=mask_url(url),
                source="file MCP token store",
            )
        return cls(root, url)

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(f"the MCP token store {self.url!r} is closed; open a new one")

    async def get(self, server: str, user: str) -> dict[str, Any] | None:
        """The grant in the key's file, or None when there is none."""
        self._check_open()
        path = self.root / _key_name(server, user)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"cannot read the MCP token file {str(path)!r}: {exc}") from exc
        try:
            record = json.loads(text)
            grant = record["grant"]
            if not isinstance(grant, dict):
                raise TypeError(f"the grant is {type(grant).__name__}")
        except (ValueError, KeyError, TypeError) as exc:
            raise StorageError(
                f"the MCP token file {str(path)!r} does not hold a grant ({exc!r}); delete it "
                "and log in again: agentkit mcp login URL"
            ) from exc
        return grant

    async def put(self, server: str, user: str, grant: dict[str, Any]) -> None:
        """Write the key's file beside it (0600), then rename it over the old one."""
        self._check_open()
        text = json.dumps({"server": server, "user": user, "grant": grant}, ensure_ascii=True)
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=self.root, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:  # mkstemp makes it 0600
                    f.write(text)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(temp, self.root / _key_name(server, user))
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
        except OSError as exc:
            raise StorageError(
                f"cannot write an MCP token file in {str(self.root)!r}: {exc}; check that the "
                "directory is writable"
            ) from exc

    async def delete(self, server: str, user: str) -> bool:
        """Remove the key's file; whether there was one."""
        self._check_open()
        try:
            (self.root / _key_name(server, user)).unlink()
        except FileNotFoundError:
            return False
        return True

    async def aclose(self) -> None:
        """Later calls raise StorageError; the files stay."""
        self._closed = True

    def __repr__(self) -> str:
        return f"<FileTokenStore {self.url}>"


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS mcp_tokens ("
    " server TEXT NOT NULL, user TEXT NOT NULL, grant_json TEXT NOT NULL,"
    " PRIMARY KEY (server, user))",
)


class SqliteTokenStore:
    """Grants as rows ``(server, user, grant_json)`` of one SQLite file (a ``SqliteFile``)."""

    def __init__(self, db: SqliteFile, url: str) -> None:
        self.db = db
        self.url = url

    @classmethod
    async def open(cls, url: str) -> SqliteTokenStore:
        """Open (creating, 0600, when missing) the database a ``sqlite:///`` URL names."""
        path, _ = parse_sqlite_url(url, what="MCP token")
        with contextlib.suppress(FileExistsError, FileNotFoundError):
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        return cls(await SqliteFile.open_url(url, schema=_SCHEMA, what="MCP token"), url)

    async def get(self, server: str, user: str) -> dict[str, Any] | None:
        """The key's grant, or None."""
        query = "SELECT grant_json FROM mcp_tokens WHERE server = ? AND user = ?"
        row = await self.db.read(
            lambda conn: conn.execute(query, (server, user)).fetchone(), point=True
        )
        if row is None:
            return None
        try:
            grant = json.loads(row[0])
        except ValueError as exc:
            raise StorageError(
                f"{self.db.name} holds a grant for {server!r} that is not JSON ({exc}); "
                "log in again: agentkit mcp login URL"
            ) from exc
        if not isinstance(grant, dict):  # as the file store: never read as 'no grant'
            raise StorageError(
                f"{self.db.name} holds a grant for {server!r} that is not a JSON object (a "
                f"{type(grant).__name__}); log in again: agentkit mcp login URL"
            )
        return grant

    async def put(self, server: str, user: str, grant: dict[str, Any]) -> None:
        """Insert or replace the key's row (one statement)."""
        query = "INSERT OR REPLACE INTO mcp_tokens (server, user, grant_json) VALUES (?, ?, ?)"
        row = (server, user, json.dumps(grant))
        await self.db.write(lambda conn: conn.execute(query, row))

    async def delete(self, server: str, user: str) -> bool:
        """Delete the key's row; whether there was one."""
        query = "DELETE FROM mcp_tokens WHERE server = ? AND user = ?"
        return await self.db.write(lambda conn: conn.execute(query, (server, user)).rowcount == 1)

    async def aclose(self) -> None:
        """Close the database; closing twice is harmless."""
        await self.db.aclose()

    def __repr__(self) -> str:
        return f"<SqliteTokenStore {self.url}>"


def open_url(url: str) -> FileTokenStore | Awaitable[SqliteTokenStore]:
    """The store of ``file:///dir`` (one 0600 JSON file per server and user) or ``sqlite:///db``.

    What this plugin registers for its two schemes, and all a source or login built without a
    plugin manager can open: another scheme's store needs the manager its plugin is on.
    """
    scheme = url.partition(":")[0].lower()
    if scheme == "file":
        return FileTokenStore.from_url(url)
    if scheme == "sqlite":
        return SqliteTokenStore.open(url)
    raise ConfigError(
        f"MCP token store {mask_url(url)!r}: without a plugin manager only this plugin's own "
        "file:// and sqlite:// stores open; pass manager= (a Kit passes its own) to open one "
        "another plugin registers, or give the store object itself as token_store",
        value=mask_url(url),
        source="mcp token store",
    )
