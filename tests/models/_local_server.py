"""What the fake provider servers share: a threaded HTTP server on 127.0.0.1, JSON replies, and
the answer of a scripted request (an error tuple, a stream of events, or a JSON body)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = ["JSONHandler", "LocalServer", "RawServer", "with_headers"]


def with_headers(
    answer: tuple[int, dict[str, Any]], **headers: str
) -> tuple[int, dict[str, Any], dict[str, str]]:
    """An error answer sent with ``headers`` (``retry_after="1"`` goes as ``retry-after``)."""
    return (*answer, {name.replace("_", "-"): value for name, value in headers.items()})


class JSONHandler(BaseHTTPRequestHandler):
    """A request handler that writes JSON and scripted answers."""

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def send_json(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():  # retry-after, x-should-retry, ...
            self.send_header(name, value)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_json(self) -> dict[str, Any]:
        length = int(self.headers.get("content-length", 0))
        body: dict[str, Any] = json.loads(self.rfile.read(length) or b"{}")
        return body

    def answer(
        self, answer: Any, body: dict[str, Any], stream: Callable[[Any], Iterator[bytes]]
    ) -> None:
        """Send a scripted ``answer``: an ``(status, body)`` or ``(status, body, headers)``
        error as it is, else the body as a server-sent event stream when the request asked for
        one, else as JSON."""
        if isinstance(answer, tuple):
            self.send_json(*answer)
            return
        if body.get("stream"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.end_headers()
            for chunk in stream(answer):
                self.wfile.write(chunk)
                self.wfile.flush()
            self.close_connection = True
            return
        self.send_json(200, answer)


class LocalServer:
    """A `ThreadingHTTPServer` on a free port of 127.0.0.1, run as a context manager."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], path: str = "") -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{path}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


class RawServer(LocalServer):
    """Answers every POST with one ``(status, content type, body)``, whatever was asked: a
    provider that sends what no provider should (the hostile-reply tests)."""

    def __init__(self, answer: tuple[int, str, bytes]) -> None:
        self.answer = answer
        server = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                status, kind, body = server.answer
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self.send_json(404, {"type": "error", "error": {"type": "not_found_error"}})

        super().__init__(Handler)
