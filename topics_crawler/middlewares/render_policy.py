"""Which requests go through Chromium (scrapy-playwright's ``meta["playwright"]``).

``RENDER_MODE`` (read into :class:`~topics_crawler.browser.config.BrowserConfig`):

- ``never``: plain HTTP for everything;
- ``always``: every page request is rendered;
- ``auto`` (default): plain HTTP first. A request carrying ``meta["render_reason"]``
  is rendered: a challenge or sign-in wall retry (:mod:`.blocked`), a tag history whose
  GraphQL endpoint failed (``history_fallback``), or a page whose plain answer lacked
  what it should carry — the page result's ``needs_browser`` signal, turned into the
  request by the spider (:mod:`topics_crawler.spiders._refetch`). This middleware never
  parses a page: the decision is made where the parsed result is.

  A host whose WAF refused plain HTTP (the ``plain_http_refused`` signal, sent by
  :mod:`.blocked`) has every page request rendered from then on (reason ``waf``), said
  once in the log and counted (``render/switched_hosts``). A managed challenge's every
  retry is rendered in a **fresh browser context** (``meta["playwright_context"]``
  ``fresh-<n>``: no cookie or state of earlier renders; the download handler closes it
  with its page; ``render/fresh_context``) — the way a challenge met on a first try was
  gone on the next in 2026.

With Zyte API as the egress (:mod:`topics_crawler.egress.zyte`), a page to render is asked
of Zyte API rendered (``meta["zyte_api_automap"]``: ``browserHtml``) instead.

Only GET requests for pages (``meta["entity_kind"]`` tag, story, author,
publication) are ever rendered; robots.txt and GraphQL listings never are. A
page is rendered at most once (``meta["render_count"]``); what the browser does
comes from :mod:`topics_crawler.browser.actions`: tag pages load cards up to the
spider's ``options.max_stories`` — except in history mode, where the GraphQL listing
gives the stories and a tag page is rendered only for what it alone shows ("Who to
follow"), never asked to load more cards. A rendered response gets the HTTP status of the
document finally shown (a self-clearing challenge: 403 first, the page after).

Sits between the decompression (590) and blocked-page (580) middlewares: it fixes a
rendered page's status before the challenge detection looks at it. Stats:
``render/requests`` (and ``/<kind>``), ``render/reason/<reason>``,
``render/scroll/<stop>``, ``render/skipped/<reason>`` (mode ``never``); the spider
counts ``render/fallback/<what>`` and ``render/incomplete/<what>``;
scrapy-playwright adds ``playwright/page_count`` and friends.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Self

from scrapy import Request
from scrapy.http import Headers, Response

from topics_crawler.browser.actions import (
    document_status,
    entity_page_actions,
    load_more_outcome,
    tag_page_actions,
)
from topics_crawler.browser.config import CONTEXT_META, FRESH_CONTEXT_PREFIX, BrowserConfig
from topics_crawler.middlewares.blocked import (
    RENDER_REASON_META,
    canonical_of,
    is_page_request,
)
from topics_crawler.middlewares.refused import refusal_scope
from topics_crawler.signals import plain_http_refused

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from topics_crawler.pages._blocked import Block

logger = logging.getLogger(__name__)

#: scrapy-playwright's switch and its list of page actions.
PLAYWRIGHT_META = "playwright"
PAGE_METHODS_META = "playwright_page_methods"
#: How many times this page went through the browser (at most once in auto mode).
RENDER_COUNT_META = "render_count"
#: The spider's request meta naming the entity a request is for (tag, story, …).
ENTITY_KIND_META = "entity_kind"
#: ``render_reason`` of a tag page whose GraphQL history failed: scroll as far as allowed.
HISTORY_FALLBACK = "history_fallback"
#: scrapy-zyte-api's per-request parameters of its transparent mode.
ZYTE_AUTOMAP_META = "zyte_api_automap"


def zyte_render_parameters(kind: str) -> dict[str, Any]:
    """What Zyte API is asked for a page the browser would render: its rendered HTML (a tag
    page scrolled to the bottom once, for the cards it loads)."""
    if kind == "tag":
        return {"browserHtml": True, "actions": [{"action": "scrollBottom"}]}
    return {"browserHtml": True}


class RenderPolicyMiddleware:
    """Downloader middleware (see the module docstring)."""

    def __init__(self, crawler: Crawler, config: BrowserConfig) -> None:
        self.crawler = crawler
        self.config = config
        #: Hosts whose WAF refused plain HTTP: their pages go through the browser.
        self.browser_hosts: set[str] = set()
        self.fresh_contexts = 0
        #: Zyte API is the egress (scrapy-zyte-api's transparent mode): it renders pages.
        self.zyte_api = crawler.settings.getbool("ZYTE_API_TRANSPARENT_MODE")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        middleware = cls(crawler, BrowserConfig.from_settings(crawler.settings))
        crawler.signals.connect(middleware.plain_http_refused, plain_http_refused)
        return middleware

    def plain_http_refused(self, host: str, block: Block) -> None:
        """Send ``host``'s page requests through the browser from now on (said once)."""
        if self.config.mode != "auto" or host in self.browser_hosts:
            return
        self.browser_hosts.add(host)
        self.stats.inc_value("render/switched_hosts")
        logger.warning(
            "%s refused plain HTTP (%s): its page requests go through the browser from now on",
            host,
            block.describe(),
        )

    @property
    def stats(self) -> StatsCollector:
        stats = self.crawler.stats
        assert stats is not None, "stats exist once the crawler is configured"
        return stats

    # --- requests ------------------------------------------------------------------

    def process_request(self, request: Request) -> None:
        reason = self.render_reason(request)
        if reason is None:
            request.meta.pop(PLAYWRIGHT_META, None)
            request.meta.pop(PAGE_METHODS_META, None)
            return
        kind = request.meta[ENTITY_KIND_META]
        if self.zyte_api:  # Zyte API renders instead: its browserHtml, no playwright
            request.meta[ZYTE_AUTOMAP_META] = zyte_render_parameters(kind)
            self.count_render(kind, reason)
            return
        if request.meta.get(RENDER_REASON_META) == "challenge":  # each try a fresh context
            self.fresh_contexts += 1
            request.meta[CONTEXT_META] = f"{FRESH_CONTEXT_PREFIX}{self.fresh_contexts}"
            self.stats.inc_value("render/fresh_context")
        request.meta[PLAYWRIGHT_META] = True
        request.meta[RENDER_COUNT_META] = request.meta.get(RENDER_COUNT_META, 0) + 1
        request.meta[PAGE_METHODS_META] = self.actions(kind, reason)
        self.count_render(kind, reason)
        logger.debug("Rendering %s %s in the browser (%s)", kind, request.url, reason)

    def count_render(self, kind: str, reason: str) -> None:
        self.stats.inc_value("render/requests")
        self.stats.inc_value(f"render/requests/{kind}")
        self.stats.inc_value(f"render/reason/{reason}")

    def render_reason(self, request: Request) -> str | None:
        """Why this request goes through the browser, or None for plain HTTP."""
        reason = request.meta.get(RENDER_REASON_META)
        if not is_page_request(request):
            return None  # robots.txt, GraphQL listings: data, not pages
        if self.config.mode == "never":
            if reason:
                self.stats.inc_value(f"render/skipped/{reason}")
            return None
        if self.config.mode == "always":
            return "always"
        if reason == "challenge":
            return "challenge"  # every retry of a challenge: it clears in a fresh context
        if self.browser_hosts and refusal_scope(canonical_of(request)) in self.browser_hosts:
            return str(reason) if reason else "waf"
        if request.meta.get(RENDER_COUNT_META, 0) >= 1:
            return None
        return str(reason) if reason else None

    def actions(self, kind: str, reason: str) -> list[Any]:
        """The browser actions for a page of ``kind`` rendered for ``reason``."""
        if kind != "tag":
            return entity_page_actions(self.config)
        return tag_page_actions(self.config, self.wanted_stories(reason))

    def wanted_stories(self, reason: str | None) -> int | None:
        """Cards a tag page should list: the spider's ``max_stories``; without one, none
        beyond the first screen (0), or as many as the time budget allows (None) when the
        browser stands in for the GraphQL history. In history mode the listing gives the
        stories: none beyond the first screen, unless the browser stands in for it."""
        options = getattr(self.crawler.spider, "options", None)
        max_stories = getattr(options, "max_stories", None)
        if getattr(options, "history", None) is not None and reason != HISTORY_FALLBACK:
            return 0
        if isinstance(max_stories, int):
            return max_stories
        return None if reason == HISTORY_FALLBACK else 0

    # --- responses -----------------------------------------------------------------

    def process_response(self, request: Request, response: Response) -> Response:
        if request.meta.get(PLAYWRIGHT_META):
            return self.rendered(request, response)
        return response

    def rendered(self, request: Request, response: Response) -> Response:
        """A browser response: count how loading went, give it the final document's status."""
        actions = request.meta.get(PAGE_METHODS_META) or []
        outcome = load_more_outcome(actions)
        if outcome is not None:
            self.stats.inc_value(f"render/scroll/{outcome.get('stop')}")
            logger.debug("Loaded cards on %s: %s", request.url, outcome)
        status = document_status(actions)
        if status is not None and status != response.status:
            self.stats.inc_value("render/status_replaced")
            content_type = response.headers.get("Content-Type") or b"text/html; charset=utf-8"
            response = response.replace(
                status=status, headers=Headers({"Content-Type": content_type})
            )
        return response
