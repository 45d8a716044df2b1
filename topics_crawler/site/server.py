"""The local site served over HTTP on 127.0.0.1 (port 0 by default), in a background thread.

    with SiteServer(default_site()) as site:
        fetch(site.url("/tag/distributed-training"))
        assert site.count("/tag/distributed-training") == 1

Every response is rendered from the (mutable) content at request time. Each
request is recorded as ``(method, path, status)`` in a thread-safe in-memory
log, and optionally appended to an access log file.
"""

from __future__ import annotations

import contextlib
import threading
import time
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit

from topics_crawler.site.faults import FaultInjector, FaultPlan, rate_limited
from topics_crawler.site.js_sections import JsSections, resolve_js
from topics_crawler.site.model import SiteContent
from topics_crawler.site.rate_limit import AddressBuckets, TokenBucket
from topics_crawler.site.refusals import Refusals
from topics_crawler.site.routes import Response, resolve, resolve_post

LogEntry = tuple[str, str, int]
#: Largest POST body read (the GraphQL endpoint's requests are a few kB).
_MAX_POST_BYTES = 1 << 20
#: How often the serving thread checks for shutdown (stop() waits up to this long).
_POLL_SECONDS = 0.05


class _Handler(BaseHTTPRequestHandler):
    server: _SiteHTTPServer
    protocol_version = "HTTP/1.1"
    #: Headers and body go out in two writes; without this, keep-alive clients wait
    #: for the delayed ACK (~40 ms a page).
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        self._respond(send_body=True)

    def do_HEAD(self) -> None:
        self._respond(send_body=False)

    def do_POST(self) -> None:
        site = self.server.site
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(max(length, 0), _MAX_POST_BYTES))
        if site.latency:
            time.sleep(site.latency)
        response = (
            site.refused(self.command, self.path, self.headers)
            or site.limited(self.client_address[0])
            or resolve_post(site.content, self.path, body)
        )
        site.record(self.command, self.path, response.status, self.client_address[0])
        self._send(response, send_body=True)

    def _respond(self, *, send_body: bool) -> None:
        site = self.server.site
        if site.latency:
            time.sleep(site.latency)
        limited = site.refused(self.command, self.path, self.headers) or site.limited(
            self.client_address[0]
        )
        if limited is not None:
            site.record(self.command, self.path, limited.status, self.client_address[0])
            self._send(limited, send_body)
            return
        response = site.js_response(self.path, self.headers.get("Cookie") or "")
        cookie = self.headers.get("Cookie") or ""
        response = response or resolve(site.content, self.path, site.content.is_member(cookie))
        fault = site.faults.fault(self.path, response) if site.faults else None
        if fault is not None:
            site.record(self.command, self.path, fault.status, self.client_address[0])
            fault.send(self, send_body)
            return
        site.record(self.command, self.path, response.status, self.client_address[0])
        self._send(response, send_body)

    def _send(self, response: Response, send_body: bool) -> None:
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        if send_body:
            # the client may give up on a large body (a download cancelled past its size cap)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(response.body)

    def log_message(self, format: str, *args: object) -> None:
        """Silence the default stderr log; :class:`SiteServer` keeps its own."""


class _SiteHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], site: SiteServer) -> None:
        super().__init__(address, _Handler)
        self.site = site


