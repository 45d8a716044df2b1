"""The one place a page result's "fetch this again" signals become requests.

Page parsers put typed :class:`~topics_crawler.pages.FetchAgain` signals on their
result where they detect the condition; the spider hands every parsed response
here (as scrapy-poet's ``Retry`` is turned into a request in one place), and
:meth:`Refetcher.request_for` returns the request to make instead of using the
result, or None. No decision reads error strings, no middleware parses pages.

* ``broken_state`` — a 200 page whose embedded state JSON does not decode was most
  likely cut on the way (a proxy, a CDN, a server that stopped mid-render): asked
  for once more over plain HTTP; the second answer is used whatever it is, so a page
  that is always broken costs one extra request, never a loop
  (``parse/refetched/<kind>``).
* ``needs_browser`` — plain HTTP lacked what the page shows a reader ("Who to
  follow", a story shell without its story …), and in ``RENDER_MODE=auto`` the page
  is asked for once through the browser with ``meta["render_reason"]`` naming what
  was missing (``render/fallback/<what>``); a rendered page that still lacks it is
  counted (``render/incomplete/<what>``) and used. A tag page listing fewer cards
  than ``max_stories`` is rendered to load more — except in history mode, where the
  GraphQL listing gives the stories and the tag page is rendered only for what it
  alone shows.

Blocks (challenges, sign-in walls) are recognised once, in the download path
(:mod:`topics_crawler.middlewares.blocked`), because they arrive as HTTP errors
that never reach a callback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError
from scrapy import Request
from scrapy.http import Response

from topics_crawler.browser.config import BrowserConfig
from topics_crawler.middlewares.blocked import PAGE_KINDS, RENDER_REASON_META, original_request
from topics_crawler.middlewares.render_policy import PLAYWRIGHT_META, RENDER_COUNT_META
from topics_crawler.pages import PageResult, missing_data
from topics_crawler.spiders._helpers import Logger, OptionsSpider

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector
    from twisted.python.failure import Failure

    from topics_crawler.spiders._arguments import CrawlOptions

#: Request meta key set on the one re-request of a page with broken state.
REFETCH_META = "state_refetch"
#: Set on the plain-HTTP request of a page the browser failed to render (asked once).
BROWSER_FAILED_META = "browser_failed"
#: Meta Scrapy sets for one download, which a new request must not carry (see Scrapy's
#: MetaCopyDetectionMiddleware): the re-request is a new request, with its own retries.
DOWNLOAD_META = frozenset({"download_latency", "retry_times", "cache_timestamp", "_dont_cache"})


def has_broken_state(result: PageResult) -> bool:
    """True when the page carried embedded state JSON that could not be decoded
    (the document's typed ``broken_state`` signal, never the error text)."""
    return result.signal("broken_state") is not None


def again(response: Response, **meta: object) -> Request:
    """The page's original request once more (see :func:`request_again`)."""
    assert response.request is not None, "parsed responses carry their request"
    return request_again(response.request, **meta)


def request_again(request: Request, **meta: object) -> Request:
    """``request`` as first made once more (redirects, mirror and per-download meta
    undone), past the dupefilter, with ``meta`` added."""
    retry = original_request(request)
    kept = {k: v for k, v in retry.meta.items() if k not in DOWNLOAD_META}
    return retry.replace(dont_filter=True, meta={**kept, **meta})


def refetch_request(
    response: Response, result: PageResult, stats: StatsCollector, logger: Logger
) -> Request | None:
    """The re-request of a broken-state page (first time only), else None."""
    if response.request is None or response.meta.get(REFETCH_META):
        return None
    if not has_broken_state(result):
        return None
    kind = response.meta.get("entity_kind", "page")
    stats.inc_value(f"parse/refetched/{kind}")
    logger.warning("Broken page state on %s; asking for the page once more", response.url)
    return again(response, **{REFETCH_META: True})


class Refetcher:
    """Turns a parsed page's signals into the request to make instead (see the module)."""

    def __init__(
        self, config: BrowserConfig, options: CrawlOptions, stats: StatsCollector, logger: Logger
    ) -> None:
        self.config = config
        self.options = options
        self.stats = stats
        self.logger = logger

    @classmethod
    def from_spider(cls, spider: OptionsSpider) -> Refetcher:
        crawler = spider.crawler
        assert crawler.stats is not None
        config = BrowserConfig.from_settings(crawler.settings)
        return cls(config, spider.options, crawler.stats, spider.logger)

    def request_for(self, response: Response, result: PageResult) -> Request | None:
        """The request that replaces this response's result, or None to use the result."""
        broken = refetch_request(response, result, self.stats, self.logger)
        if broken is not None:
            return broken
        return self.browser_request(response, result)

    def browser_request(self, response: Response, result: PageResult) -> Request | None:
        """The page once through the browser, when plain HTTP lacked what it shows."""
        kind = response.meta.get("entity_kind")
        if self.config.mode != "auto" or kind not in PAGE_KINDS or response.status != 200:
            return None
        if response.request is None or response.request.method != "GET":
            return None
        what = self.lacking(response, result)
        if what is None:
            return None
        if response.meta.get(BROWSER_FAILED_META):
            return None  # the browser failed: said and counted (after_browser_failure)
        if response.meta.get(RENDER_COUNT_META, 0) >= 1:
            self.stats.inc_value(f"render/incomplete/{what}")
            self.logger.warning("%s still lacks %s after rendering", response.url, what)
            return None
        self.stats.inc_value(f"render/fallback/{what}")
        self.logger.info("%s lacks %s over plain HTTP; asking the browser", response.url, what)
        return again(response, **{RENDER_REASON_META: what})

    def lacking(self, response: Response, result: PageResult) -> str | None:
        """What the page lacks: its ``needs_browser`` signal, or (tag pages outside
        history mode) fewer cards than ``max_stories``."""
        signal = result.signal("needs_browser")
        if signal is not None:
            return signal.what
        if result.kind != "tag" or self.options.history is not None:
            return None
        return missing_data(result, self.options.max_stories)

    def after_browser_failure(self, request: Request, failure: Failure) -> Request | None:
        """A page the browser was asked for because plain HTTP lacked something, and that
        the browser failed to render (Chromium missing or crashed, a page timeout): the
        page once more over plain HTTP, so what it gives is kept, not lost with the
        render. None for any other failure (a challenge or a refusal needs the browser)."""
        what = request.meta.get(RENDER_REASON_META)
        if self.config.mode != "auto" or what in (None, "challenge"):
            return None
        if not request.meta.get(PLAYWRIGHT_META) or request.meta.get(BROWSER_FAILED_META):
            return None
        if not failure.check(PlaywrightError):
            return None
        kind = request.meta.get("entity_kind", "page")
        self.stats.inc_value(f"render/browser_failed/{kind}")
        self.logger.warning(
            "The browser could not render %s (%s); keeping what plain HTTP gives (without %s)",
            request.url, failure.getErrorMessage().splitlines()[0], what,
        )  # fmt: skip
        rendered = max(1, int(request.meta.get(RENDER_COUNT_META, 0)))  # not asked again
        return request_again(request, **{BROWSER_FAILED_META: True, RENDER_COUNT_META: rendered})
