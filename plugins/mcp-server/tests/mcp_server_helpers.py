"""Helpers shared by the mcp-server tests (conftest puts this directory on sys.path)."""

from __future__ import annotations

import asyncio
import socket


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_listening(port: int, server: asyncio.Task[None]) -> None:
    for _ in range(200):
        assert not server.done(), "serve_tools ended before listening"
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
        else:
            writer.close()
            await writer.wait_closed()
            return
    raise AssertionError(f"serve_tools did not listen on 127.0.0.1:{port}")
