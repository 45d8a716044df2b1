"""Refusals and sign-in walls: never parsed; a challenge retried, a WAF refusal sent to the
browser, then failed by name — or the crawl stopped, when nothing may help.

Sits below the HTTP compression (590) and redirect (600) middlewares, so it sees
decompressed bodies and the URL a redirect chain ended on, at any status (a challenge body
served with 200 is no page either). What :func:`~topics_crawler.pages._blocked.detect_block`
recognises is handled by its kind:

* **challenge** (Cloudflare's managed challenge, transient) and **signin_wall**: replaced
  by a retry of the originally requested URL (``BLOCKED_RETRY_TIMES`` times, counted apart
  from retries for other errors) carrying ``meta["render_reason"]``; the render policy
  (:mod:`.render_policy`) sends a challenge's every retry through the browser in a fresh
  context. When retries run out the request fails with :class:`Challenge` or
  :class:`SigninWall` (failure reason ``challenge`` / ``signin_wall``). The retry is
  returned at once, as every retry is: it carries a not-before time
  (``meta["retry_not_before"]``, ``RETRY_BACKOFF_BASE`` doubled per block) that the
  scheduler's gate honours; a challenge also pauses the whole host for that long (the
  ``host_paused`` signal), a sign-in wall only its page. Nothing sleeps here.
* **waf** (Cloudflare's WAF refusal, not transient): of plain HTTP, with a browser to try
  (``RENDER_MODE`` ``auto``), the ``plain_http_refused`` signal switches that host's page
  requests to the browser (said once, counted, by the render policy) and the page is asked
  for again through it at once (``blocked/waf``). Refused in the browser too, or with no
  browser (``RENDER_MODE=never``), the site refused the crawl for good
  (:mod:`.refused`): one line naming the refusal and what helps, exit status 3, the crawl
  stopped for that host; for Medium's own host the refused page goes back to the queue,
  held (its host paused), and the crawl closes, so a ``JOBDIR`` or Redis queue keeps it for
  the next run. A refused request that is no page (a GraphQL POST) is left to
  fail as the HTTP error it is, for its caller to fall back from.

A redirect into the sign-in flow usually never gets a response: Medium's robots.txt
disallows ``/m/``, so the robots middleware refuses the redirected request; that refusal
is caught here too and treated as the sign-in wall it is.
Counted as ``blocked/<reason>``, ``blocked/gave_up/<reason>`` and ``blocked/retry/…``.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Self
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.downloadermiddlewares.retry import get_retry_request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response

from topics_crawler.browser.config import BrowserConfig
from topics_crawler.middlewares.refused import SiteRefusals, refusal_line, refusal_scope
from topics_crawler.middlewares.retry_after import backoff_delay
from topics_crawler.pages._blocked import Block, BlockReason, detect_block, is_signin_url
from topics_crawler.scheduling.fingerprint import CANONICAL_URL_META, MIRROR_URL_META
from topics_crawler.scheduling.not_before import RETRY_NOT_BEFORE_META
from topics_crawler.signals import host_paused, plain_http_refused

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: How long a host refused for good is paused (the rest of the run: it closes meanwhile).
HOLD_FOR_GOOD = 30 * 24 * 3600.0
#: Request meta key telling the render policy why plain HTTP was not enough.
RENDER_REASON_META = "render_reason"
#: Entity kinds whose pages may go through the browser (the render policy's, too).
PAGE_KINDS = frozenset({"tag", "story", "author", "publication"})
#: Status recorded for a sign-in redirect whose target was never fetched (robots.txt).
SIGNIN_REDIRECT_STATUS = 302
#: Request meta key: the URL first asked for (canonical), before redirects and the mirror.
ORIGIN_URL_META = "blocked_origin_url"
#: Request meta key: retries caused by blocks (``retry_times`` counts every retry).
BLOCKED_TIMES_META = "blocked_times"
#: Meta a retry must not inherit: the redirect chain and the mirror rewrite of the blocked URL.
_RESET_META = frozenset(
    {
        "redirect_urls",
        "redirect_reasons",
        "redirect_times",
        "redirect_ttl",
        CANONICAL_URL_META,
        MIRROR_URL_META,
    }
)


class BlockedPage(IgnoreRequest):
    """A response was a challenge or sign-in wall, for good; ``status`` is the last one seen."""

    reason: BlockReason = "challenge"

    def __init__(self, url: str, status: int, evidence: str) -> None:
        super().__init__(f"{self.reason} on {url} (status {status}: {evidence})")
        self.url = url
        self.status = status
        self.evidence = evidence


class Challenge(BlockedPage):
    """A bot challenge (Cloudflare "Just a moment…") stayed in the way."""

    reason: BlockReason = "challenge"


class SigninWall(BlockedPage):
    """Medium demanded a sign-in (redirect to ``/m/signin`` or ``/m/callback``)."""

    reason: BlockReason = "signin_wall"


class WafRefusal(BlockedPage):
    """Cloudflare's WAF refused the client (plain HTTP, and the browser or no browser)."""

    reason: BlockReason = "waf"


