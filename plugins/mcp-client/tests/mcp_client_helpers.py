"""Helpers shared by the mcp-client tests (importable: conftest puts this directory on sys.path)."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

SERVERS = Path(__file__).resolve().parent / "servers"


def toy(name: str = "toy.py") -> str:
    """A command line running one of the python test servers with this interpreter."""
    return f"{sys.executable} {SERVERS / name}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")
