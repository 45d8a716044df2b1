"""A progress line at a fixed interval, built on Scrapy's stats and LogStats.

Every ``LOGSTATS_INTERVAL`` seconds it logs pages fetched (and the rate),
items per type, errors (parse errors, download errors, failed pages), the
requests still waiting in the scheduler and the rate each rate-limited host allows
as learned so far (:mod:`topics_crawler.middlewares.rate`), e.g.::

    Progress: 412 pages (96/min), items story=380 author=120 publication=9 tag_page=2,
    errors parse=1 download=0, 37 requests waiting, rate medium.com=4.2/s

Items per type are counted as ``item_scraped_count/<item_type>`` stats.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Self

from itemadapter import ItemAdapter
from scrapy import Spider, signals
from scrapy.extensions.logstats import LogStats

from topics_crawler.middlewares.rate import LEARNED_RATE_STAT

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

ITEM_TYPES = ("story", "author", "publication", "tag_page")


class CrawlProgress(LogStats):
    """LogStats with items per type, errors and the scheduler backlog."""

    crawler: Crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        extension = super().from_crawler(crawler)
        extension.crawler = crawler
        crawler.signals.connect(extension.item_scraped, signal=signals.item_scraped)
        return extension

    def item_scraped(self, item: Any, spider: Spider) -> None:
        item_type = ItemAdapter(item).get("item_type") or type(item).__name__.lower()
        self.stats.inc_value(f"item_scraped_count/{item_type}")

    def waiting_requests(self) -> int | None:
        """Requests in the scheduler, or None when the scheduler cannot say."""
        try:
            scheduler = self.crawler.engine.scheduler
            return len(scheduler) if scheduler is not None else None  # type: ignore[arg-type]
        except (RuntimeError, TypeError):  # no engine yet, or a scheduler without __len__
            return None

    def progress_line(self) -> str:
        stats = self.stats.get_stats()
        items = " ".join(
            f"{kind}={stats.get(f'item_scraped_count/{kind}', 0)}" for kind in ITEM_TYPES
        )
        parse_errors = sum(v for k, v in stats.items() if k.startswith("parse/errors/"))
        download_errors = stats.get("downloader/exception_count", 0)
        waiting = self.waiting_requests()
        backlog = f", {waiting} requests waiting" if waiting is not None else ""
        return (
            f"Progress: {self.pages} pages ({self.prate:.0f}/min), items {items}, "
            f"errors parse={parse_errors} download={download_errors}{backlog}"
            f"{learned_rates(stats)}"
        )

    def log(self, spider: Spider) -> None:
        self.calculate_stats()
        logger.info(self.progress_line(), extra={"spider": spider})


def learned_rates(stats: dict[str, Any]) -> str:
    """``", rate medium.com=4.2/s"``: the learned rate of each host that has one."""
    rates = [
        f"{key.removeprefix(LEARNED_RATE_STAT)}={value:g}/s"
        for key, value in sorted(stats.items())
        if key.startswith(LEARNED_RATE_STAT) and value
    ]
    return ", rate " + " ".join(rates) if rates else ""