_EXCEPTIONS: dict[BlockReason, type[BlockedPage]] = {
    "challenge": Challenge,
    "signin_wall": SigninWall,
    "waf": WafRefusal,
}


def is_page_request(request: Request) -> bool:
    """A GET for an entity page: what the browser may fetch instead of plain HTTP."""
    return request.meta.get("entity_kind") in PAGE_KINDS and request.method == "GET"


def blocked_times(request: Request) -> int:
    """How many times this request was retried because of a block (not other errors)."""
    return int(request.meta.get(BLOCKED_TIMES_META, 0))


def canonical_of(request: Request) -> str:
    """The canonical URL a request is for (what the mirror rewrote, if it did)."""
    return str(
        request.meta.get(CANONICAL_URL_META) or request.meta.get(ORIGIN_URL_META) or request.url
    )


def original_request(request: Request) -> Request:
    """The request as first made (redirects and mirror rewrite undone), to ask again."""
    origin = request.meta.get(ORIGIN_URL_META)
    if not origin:
        return request
    meta = {k: v for k, v in request.meta.items() if k not in _RESET_META}
    return request.replace(url=origin, meta=meta)


class BlockedPageMiddleware:
    """Downloader middleware (see the module docstring)."""

    def __init__(
        self, crawler: Crawler, retry_times: int, backoff_base: float, render_mode: str = "auto"
    ) -> None:
        self.crawler = crawler
        self.retry_times = retry_times
        self.backoff_base = backoff_base
        self.backoff_max = crawler.settings.getfloat("RETRY_BACKOFF_MAX", 60.0)
        self.render_mode = render_mode
        self.refusals = SiteRefusals(crawler)
        self.clock: Callable[[], float] = time.time

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        return cls(
            crawler,
            retry_times=settings.getint("BLOCKED_RETRY_TIMES", 2),
            backoff_base=settings.getfloat("RETRY_BACKOFF_BASE", 1.0),
            render_mode=BrowserConfig.from_settings(settings).mode,
        )

    def process_request(self, request: Request) -> None:
        """Remember the URL first asked for (this runs before the mirror rewrites it); drop
        a request to a host that refused the crawl for good."""
        request.meta.setdefault(ORIGIN_URL_META, request.url)
        canonical = canonical_of(request)
        self.refusals.check(canonical, refusal_scope(canonical))

    def process_response(self, request: Request, response: Response) -> Request | Response:
        headers = {
            name: (response.headers.get(name) or b"").decode("latin-1")
            for name in ("Location", "cf-mitigated")
        }
        block = detect_block(response.status, response.url, response.body, headers)
        if block is None:
            return response
        if block.reason == "waf":
            return self._waf_refusal(request, response, block)
        return self._retry_or_fail(request, block, response.status)

    def _waf_refusal(
        self, request: Request, response: Response, block: Block
    ) -> Request | Response:
        """The browser when it may help, else the site's refusal for good (or, for a request
        that is no page, the HTTP error the response is)."""
        stats = self.crawler.stats
        assert stats is not None
        stats.inc_value("blocked/waf")
        origin = canonical_of(request)
        scope = refusal_scope(origin)
        rendered = bool(request.meta.get("playwright"))
        if not rendered and self.render_mode != "never":  # the browser may still be served
            self.crawler.signals.send_catch_log(plain_http_refused, host=scope, block=block)
            if is_page_request(request):
                stats.inc_value("blocked/retry/waf")
                retry = original_request(request).replace(dont_filter=True)
                retry.meta[RENDER_REASON_META] = "waf"
                retry.meta["retry_times"] = request.meta.get("retry_times", 0) + 1
                return retry
        if not is_page_request(request):  # a GraphQL POST: no browser stands in for it
            if response.status >= 400:
                return response  # its HTTP error, for its caller to fall back from
            raise WafRefusal(origin, response.status, block.evidence)  # never data
        tried = (
            "refusing plain HTTP and the browser"
            if rendered
            else "refusing plain HTTP (RENDER_MODE=never: no browser to try)"
        )
        self.refusals.refuse(scope, refusal_line(scope, block, tried))
        stats.inc_value("blocked/gave_up/waf")
        if self.refusals.closes_crawl(scope):
            return self._held_for_next_run(request)
        raise WafRefusal(origin, response.status, block.evidence)

    def _held_for_next_run(self, request: Request) -> Request:
        """The refused page, back in the queue under a host paused for the rest of this run:
        the crawl closes, and a ``JOBDIR`` or Redis queue keeps it (and what waits behind
        it) for the same command to fetch, through another egress."""
        slot = request.meta.get("download_slot")
        if slot is not None:
            until = self.clock() + HOLD_FOR_GOOD
            self.crawler.signals.send_catch_log(host_paused, slot=slot, until=until)
        held = original_request(request).replace(url=canonical_of(request), dont_filter=True)
        for key in (RENDER_REASON_META, "playwright", "playwright_page_methods", "render_count"):
            held.meta.pop(key, None)  # the next run decides afresh
        return held

    def process_exception(self, request: Request, exception: Exception) -> Request | None:
        """A redirect into the sign-in flow refused by robots.txt (``Disallow: /m/``) is a wall."""
        if not isinstance(exception, IgnoreRequest) or isinstance(exception, BlockedPage):
            return None
        if not request.meta.get("redirect_urls") or not is_signin_url(request.url):
            return None
        block = Block("signin_wall", f"redirect to {urlsplit(request.url).path}")
        return self._retry_or_fail(request, block, SIGNIN_REDIRECT_STATUS)

    def _retry_or_fail(self, request: Request, block: Block, status: int) -> Request:
        """A retry of the original request (not before its backoff), or the block's exception."""
        stats = self.crawler.stats
        assert stats is not None
        stats.inc_value(f"blocked/{block.reason}")
        retry = self._retry_request(request, block)
        if retry is None:
            stats.inc_value(f"blocked/gave_up/{block.reason}")
            raise _EXCEPTIONS[block.reason](request.url, status, block.evidence)
        wait = backoff_delay(blocked_times(retry), self.backoff_base, self.backoff_max)
        logger.warning(
            "%s on %s (%s); retry %d not before %.1fs from now",
            block.reason,
            request.url,
            block.evidence,
            blocked_times(retry),
            wait,
        )
        if wait > 0:
            retry.meta[RETRY_NOT_BEFORE_META] = self.clock() + wait
            slot = request.meta.get("download_slot")
            if block.reason == "challenge" and slot is not None:
                # A challenge is about the client, not the page: the host waits as a whole.
                self.crawler.signals.send_catch_log(
                    host_paused, slot=slot, until=self.clock() + wait
                )
        return retry

    def _retry_request(self, request: Request, block: Block) -> Request | None:
        spider = self.crawler.spider
        assert spider is not None, "responses arrive while a spider runs"
        if request.meta.get("dont_retry", False):
            return None
        # Blocks have their own budget: retries for 5xx or timeouts before do not use it up.
        origin = original_request(request)
        counted = origin.replace(meta={**origin.meta, "retry_times": blocked_times(request)})
        retry = get_retry_request(
            counted,
            spider=spider,
            reason=block.reason,
            max_retry_times=self.retry_times,
            stats_base_key="blocked/retry",
        )
        if retry is not None:
            retry.meta[BLOCKED_TIMES_META] = retry.meta["retry_times"]
            retry.meta["retry_times"] = request.meta.get("retry_times", 0) + 1  # attempts in all
            retry.meta[RENDER_REASON_META] = block.reason
        return retry
