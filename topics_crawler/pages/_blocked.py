"""Recognise pages that are not Medium content: bot challenges and sign-in walls.

A Cloudflare "Just a moment…" interstitial or a redirect to Medium's sign-in
flow must never reach a page parser (it would become an empty item or a bogus
parse failure). :func:`detect_block` is a pure function of what a response
carries — status, URL, a few headers and the start of the body — so the
downloader middleware that uses it and its tests need no network.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urljoin, urlsplit

BlockReason = Literal["challenge", "signin_wall"]

#: Statuses a challenge interstitial is served with (Cloudflare uses 403 and 503).
CHALLENGE_STATUSES = frozenset({403, 429, 503})
#: Body markers of a challenge page (Cloudflare managed / JS challenge, "Just a moment…").
CHALLENGE_MARKERS = (
    "cf_chl_opt",
    "cf-chl-",
    "challenge-platform",
    "<title>just a moment...</title>",
    "<title>just a moment…</title>",
    "<title>attention required! | cloudflare</title>",
)
#: Path prefixes of Medium's sign-in flow (on medium.com and publication hosts alike).
SIGNIN_PATHS = ("/m/signin", "/m/callback")
#: How much of the body is searched for markers: challenge pages are small.
SCAN_CHARS = 64 * 1024


@dataclass(frozen=True, slots=True)
class Block:
    """Why a response is not the page that was asked for, and what showed it."""

    reason: BlockReason
    evidence: str


def detect_block(
    status: int,
    url: str,
    body: bytes | str = b"",
    headers: Mapping[str, str] | None = None,
) -> Block | None:
    """A :class:`Block` when the response is a challenge or a sign-in wall, else None.

    ``headers`` maps lower-case header names to values (``location``,
    ``cf-mitigated``). Only blocking statuses count for body markers, because
    Cloudflare also injects ``challenge-platform`` scripts into normal pages.
    """
    found_headers = {k.lower(): v for k, v in (headers or {}).items()}
    signin = _signin_evidence(status, url, found_headers.get("location"))
    if signin is not None:
        return Block("signin_wall", signin)
    if found_headers.get("cf-mitigated", "").strip().lower() == "challenge":
        return Block("challenge", "header cf-mitigated: challenge")
    if status in CHALLENGE_STATUSES:
        marker = _challenge_marker(body)
        if marker is not None:
            return Block("challenge", f"status {status} with marker {marker!r}")
    return None


def is_signin_url(url: str) -> bool:
    """True for URLs of Medium's sign-in flow (``/m/signin``, ``/m/callback``)."""
    path = urlsplit(url).path.lower()
    return any(path == prefix or path.startswith(prefix + "/") for prefix in SIGNIN_PATHS)


def _signin_evidence(status: int, url: str, location: str | None) -> str | None:
    if is_signin_url(url):
        return f"landed on {urlsplit(url).path}"
    if 300 <= status < 400 and location and is_signin_url(urljoin(url, location)):
        return f"redirect to {urlsplit(urljoin(url, location)).path}"
    return None


def _challenge_marker(body: bytes | str) -> str | None:
    head = body[:SCAN_CHARS]
    text = head.decode("latin-1") if isinstance(head, bytes) else head
    lowered = text.lower()
    return next((marker for marker in CHALLENGE_MARKERS if marker in lowered), None)
