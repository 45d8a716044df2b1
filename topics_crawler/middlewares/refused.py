"""A site that refused the crawl for good: one line, the ``refused_by_site`` stat, a stop.

Cloudflare's WAF refusal (:mod:`topics_crawler.pages._blocked`) is not transient: it refuses
the client — its address, or what it announces. When plain HTTP was refused and the browser
was refused too (or there is no browser to try: ``RENDER_MODE=never``), nothing the crawler
may do helps, and saying so once beats a thousand failed pages. Then:

* one line names the host, the refusal (with Cloudflare's Ray ID) and what helps: a proxy
  (``HTTPS_PROXY`` or ``meta["proxy"]``), Zyte API (``pip install '.[zyte]'``), another
  address (``DOWNLOAD_BIND_ADDRESS``, another machine);
* :data:`~topics_crawler.errors.REFUSED_STAT` is set, so ``scrapy crawl`` exits with
  :attr:`~topics_crawler.errors.ExitCode.REFUSED` (3); ``refused_by_site/<host>`` counts
  the refused pages;
* every later request to that host is dropped before it is sent (``refused_by_site/skipped``);
  when the host is Medium's own (medium.com and its subdomains: where the crawl's pages come
  from) the crawl closes (reason ``refused_by_site``), so a ``JOBDIR`` or Redis queue keeps
  what was left for the same command to finish from — through a proxy, Zyte API or another
  address.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import deferred_from_coro

from topics_crawler.errors import REFUSED_STAT, note_stop
from topics_crawler.urls import is_medium_domain

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from topics_crawler.pages._blocked import Block

logger = logging.getLogger(__name__)

#: The crawl's close reason when Medium's own host refused it.
REFUSED_REASON = "refused_by_site"
#: What helps against a refusal of the client (the one line ends with it).
WHAT_HELPS = (
    "a proxy (HTTPS_PROXY, or meta['proxy']), Zyte API (pip install '.[zyte]', "
    "ZYTE_API_KEY) or another address (DOWNLOAD_BIND_ADDRESS, another machine) may"
)


class SiteRefused(IgnoreRequest):
    """The host refused the crawl for good (its pages are not asked for any more)."""

    reason = "refused_by_site"

    def __init__(self, url: str, host: str) -> None:
        super().__init__(f"{host} refused the crawl; not fetching {url}")
        self.url = url
        self.host = host


def refusal_line(host: str, block: Block, tried: str) -> str:
    """The one line: who refused, how, what was tried, what helps."""
    return (
        f"{host} refused the crawl: {block.describe()}, {tried}; nothing the crawler may "
        f"do helps, {WHAT_HELPS}. The crawl stops for {host}."
    )


class SiteRefusals:
    """The hosts that refused this crawl for good (one per crawl, shared by middlewares)."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.hosts: set[str] = set()

    def refuse(self, host: str, line: str) -> None:
        """Record ``host``'s refusal: the line once, the stats, the crawl closed for Medium."""
        stats = self.crawler.stats
        assert stats is not None
        stats.inc_value(f"{REFUSED_STAT}/{host}")
        if host in self.hosts:
            return
        self.hosts.add(host)
        stats.set_value(REFUSED_STAT, 1)
        logger.error("%s", line)
        note_stop(stats, line)
        if self.closes_crawl(host):
            self._close_crawl()

    @staticmethod
    def closes_crawl(host: str) -> bool:
        """True when ``host``'s refusal closes the crawl: Medium's own host, where the
        crawl's pages come from (a custom domain's refusal only stops that domain)."""
        return is_medium_domain(host)

    def _close_crawl(self) -> None:
        try:
            engine = self.crawler.engine
        except RuntimeError:  # no crawl running (a unit test's crawler)
            return
        if engine is not None and engine.running:
            deferred_from_coro(engine.close_spider_async(reason=REFUSED_REASON))

    def check(self, url: str, host: str) -> None:
        """Raise :class:`SiteRefused` for a request to a host that refused the crawl."""
        if host in self.hosts:
            stats = self.crawler.stats
            assert stats is not None
            stats.inc_value(f"{REFUSED_STAT}/skipped")
            raise SiteRefused(url, host)


def refusal_scope(url: str) -> str:
    """Whose refusal a response of ``url`` is: ``medium.com`` for Medium and its subdomains
    (one Cloudflare zone), else the URL's host (a custom domain is a zone of its own)."""
    host = (urlsplit(url).hostname or "").lower()
    return "medium.com" if is_medium_domain(host) else host
