"""Fault injection for the local site: deterministic, per path and attempt, from a seed.

    plan = FaultPlan.parse("rate=0.2,seed=7,kinds=500+429+hang,hang=3")
    with SiteServer(default_site(), faults=plan) as site: ...
    python -m topics_crawler.site --faults "rate=0.2,seed=7,deleted=ae81651e4034"
    python -m topics_crawler.site --faults "rate=0.3,kinds=429,under=/_host/miro.medium.com/"

Whether the n-th request for a path is faulted, and how, is a hash of
``(seed, path, n)``: the same crawl meets the same faults every run, and a
retry (the next attempt) rolls again, so it can succeed. No path is faulted
more than ``max_faults`` times, and only paths under ``under`` (default ``/``: all).
Besides these transient faults a plan has fixed ones: ``deleted`` story ids always
answer 404 (on every path of the story), and ``permanent`` paths always answer 500.
``robots.txt`` and the sign-in pages a fault redirects to are never faulted.

Kinds (``KINDS``): ``500`` ``502`` ``503`` (an error page), ``429`` (with
``Retry-After: <seconds>``), ``429-date`` (``Retry-After: <HTTP-date>``),
``hang`` (no answer for ``hang`` seconds, then the connection closes),
``reset`` (the connection is reset, nothing sent), ``truncate`` (half the body
under the full ``Content-Length``), ``broken-state`` (a 200 whose Apollo state
JSON is cut in half), ``challenge`` (a Cloudflare-like "Just a moment…" page,
403 or 503) and ``signin`` (a 302 to ``/m/signin?redirect=…``).
"""

from __future__ import annotations

import hashlib
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler
from typing import Any, Self
from urllib.parse import quote, urlsplit

from topics_crawler.site.refusals import challenge_page
from topics_crawler.site.routes import HTML, Response, not_found

KINDS = (
    "500",
    "502",
    "503",
    "429",
    "429-date",
    "hang",
    "reset",
    "truncate",
    "broken-state",
    "challenge",
    "signin",
)
#: Paths never faulted: crawl rules and the sign-in flow faults send clients to.
_NEVER_FAULTED = ("/robots.txt",)
_SIGNIN_PREFIX = "/m/"
_STATE_MARKER = b"window.__APOLLO_STATE__"
_SCRIPT_END = b"</script>"
#: Status written to the access log when no response was sent (hang, reset).
NO_RESPONSE = 0


@dataclass(frozen=True)
class FaultPlan:
    """Which faults the site injects (see the module docstring)."""

    rate: float = 0.0
    seed: int = 0
    kinds: tuple[str, ...] = KINDS
    deleted: frozenset[str] = frozenset()
    permanent: frozenset[str] = frozenset()
    hang: float = 3.0
    retry_after: int = 1
    max_faults: int = 3
    under: str = "/"
    """Transient faults only on paths starting with this (``/_host/miro.medium.com/``)."""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.kinds) - set(KINDS))
        if unknown:
            raise ValueError(f"unknown fault kinds {unknown}; known: {', '.join(KINDS)}")
        if not self.kinds:
            raise ValueError("kinds must name at least one fault kind")
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"rate must be between 0 and 1, not {self.rate}")
        if self.hang < 0 or self.retry_after < 0 or self.max_faults < 0:
            raise ValueError("hang, retry_after and max_faults must not be negative")

    @classmethod
    def parse(cls, spec: str) -> Self:
        """A plan from ``name=value`` pairs separated by commas; lists use ``+``."""
        values: dict[str, Any] = {}
        for pair in filter(None, (p.strip() for p in spec.split(","))):
            name, sep, value = pair.partition("=")
            if not sep:
                raise ValueError(f"expected name=value, got {pair!r}")
            values[name.strip()] = _plan_value(name.strip(), value.strip())
        return cls(**values)

    def fault_for(self, path: str, attempt: int) -> str | None:
        """The transient fault of the ``attempt``-th request (1-based) for ``path``, if any."""
        if attempt > self.max_faults or self.rate <= 0 or not path.startswith(self.under):
            return None
        digest = hashlib.blake2b(f"{self.seed}:{path}:{attempt}".encode(), digest_size=8).digest()
        roll = int.from_bytes(digest[:4]) / 2**32
        if roll >= self.rate:
            return None
        return self.kinds[int.from_bytes(digest[4:]) % len(self.kinds)]

    def is_deleted(self, path: str) -> bool:
        """True for every path of a deleted story (its own path, ``/p/<id>``, aliases)."""
        last = path.rstrip("/").rsplit("/", 1)[-1]
        return any(last == story_id or last.endswith("-" + story_id) for story_id in self.deleted)


_NUMBERS: dict[str, Callable[[str], float]] = {
    "rate": float,
    "seed": int,
    "hang": float,
    "retry_after": int,
    "max_faults": int,
}


def _plan_value(name: str, value: str) -> Any:
    """The typed value of one ``name=value`` pair of a plan spec."""
    if name in _NUMBERS:
        return _NUMBERS[name](value)
    if name == "under":
        return value
    listed = [item for item in value.split("+") if item]
    if name == "kinds":
        return tuple(listed)
    if name in ("deleted", "permanent"):
        return frozenset(listed)
    raise ValueError(f"unknown fault setting {name!r}")


