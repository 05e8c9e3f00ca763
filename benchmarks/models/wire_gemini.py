"""A local Gemini API server for the benchmarks: recorded answers over keep-alive HTTP/1.1.

Run as its own process (``python wire_gemini.py``) so its work stays off the measured
interpreter: it prints its port, then answers every ``POST .../models/<m>:generateContent``
with the plugin tests' recorded ``plain.json`` and every ``...:streamGenerateContent?alt=sse``
with ``plain.sse`` (chunked, one chunk per event, as the API sends them).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

RECORDINGS = Path(__file__).resolve().parents[2] / "plugins/model-gemini/tests/recordings"


def replies() -> tuple[bytes, bytes]:
    """The whole HTTP responses, JSON and SSE, built once."""
    body = (RECORDINGS / "plain.json").read_bytes()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=UTF-8\r\n"
    plain = head + b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    events = [e + b"\r\n\r\n" for e in (RECORDINGS / "plain.sse").read_bytes().split(b"\n\n") if e]
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events if e.strip())
    sse = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        + chunks
        + b"0\r\n\r\n"
    )
    return plain, sse


async def serve() -> None:
    plain, sse = replies()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                writer.write(sse if b"alt=sse" in head.split(b"\r\n", 1)[0] else plain)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve())
