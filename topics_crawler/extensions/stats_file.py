"""The crawl's final stats: logged at DEBUG, and written as JSON to ``STATS_FILE`` when set.

Scrapy's own dump of every stat at INFO (~90 lines that buried the verdict) is off
(``STATS_DUMP = False`` in settings.py); this extension logs the same dump at DEBUG
(``-s LOG_LEVEL=DEBUG`` shows it) and, for schedulers and scripts that want the numbers of a
finished crawl (items per type, parse errors, failures) without scraping the log, writes it
to ``STATS_FILE``. A file that cannot be written (a full disk) is one error line; the
crawl's data and its exit status do not depend on it.
"""

from __future__ import annotations

import json
import logging
import pprint
from pathlib import Path
from typing import TYPE_CHECKING, Self

from scrapy import Spider, signals

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


class StatsFile:
    """Dump ``crawler.stats`` to a JSON file at close (datetimes as ISO strings)."""

    def __init__(self, stats: StatsCollector, path: Path | None) -> None:
        self.stats = stats
        self.path = path

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        path = crawler.settings.get("STATS_FILE")
        assert crawler.stats is not None
        extension = cls(crawler.stats, Path(path) if path else None)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_closed(self, spider: Spider, reason: str) -> None:
        data = {**self.stats.get_stats(), "finish_reason": reason}
        logger.debug("Dumping Scrapy stats:\n%s", pprint.pformat(data))
        if self.path is None:
            return
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
