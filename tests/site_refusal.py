"""A stand-in for the site refusing a crawl for good, for the exit-code test of that row.

The detection of a real refusal (Cloudflare's WAF page over plain HTTP and in the browser)
is the blocked-page middleware's; this extension only sets the stat it sets,
:data:`topics_crawler.errors.REFUSED_STAT`, when the spider closes, so the test holds the
command to the contract: that stat means exit status 3.
"""

from __future__ import annotations

from typing import Self

from scrapy import signals
from scrapy.crawler import Crawler

from topics_crawler.errors import REFUSED_STAT


class SiteRefused:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        extension = cls(crawler)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_closed(self) -> None:
        assert self.crawler.stats is not None
        self.crawler.stats.set_value(REFUSED_STAT, "challenge on every page (stand-in)")
