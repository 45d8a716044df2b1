"""Write the crawl's final stats as JSON to ``STATS_FILE`` when the spider closes.

For schedulers and scripts that want the numbers of a finished crawl (items
per type, parse errors, failures) without scraping the log. A file that cannot be
written (a full disk) is one error line; the crawl's data and its exit status do not
depend on it (Scrapy dumps the same stats into the log).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Self

from scrapy import Spider, signals
from scrapy.exceptions import NotConfigured

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


class StatsFile:
    """Dump ``crawler.stats`` to a JSON file at close (datetimes as ISO strings)."""

    def __init__(self, stats: StatsCollector, path: Path) -> None:
        self.stats = stats
        self.path = path

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        path = crawler.settings.get("STATS_FILE")
        if not path:
            raise NotConfigured  # off by default: no log line for the normal case
        extension = cls(crawler.stats, Path(path))
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_closed(self, spider: Spider, reason: str) -> None:
        data = {**self.stats.get_stats(), "finish_reason": reason}
        text = json.dumps(data, indent=2, sort_keys=True, default=_json_default)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            logger.error(
                "Stats not written to %s: %s (the crawl's data does not depend on them)",
                self.path,
                exc.strerror or exc,
            )
            return
        logger.info("Stats written to %s", self.path)


def _json_default(value: object) -> str:
    isoformat = getattr(value, "isoformat", None)
    return isoformat() if callable(isoformat) else str(value)
