"""Hosts that left Medium: one line each, and their links no longer followed.

A story link may point to a publication's custom domain that is no Medium site any more
(``towardsdatascience.com`` is WordPress since 2025). The page parser says so by name
(:attr:`PageResult.off_medium <topics_crawler.pages.PageResult.off_medium>`); here the
first such page of a host is logged as one line naming it, the page is recorded as failed
(reason ``left_medium``), and every later link to that host is not fetched: what the
listing knew about its story is kept instead. Stats: ``left_medium/hosts``,
``left_medium/pages``, ``left_medium/skipped``. Each worker learns a host on its own
(one page each): nothing is shared, nothing is lost.
"""

from __future__ import annotations

import logging
from typing import Self

from scrapy import Spider
from scrapy.statscollectors import StatsCollector

from topics_crawler.pages._off_medium import left_medium_reason
from topics_crawler.urls import split_url

Logger = logging.LoggerAdapter[logging.Logger] | logging.Logger


class LeftMediumHosts:
    """The hosts of this crawl whose pages were not Medium's."""

    def __init__(self, stats: StatsCollector, logger: Logger) -> None:
        self.stats = stats
        self.logger = logger
        self.hosts: set[str] = set()

    @classmethod
    def from_spider(cls, spider: Spider) -> Self:
        assert spider.crawler.stats is not None
        return cls(spider.crawler.stats, spider.logger)

    def record(self, host: str, url: str) -> None:
        """A page of ``host`` (at ``url``) was not Medium's: one line the first time."""
        self.stats.inc_value("left_medium/pages")
        if host in self.hosts:
            return
        self.hosts.add(host)
        self.stats.inc_value("left_medium/hosts")
        self.logger.error("%s (first seen at %s)", left_medium_reason(host), url)

    def skips(self, url: str) -> bool:
        """True (and counted) when ``url`` is on a host known to have left Medium."""
        parts = split_url(url)
        host = (parts.hostname or "").lower() if parts is not None else ""
        if host not in self.hosts:
            return False
        self.stats.inc_value("left_medium/skipped")
        return True
