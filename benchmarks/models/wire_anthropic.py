"""A local Messages API server for the benchmarks: recorded answers over keep-alive HTTP/1.1.

Run as its own process (``python wire_anthropic.py``): it prints its port, then answers every
``POST /v1/messages`` with the plugin tests' recorded ``plain.json``, or ``plain.sse`` (chunked,
as one write) when the body asks for ``"stream": true``. A separate process keeps the server's
work off the measured interpreter.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

RECORDINGS = Path(__file__).resolve().parents[2] / "plugins/model-anthropic/tests/recordings"


def replies() -> tuple[bytes, bytes]:
    """The whole HTTP responses, JSON and SSE, built once."""
    body = (RECORDINGS / "plain.json").read_bytes()
    plain = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        len(body),
        body,
    )
    stream = (RECORDINGS / "plain.sse").read_bytes()
    sse = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"%x\r\n%s\r\n0\r\n\r\n" % (len(stream), stream)
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
                body = await reader.readexactly(length)
                writer.write(sse if b'"stream":true' in body.replace(b" ", b"") else plain)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve())
