"""Recognise pages that are not Medium content: Cloudflare's two refusals and sign-in walls.

Three kinds, told apart because each asks for something else
(``../shared/medium-pages``, the 2026 captures, are the examples):

* ``challenge`` — Cloudflare's **managed challenge** ("Just a moment…", ``cType: 'managed'``,
  its ``/cdn-cgi/challenge-platform/h/…/orchestrate/chl_page`` script; HTTP 403/503, or a
  ``cf-mitigated: challenge`` header). Transient: a fresh browser context gets past it.
* ``waf`` — Cloudflare's **WAF refusal** ("Sorry, you have been blocked", "Attention
  Required! | Cloudflare", ``cf-error-details``, a Ray ID; HTTP 403). Not transient: the
  client (its address, or what it announces) is refused; only another client helps.
* ``signin_wall`` — Medium's sign-in flow (``/m/signin``, ``/m/callback``, a redirect
  there) or a sign-in prompt served in place of the page.

:func:`detect_block` is a pure function of what a response carries — status, URL, a few
headers and the body — so the downloader middleware that uses it, ``extract`` (which has
only the body: ``status=None``) and their tests need no network. A refusal is recognised
at **any** status (a challenge body served with 200 is still no page) by markers no Medium
page carries, and never in a page that holds Medium's own data (embedded state): every
normal Medium page carries Cloudflare's ``challenge-platform/scripts/precursor`` script,
which is therefore no marker.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urljoin, urlsplit

BlockReason = Literal["challenge", "waf", "signin_wall"]

#: Markers of a managed challenge, any one is enough (lowercased body).
CHALLENGE_MARKERS = ("_cf_chl_opt", "/orchestrate/chl_page/", "cf-chl-widget")
#: A challenge's title, and what must come with it when no marker above is there
#: (a challenge whose script only sets its clearance cookie).
CHALLENGE_TITLES = ("<title>just a moment...</title>", "<title>just a moment…</title>")
CHALLENGE_COMPANIONS = ("cf_clearance", "enable javascript and cookies to continue")
#: Markers of the WAF refusal page: one of each group.
WAF_PAGE_MARKERS = ("cf-error-details", 'data-translate="block_headline"', "cf-wrapper")
WAF_TEXT_MARKERS = ("sorry, you have been blocked", "<title>attention required! | cloudflare")
#: A sign-in prompt served in place of a page (no Medium data in it).
SIGNIN_TEXT_MARKERS = ("sign in to continue reading", "<title>sign in – medium</title>",
                       "<title>sign in - medium</title>")  # fmt: skip
#: Marks of Medium's own data: a page holding one is Medium's, whatever else it says.
MEDIUM_DATA_MARKERS = (b"__APOLLO_STATE__", b'window["obvInit"]', b"var GLOBALS")
#: Path prefixes of Medium's sign-in flow (on medium.com and publication hosts alike).
SIGNIN_PATHS = ("/m/signin", "/m/callback")
#: How much of the body is searched for markers: refusal pages are small.
SCAN_CHARS = 64 * 1024
_RAY_RE = re.compile(
    r"ray id:\s*(?:<[^>]+>\s*)*([0-9a-f]{16})|[?&]ray=([0-9a-f]{16})|cRay:\s*'([0-9a-f]{16})'"
)


@dataclass(frozen=True, slots=True)
class Block:
    """Why a response is not the page that was asked for, and what showed it."""

    reason: BlockReason
    evidence: str
    ray: str | None = None
    """Cloudflare's Ray ID of the refusal, when the page shows it (to quote to the site)."""

    @property
    def transient(self) -> bool:
        """A managed challenge passes on another try (a fresh browser context); a WAF
        refusal and a sign-in wall do not."""
        return self.reason == "challenge"

    @property
    def hint(self) -> str:
        """What the block asks for, in words."""
        return {
            "challenge": "transient: asked again in a fresh browser, it usually passes",
            "waf": "the client is refused: a proxy, Zyte API or another address may help",
            "signin_wall": "the page asks for a signed-in reader",
        }[self.reason]

    def describe(self) -> str:
        """What the block is, in words (log lines, ``extract``)."""
        ray = f", Ray ID {self.ray}" if self.ray else ""
        return {
            "challenge": f"a Cloudflare managed challenge ({self.evidence}{ray})",
            "waf": f"a Cloudflare WAF refusal ({self.evidence}{ray})",
            "signin_wall": f"a sign-in wall ({self.evidence})",
        }[self.reason]