@dataclass(frozen=True)
class Fault:
    """One injected fault: what goes on the wire instead of the page."""

    kind: str
    response: Response | None  # None: no answer at all (hang, reset)
    hang: float = 0.0

    @property
    def status(self) -> int:
        """Status for the access log (``NO_RESPONSE`` when nothing is sent)."""
        return self.response.status if self.response is not None else NO_RESPONSE

    def send(self, handler: BaseHTTPRequestHandler, send_body: bool) -> None:
        """Answer (or not) ``handler``'s request the way this fault does."""
        if self.kind == "hang":
            time.sleep(self.hang)
            handler.close_connection = True
        elif self.kind == "reset":
            reset_connection(handler)
        elif self.response is not None:
            _write(handler, self.response, send_body, truncate=self.kind == "truncate")


@dataclass
class FaultInjector:
    """A plan applied to live requests: counts attempts per path, remembers what it injected."""

    plan: FaultPlan
    injected: list[tuple[str, int, str]] = field(default_factory=list)
    _attempts: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def fault(self, raw_path: str, response: Response) -> Fault | None:
        """The fault for this request (counted as the path's next attempt), or None.

        ``response`` is what the site would send; the caller sends it when this is None.
        """
        path = urlsplit(raw_path).path or "/"
        if path.startswith(_SIGNIN_PREFIX + "signin"):
            return Fault("signin-page", signin_page())
        if path.endswith(_NEVER_FAULTED) or path.startswith(_SIGNIN_PREFIX):
            return None
        kind = self._next_fault(path, response)
        if kind is None:
            return None
        if kind in ("hang", "reset"):
            return Fault(kind, None, hang=self.plan.hang)
        return Fault(kind, self._replacement(kind, path, response))

    def counts(self) -> Counter[str]:
        """How many times each kind was injected (``deleted`` and ``permanent`` included)."""
        with self._lock:
            return Counter(kind for _, _, kind in self.injected)

    def _next_fault(self, path: str, response: Response) -> str | None:
        with self._lock:
            self._attempts[path] += 1
            attempt = self._attempts[path]
            if self.plan.is_deleted(path):
                fault: str | None = "deleted"
            elif path in self.plan.permanent:
                fault = "permanent"
            else:
                fault = self.plan.fault_for(path, attempt)
            if fault is not None and changes_something(fault, response):
                self.injected.append((path, attempt, fault))
                return fault
            return None

    def _replacement(self, kind: str, path: str, response: Response) -> Response:
        if kind == "deleted":
            return not_found(path)
        if kind in ("500", "502", "503", "permanent"):
            return error_page(500 if kind == "permanent" else int(kind))
        if kind == "429":
            return rate_limited(str(self.plan.retry_after))
        if kind == "429-date":
            return rate_limited(formatdate(time.time() + self.plan.retry_after, usegmt=True))
        if kind == "challenge":
            return challenge_page(path, 403 if len(path) % 2 else 503)
        if kind == "signin":
            return signin_redirect(path)
        if kind == "broken-state":
            return broken_state(response)
        return response  # truncate: the page itself, cut on the wire


def changes_something(kind: str, response: Response) -> bool:
    """False for a fault that would leave ``response`` as it is (no state JSON, no body)."""
    if kind == "broken-state":
        return _STATE_MARKER in response.body
    if kind == "truncate":
        return len(response.body) > 1
    return True


def error_page(status: int) -> Response:
    body = f"<!DOCTYPE html><html><body><h1>{status}</h1><p>Something went wrong.</p></body></html>"
    return Response(status, body.encode(), {"Content-Type": HTML})


def rate_limited(retry_after: str) -> Response:
    response = error_page(429)
    response.headers["Retry-After"] = retry_after
    return response


def signin_redirect(path: str) -> Response:
    location = "/m/signin?operation=login&redirect=" + quote("https://medium.com" + path, safe="")
    return Response(302, b"", {"Location": location, "Content-Type": HTML})


def signin_page() -> Response:
    body = (
        "<!DOCTYPE html><html><head><title>Sign in – Medium</title></head>"
        "<body><h2>Welcome back.</h2><button>Sign in with email</button></body></html>"
    )
    return Response(200, body.encode(), {"Content-Type": HTML})


def broken_state(response: Response) -> Response:
    """``response`` with its Apollo state JSON cut in half (unchanged when it has none)."""
    start = response.body.find(_STATE_MARKER)
    if start < 0:
        return response
    end = response.body.find(_SCRIPT_END, start)
    if end < 0:
        return response
    middle = start + len(_STATE_MARKER) + (end - start - len(_STATE_MARKER)) // 2
    return replace(response, body=response.body[:middle] + response.body[end:])


def reset_connection(handler: BaseHTTPRequestHandler) -> None:
    """Abort the connection: linger 0 makes close() send a TCP RST instead of a FIN."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()
    handler.close_connection = True


def _write(
    handler: BaseHTTPRequestHandler, response: Response, send_body: bool, *, truncate: bool = False
) -> None:
    """Send ``response``; with ``truncate``, half the body under the full Content-Length."""
    handler.send_response(response.status)
    for name, value in response.headers.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(response.body)))
    handler.end_headers()
    if send_body:
        handler.wfile.write(response.body[: len(response.body) // 2] if truncate else response.body)
    if truncate:
        handler.close_connection = True
