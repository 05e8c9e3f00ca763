"""A real OTLP/HTTP collector stand-in on 127.0.0.1 that records every trace export it receives."""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any


class Collector:
    """Decoded ``ExportTraceServiceRequest`` bodies received on ``/v1/traces``."""

    def __init__(self) -> None:
        self.requests: list[Any] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.received = threading.Event()
        self.url = ""

    def spans(self) -> list[tuple[dict[str, Any], Any]]:
        """Every span received, with its resource's attributes."""
        out = []
        for request in self.requests:
            for resource_spans in request.resource_spans:
                resource = {kv.key: _any(kv.value) for kv in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    out.extend((resource, span) for span in scope_spans.spans)
        return out


def _any(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_any(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


def attributes(span: Any) -> dict[str, Any]:
    return {kv.key: _any(kv.value) for kv in span.attributes}


def handler_for(got: Collector) -> type[BaseHTTPRequestHandler]:
    """A request handler that decodes each ``/v1/traces`` export into ``got``."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            got.requests.append(request)
            got.paths.append(self.path)
            got.headers.append(dict(self.headers.items()))
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
            got.received.set()

        def log_message(self, *args: Any) -> None:
            pass

    return Handler