def detect_block(
    status: int | None,
    url: str,
    body: bytes | str = b"",
    headers: Mapping[str, str] | None = None,
) -> Block | None:
    """A :class:`Block` when the response is a refusal or a sign-in wall, else None.

    ``headers`` maps header names to values (``location``, ``cf-mitigated``; any case).
    ``status`` None: only the body is known (a saved page).
    """
    found_headers = {k.lower(): v for k, v in (headers or {}).items()}
    signin = _signin_evidence(status, url, found_headers.get("location"))
    if signin is not None:
        return Block("signin_wall", signin)
    where = f"status {status}" if status is not None else "the page"
    if found_headers.get("cf-mitigated", "").strip().lower() == "challenge":
        return Block("challenge", "header cf-mitigated: challenge", _ray(body))
    found = refusal_in_body(body)
    if found is None:
        return None
    reason, marker = found
    return Block(
        reason, f"{where} with {marker!r}", _ray(body) if reason != "signin_wall" else None
    )


def refusal_in_body(body: bytes | str) -> tuple[BlockReason, str] | None:
    """``(reason, marker)`` when the body is a refusal page (see the module docstring)."""
    head = body[:SCAN_CHARS]
    lowered = (head.decode("latin-1") if isinstance(head, bytes) else head).lower()
    found = _classify(lowered)
    if found is None or _holds_medium_data(body):
        return None
    return found


def _classify(text: str) -> tuple[BlockReason, str] | None:
    if any(marker in text for marker in WAF_PAGE_MARKERS):
        waf = next((marker for marker in WAF_TEXT_MARKERS if marker in text), None)
        if waf is not None:
            return "waf", waf.removeprefix("<title>")
    challenge = next((marker for marker in CHALLENGE_MARKERS if marker in text), None)
    if challenge is not None:
        return "challenge", challenge
    title = next((t for t in CHALLENGE_TITLES if t in text), None)
    if title is not None and any(companion in text for companion in CHALLENGE_COMPANIONS):
        return "challenge", title.removeprefix("<title>").removesuffix("</title>")
    signin = next((marker for marker in SIGNIN_TEXT_MARKERS if marker in text), None)
    if signin is not None:
        return "signin_wall", signin.removeprefix("<title>").removesuffix("</title>")
    return None


def _holds_medium_data(body: bytes | str) -> bool:
    raw = body.encode("utf-8", "replace") if isinstance(body, str) else body
    return any(marker in raw for marker in MEDIUM_DATA_MARKERS)


def _ray(body: bytes | str) -> str | None:
    head = body[:SCAN_CHARS]
    text = head.decode("latin-1") if isinstance(head, bytes) else head
    match = _RAY_RE.search(text.lower())
    return next((group for group in match.groups() if group), None) if match else None


def is_signin_url(url: str) -> bool:
    """True for URLs of Medium's sign-in flow (``/m/signin``, ``/m/callback``)."""
    path = urlsplit(url).path.lower()
    return any(path == prefix or path.startswith(prefix + "/") for prefix in SIGNIN_PATHS)


def _signin_evidence(status: int | None, url: str, location: str | None) -> str | None:
    if is_signin_url(url):
        return f"landed on {urlsplit(url).path}"
    if status is not None and 300 <= status < 400 and location:
        target = urljoin(url, location)
        if is_signin_url(target):
            return f"redirect to {urlsplit(target).path}"
    return None
