"""Two small servers a crawl's egress goes through in the tests, each recording what it saw.

* :class:`ForwardProxy` — an HTTP forward proxy: a request in absolute form
  (``GET http://host:port/path HTTP/1.1``, what a client sends a proxy) is fetched from its
  host and answered; a request in origin form (``GET /path``) is fetched from ``upstream``
  (so it also stands in front of a site, to see the address a client connects from).
  ``CONNECT`` is refused: the tests' sites speak plain HTTP.
* :class:`ZyteApiStandIn` — Zyte API's ``POST /v1/extract`` as scrapy-zyte-api uses it:
  ``{"url", "httpResponseBody", "httpResponseHeaders", "browserHtml", …}`` in, the page
  fetched from the local site out (body base64, headers as ``[{name, value}]``).

Both record ``(client address, method, URL)`` per request.
"""

from __future__ import annotations

import base64
import http.client
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

#: Hop-by-hop headers a proxy does not pass on.
HOP_HEADERS = frozenset(
    {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer",
     "transfer-encoding", "upgrade", "content-length", "host"}
)  # fmt: skip


@dataclass
class Seen:
    """What a test server saw: ``(client address, method, URL)``, and auth headers."""

    requests: list[tuple[str, str, str]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)
    user_agents: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(
        self, client: str, method: str, url: str, authorization: str = "", agent: str = ""
    ) -> None:
        with self.lock:
            self.requests.append((client, method, url))
            self.user_agents.add(agent)
            if authorization:
                self.authorizations.append(authorization)

    @property
    def clients(self) -> set[str]:
        with self.lock:
            return {client for client, _, _ in self.requests}


def fetch(method: str, url: str, headers: dict[str, str], body: bytes | None) -> tuple[
    int, list[tuple[str, str]], bytes
]:  # fmt: skip
    """``(status, headers, body)`` of ``url`` fetched over plain HTTP, redirects not followed."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port or 80, timeout=30)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request(method, path or "/", body=body, headers=headers)
        answer = connection.getresponse()
        return answer.status, answer.getheaders(), answer.read()
    finally:
        connection.close()


class _ProxyHandler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._forward()

    def do_HEAD(self) -> None:
        self._forward()

    def do_POST(self) -> None:
        self._forward()

    def do_CONNECT(self) -> None:
        self.send_error(501, "CONNECT is not supported by this test proxy")

    def _forward(self) -> None:
        absolute = self.path.startswith(("http://", "https://"))
        url = self.path if absolute else self.server.upstream + self.path
        agent = self.headers.get("User-Agent") or ""
        self.server.seen.add(self.client_address[0], self.command, url, agent=agent)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
        status, answer_headers, payload = fetch(self.command, url, headers, body)
        self.send_response(status)
        for name, value in answer_headers:
            if name.lower() not in HOP_HEADERS:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


class _ZyteHandler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        query = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        url = str(query["url"])
        self.server.seen.add(
            self.client_address[0], "POST", url, self.headers.get("Authorization") or ""
        )
        status, headers, body = fetch("GET", url, {"User-Agent": "zyte-api-stand-in"}, None)
        answer: dict[str, object] = {"url": url, "statusCode": status}
        if query.get("browserHtml"):
            answer["browserHtml"] = body.decode("utf-8", "replace")
        if query.get("httpResponseBody"):
            answer["httpResponseBody"] = base64.b64encode(body).decode("ascii")
        if query.get("httpResponseHeaders") or query.get("httpResponseBody"):
            answer["httpResponseHeaders"] = [{"name": k, "value": v} for k, v in headers]
        payload = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler], upstream: str) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.seen = Seen()
        self.upstream = upstream.rstrip("/")


@contextmanager
def _serve(handler: type[BaseHTTPRequestHandler], upstream: str = "") -> Iterator[_Server]:
    server = _Server(handler, upstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def forward_proxy(upstream: str = "") -> Iterator[tuple[str, Seen]]:
    """A forward proxy on a free port: ``(its URL, what it saw)``."""
    with _serve(_ProxyHandler, upstream) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.seen


@contextmanager
def zyte_api_stand_in() -> Iterator[tuple[str, Seen]]:
    """Zyte API's extract endpoint on a free port: ``(its /v1/ URL, what it saw)``."""
    with _serve(_ZyteHandler) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/", server.seen