class SiteServer:
    """The local Medium-like site on ``127.0.0.1:<port>`` (a free port when 0)."""

    def __init__(
        self,
        content: SiteContent,
        *,
        latency: float = 0.0,
        access_log: Path | None = None,
        port: int = 0,
        faults: FaultPlan | None = None,
        js_sections: bool | JsSections = False,
        rate_limit: TokenBucket | AddressBuckets | None = None,
        refusals: Refusals | None = None,
    ) -> None:
        self.content = content
        #: Cloudflare's refusals in front of the site (topics_crawler/site/refusals.py); None: none.
        self.refusals = refusals
        #: What scripts add to pages (topics_crawler/site/js_sections.py); None: plain pages only.
        self.js_sections = JsSections() if js_sections is True else (js_sections or None)
        #: Injected faults (topics_crawler/site/faults.py): None serves every page as it is.
        self.faults = FaultInjector(faults) if faults is not None else None
        self.latency = latency
        #: A token bucket answering 429 + Retry-After past its rate (site/rate_limit.py).
        self.rate_limit = rate_limit
        self.access_log = access_log
        self.port = port
        self._lock = threading.Lock()
        self._requests: list[LogEntry] = []
        #: ``(monotonic time, client address, status)`` of each request, in arrival order.
        self.arrivals: list[tuple[float, str, int]] = []
        self._times: list[float] = []
        self._httpd: _SiteHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def limited(self, address: str = "") -> Response | None:
        """The 429 answer when the rate limiter has no token for this request (from the
        client ``address``), else None."""
        if self.rate_limit is None:
            return None
        retry_after = self.rate_limit.take(address)
        return rate_limited(str(retry_after)) if retry_after is not None else None

    def refused(self, method: str, path: str, headers: Message) -> Response | None:
        """Cloudflare's refusal of this request when :attr:`refusals` says so, else None."""
        return self.refusals.response(method, path, headers) if self.refusals else None

    def js_response(self, path: str, cookie: str) -> Response | None:
        """The JavaScript version of ``path`` when :attr:`js_sections` is on and has one."""
        if self.js_sections is None:
            return None
        return resolve_js(self.js_sections, self.content, path, cookie)

    # --- lifecycle ---------------------------------------------------------------

    def start(self) -> Self:
        """Bind and serve in a daemon thread; returns self."""
        if self._httpd is not None:
            raise RuntimeError("SiteServer already started")
        self._httpd = _SiteHTTPServer(("127.0.0.1", self.port), self)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": _POLL_SECONDS},
            name=f"site-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (idempotent)."""
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- addresses ---------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash)."""
        if self._httpd is None:
            raise RuntimeError("SiteServer is not running")
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        """Absolute URL of a site path (``/tag/llm``)."""
        return self.base_url + ("" if path.startswith("/") else "/") + path

    # --- access log --------------------------------------------------------------

    def record(self, method: str, path: str, status: int, address: str = "") -> None:
        """Log one request (called by the request handler threads); when and from which
        client address in :attr:`arrivals`."""
        with self._lock:
            self._requests.append((method, path, status))
            self.arrivals.append((time.monotonic(), address, status))
            self._times.append(time.monotonic())
            if self.access_log is not None:
                with self.access_log.open("a", encoding="utf-8") as log:
                    log.write(f"{method} {path} {status}\n")

    @property
    def requests(self) -> list[LogEntry]:
        """Copy of the access log: ``(method, path with query, status)`` in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def times(self) -> list[float]:
        """When each request of :attr:`requests` was answered (``time.monotonic()``)."""
        with self._lock:
            return list(self._times)

    def count(self, path: str, method: str | None = None) -> int:
        """Requests for ``path`` (query strings ignored), optionally of one ``method``."""
        return count_requests(self.requests, path, method)

    def clear_log(self) -> None:
        """Forget the requests logged so far (the file log is kept)."""
        with self._lock:
            self._requests.clear()
            self.arrivals.clear()
            self._times.clear()

    def view(self) -> SiteView:
        """This site as one test sees it: its log starts now (see :class:`SiteView`)."""
        return SiteView(self)

    def _logged(self) -> int:
        with self._lock:
            return len(self._requests)


class SiteView:
    """A running :class:`SiteServer` shared by many tests, as one of them sees it: the
    same addresses and content, and the requests logged since the view was made (or since
    its :meth:`clear_log`), so one test's counts never include another's."""

    def __init__(self, server: SiteServer) -> None:
        self.server = server
        self._start = server._logged()

    @property
    def content(self) -> SiteContent:
        return self.server.content

    @property
    def base_url(self) -> str:
        return self.server.base_url

    @property
    def port(self) -> int:
        return self.server.port

    def url(self, path: str) -> str:
        return self.server.url(path)

    @property
    def requests(self) -> list[LogEntry]:
        """The requests since this view began: ``(method, path with query, status)``."""
        return self.server.requests[self._start :]

    @property
    def times(self) -> list[float]:
        """When each request of :attr:`requests` was answered (``time.monotonic()``)."""
        return self.server.times[self._start :]

    def count(self, path: str, method: str | None = None) -> int:
        """Requests for ``path`` (query strings ignored) since this view began."""
        return count_requests(self.requests, path, method)

    def clear_log(self) -> None:
        """Start this view's log afresh (the server's own log is kept)."""
        self._start = self.server._logged()


def count_requests(requests: list[LogEntry], path: str, method: str | None = None) -> int:
    """How many of ``requests`` are for ``path`` (query strings ignored), optionally of one
    ``method``."""
    return sum(
        1 for m, p, _ in requests if urlsplit(p).path == path and (method is None or m == method)
    )
