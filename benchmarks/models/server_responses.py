"""A keep-alive HTTP/1.1 server on 127.0.0.1 answering every POST with a recorded Responses API
answer: the JSON body, or the SSE stream when the request asks for ``"stream": true``.

Run as its own process (``python server_responses.py``) so that serving costs no time on the
measured client's core; it prints its port and serves until killed.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

RECORDINGS = Path(__file__).resolve().parents[2] / "plugins/model-openai/tests/recordings"
BODY = (RECORDINGS / "responses_plain.json").read_bytes()
EVENTS = [
    e + b"\n\n" for e in (RECORDINGS / "responses_plain.sse").read_bytes().split(b"\n\n") if e
]
JSON_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(BODY)
)
SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
)
SSE_BODY = b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in EVENTS) + b"0\r\n\r\n"


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            body = await reader.readexactly(length)
            if b'"stream":true' in body.replace(b" ", b""):
                writer.write(SSE_HEAD + SSE_BODY)
            else:
                writer.write(JSON_HEAD + BODY)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()


async def main() -> None:
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
