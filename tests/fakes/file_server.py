"""A real HTTP file server on 127.0.0.1 for attachment downloads (in-process or from
a bot subprocess alike).

    server.add("/a.png", b"...", content_type="image/png")
    server.add("/slow.png", b"...", delay_s=5)            # headers arrive late
    server.add("/drip.png", b"x" * 100, drip_s=0.5)       # body trickles in
    server.add("/huge.png", size=11 * 2**20, lie_length=True)   # no Content-Length
    server.redirect("/r.png", "http://10.0.0.1/x.png")    # a 302 elsewhere
    url = server.url("/a.png")

Unknown paths answer 404. Each request path is recorded in `server.requests`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass(frozen=True)
class Route:
    body: bytes
    content_type: str = "image/png"
    status: int = 200
    delay_s: float = 0.0
    drip_s: float = 0.0
    send_length: bool = True
    location: str = ""
    """With a 3xx status: where the redirect points."""


class FileServer:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[str] = []
        routes, requests = self.routes, self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                requests.append(self.path)
                route = routes.get(self.path)
                if route is None:
                    self.send_error(404)
                    return
                if route.delay_s:
                    time.sleep(route.delay_s)
                self.send_response(route.status)
                self.send_header("Content-Type", route.content_type)
                if route.location:
                    self.send_header("Location", route.location)
                if route.send_length:
                    self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                try:
                    if route.drip_s:
                        for i in range(0, len(route.body), 16):
                            self.wfile.write(route.body[i : i + 16])
                            self.wfile.flush()
                            time.sleep(route.drip_s)
                    else:
                        self.wfile.write(route.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up, as it should

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def add(
        self,
        path: str,
        body: bytes = b"",
        *,
        size: int | None = None,
        content_type: str = "image/png",
        status: int = 200,
        delay_s: float = 0.0,
        drip_s: float = 0.0,
        send_length: bool = True,
    ) -> str:
        if size is not None:
            body = b"\0" * size
        self.routes[path] = Route(body, content_type, status, delay_s, drip_s, send_length)
        return self.url(path)

    def redirect(self, path: str, to: str, *, status: int = 302) -> str:
        self.routes[path] = Route(b"", "text/plain", status, location=to)
        return self.url(path)

    def start(self) -> FileServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def file_server() -> Iterator[FileServer]:
    server = FileServer().start()
    try:
        yield server
    finally:
        server.stop()
