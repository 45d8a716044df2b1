"""Cloudflare in front of the local site: its two refusals, as Medium's clients met them in 2026.

    SiteServer(default_site(), refusals=Refusals(waf=True))  # python -m topics_crawler.site --waf
    SiteServer(default_site(), refusals=Refusals(challenge=True))  # ... --challenge

The evidence (``../shared/medium-pages``, ``SOURCES.md`` and ``STRUCTURE.md`` "2026"): from a
datacentre address, plain HTTP clients (curl) got the **WAF refusal** — HTTP 403, "Sorry, you
have been blocked", a Ray ID — while a browser was served; and a **managed challenge** (403,
"Just a moment…", ``cType: 'managed'``) met on a first try was gone on the next try in a fresh
browser context.

* ``waf``: a request that does not carry what real Chromium sends on every request and Scrapy
  never does — the ``Sec-Fetch-Mode`` fetch-metadata header (``navigate`` for a page, ``cors``
  for the page's own ``fetch``) — is answered with the WAF page, on every path and method
  (GraphQL POSTs included). Chromium adds it itself, under scrapy-playwright's header override
  too; Scrapy has no reason to, and the project sends nothing to pass for a browser.
  ``robots.txt`` stays open to everyone (an assumption: a WAF rule that let no crawler read the
  crawl rules would be odd; the evidence says nothing).
* ``challenge``: every page GET without the ``cf_clearance`` cookie is answered with the
  challenge page (403, ``cf-mitigated: challenge``); its script sets that cookie and reloads,
  so only a client running it — a browser — gets through. Other requests (robots.txt, the
  GraphQL endpoint, the scripts' own JSON) pass.

Each refusal page carries its own Ray ID, derived from the path it was served at (so two URLs
get two pages), in the markup of Cloudflare's pages — written for this site, not copied.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from email.message import Message
from urllib.parse import urlsplit

from topics_crawler.site.routes import HTML, Response

#: The cookie a cleared challenge leaves (Cloudflare's name for it).
CLEARANCE_COOKIE = "cf_clearance"
#: Paths never refused: the crawl rules, Cloudflare's own scripts.
OPEN_PATHS = ("/robots.txt",)
OPEN_PREFIXES = ("/cdn-cgi/",)
#: Paths the challenge leaves alone: data endpoints the pages' scripts call.
DATA_PREFIXES = ("/_/",)


@dataclass(frozen=True)
class Refusals:
    """Which of Cloudflare's refusals the site stands behind (see the module docstring)."""

    waf: bool = False
    challenge: bool = False

    def response(self, method: str, raw_path: str, headers: Message) -> Response | None:
        """The refusal for this request, or None when it is served."""
        path = urlsplit(raw_path).path or "/"
        if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            return None
        if self.waf and not headers.get("Sec-Fetch-Mode"):
            return waf_page(path)
        if (
            self.challenge
            and method in ("GET", "HEAD")
            and not path.startswith(DATA_PREFIXES)
            and f"{CLEARANCE_COOKIE}=" not in (headers.get("Cookie") or "")
        ):
            return challenge_page(path)
        return None


def ray_id(path: str) -> str:
    """A Ray ID of 16 hex digits, its own for each path."""
    return hashlib.blake2b(path.encode(), digest_size=8).hexdigest()


def waf_page(path: str, status: int = 403) -> Response:
    """Cloudflare's "Sorry, you have been blocked" page."""
    ray = ray_id(path)
    body = (
        '<!DOCTYPE html><html class="no-js" lang="en-US"><head>'
        "<title>Attention Required! | Cloudflare</title>"
        '<meta name="robots" content="noindex, nofollow">'
        '<link rel="stylesheet" id="cf_styles-css" href="/cdn-cgi/styles/cf.errors.css">'
        '<script src="/cdn-cgi/challenge-platform/scripts/precursor/main.js"></script></head>'
        '<body><div id="cf-wrapper"><div id="cf-error-details" class="cf-error-details-wrapper">'
        '<div class="cf-wrapper cf-header cf-error-overview">'
        '<h1 data-translate="block_headline">Sorry, you have been blocked</h1>'
        '<h2 class="cf-subheadline"><span data-translate="unable_to_access">You are unable to '
        "access</span> medium.com</h2></div>"
        '<div class="cf-section cf-wrapper"><h2 data-translate="blocked_why_headline">Why have I '
        "been blocked?</h2><p>This website is using a security service to protect itself from "
        "online attacks.</p></div>"
        '<div class="cf-error-footer cf-wrapper"><p><span class="cf-footer-item">Cloudflare Ray '
        f'ID: <strong class="font-semibold">{ray}</strong></span>'
        '<span class="cf-footer-item">Your IP: <span class="hidden" id="cf-footer-ip">'
        "198.51.100.23</span></span></p></div></div></div></body></html>"
    )
    headers = {"Content-Type": HTML, "CF-RAY": f"{ray}-FRA", "Server": "cloudflare"}
    return Response(status, body.encode("utf-8"), headers)


def challenge_page(path: str, status: int = 403) -> Response:
    """Cloudflare's managed challenge: "Just a moment…"; its script sets the clearance
    cookie and reloads the page."""
    ray = ray_id(path)
    body = (
        '<!DOCTYPE html><html lang="en-US" dir="ltr"><head><title>Just a moment...</title>'
        '<meta name="robots" content="noindex,nofollow"><meta http-equiv="refresh" '
        f'content="360"><script src="/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1'
        f'?ray={ray}"></script></head><body><div class="main-wrapper" role="main">'
        '<div class="main-content"><h1 class="zone-name-title h1">medium.com</h1>'
        '<p id="challenge-body-text">Verifying you are human. This may take a few seconds.</p>'
        "<noscript>Enable JavaScript and cookies to continue</noscript></div></div>"
        f"<script>(function(){{window._cf_chl_opt={{cRay: '{ray}', cType: 'managed', "
        "cZone: 'medium.com', cvId: '3'};"
        f'document.cookie = "{CLEARANCE_COOKIE}=local-{ray}; path=/";'
        "setTimeout(function(){window.location.reload();}, 200);}());</script>"
        "</body></html>"
    )
    headers = {
        "Content-Type": HTML,
        "cf-mitigated": "challenge",
        "Cache-Control": "private, max-age=0, no-store, no-cache, must-revalidate",
        "CF-RAY": f"{ray}-FRA",
        "Server": "cloudflare",
    }
    return Response(status, body.encode("utf-8"), headers)
