"""The local server of the model benchmarks: a provider's recorded answers over keep-alive HTTP/1.1.

Run as its own process (``python wire_server.py anthropic``), so its work stays off the
measured interpreter: it prints its port, then answers every POST with the plugin tests'
recorded JSON answer, or their recorded SSE stream (chunked) when the request asks to stream.

Not agentkit_core.testing's WireServer, which the plugin tests use: that one closes every
connection, keeps every request it received and serves from a thread of the test's own process
— right for asserting on the wire, wrong for timing a client, which here keeps one connection
open and shares no interpreter with the server.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass
from pathlib import Path

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"


@dataclass(frozen=True)
class Provider:
    """Where a provider's recordings are and how its wire asks for a stream."""

    recordings: str  # the plugin whose tests/recordings are served
    plain: str  # the JSON answer
    stream: str  # the SSE stream of an answer
    stream_marker: bytes  # in the request line (a URL) or the body: this request streams
    in_request_line: bool
    one_chunk_per_event: bool  # else the whole stream as one chunk
    content_type: bytes = b"application/json"


PROVIDERS = {
    "anthropic": Provider(
        "model-anthropic", "plain.json", "plain.sse", b'"stream":true', False, False
    ),
    "gemini": Provider(
        "model-gemini",
        "plain.json",
        "plain.sse",
        b"alt=sse",
        True,
        True,
        b"application/json; charset=UTF-8",
    ),
    "openai-responses": Provider(
        "model-openai", "responses_plain.json", "responses_plain.sse", b'"stream":true', False, True
    ),
}


def replies(provider: Provider) -> tuple[bytes, bytes]:
    """The whole HTTP responses, JSON and SSE, built once."""
    folder = PLUGINS / provider.recordings / "tests" / "recordings"
    body = (folder / provider.plain).read_bytes()
    plain = b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s" % (
        provider.content_type,
        len(body),
        body,
    )
    raw = (folder / provider.stream).read_bytes()
    events = [e + b"\n\n" for e in raw.split(b"\n\n") if e.strip()]
    pieces = events if provider.one_chunk_per_event else [b"".join(events)]
    sse = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces)
        + b"0\r\n\r\n"
    )
    return plain, sse


async def serve(provider: Provider) -> None:
    plain, sse = replies(provider)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = await reader.readexactly(length)
                asked = head.split(b"\r\n", 1)[0] if provider.in_request_line else body
                streams = provider.stream_marker in asked.replace(b" ", b"")
                writer.write(sse if streams else plain)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("provider", choices=sorted(PROVIDERS))
    asyncio.run(serve(PROVIDERS[parser.parse_args().provider]))
