"""``scrapy crawl`` that rejects bad spider arguments with one line and exit status 2.

Spiders may define a ``check_arguments(**spider_args)`` class method raising
``ValueError``; it runs before the crawler starts, so a typo in ``-a`` never
shows a traceback or half-starts a crawl.

A crawl whose health checks failed (stat ``health/failed``, set by
:class:`topics_crawler.extensions.health.CrawlHealth`) exits with status 1.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy.commands.crawl import Command as ScrapyCrawlCommand

from topics_crawler.extensions.health import HEALTH_FAILED_STAT

if TYPE_CHECKING:
    import argparse

    from scrapy import Spider
    from scrapy.crawler import Crawler

ARGUMENT_ERROR_EXIT = 2
HEALTH_FAILURE_EXIT = 1


class Command(ScrapyCrawlCommand):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) == 1 and self.crawler_process is not None:
            try:
                spider_cls = self.crawler_process.spider_loader.load(args[0])
            except KeyError:
                spider_cls = None  # the base command reports unknown spiders
            check = getattr(spider_cls, "check_arguments", None)
            if check is not None:
                try:
                    check(**opts.spargs)
                except ValueError as exc:
                    print(f"scrapy crawl {args[0]}: error: {exc}", file=sys.stderr)
                    self.exitcode = ARGUMENT_ERROR_EXIT
                    return
        self._crawlers: list[Crawler] = []
        super().run(args, opts)
        if self.exitcode == 0 and any(
            c.stats.get_value(HEALTH_FAILED_STAT) for c in self._crawlers
        ):
            self.exitcode = HEALTH_FAILURE_EXIT

    def _create_crawler(self, spidercls: type[Spider] | str) -> Crawler:
        crawler = super()._create_crawler(spidercls)
        self._crawlers.append(crawler)  # kept to read the health verdict after the crawl
        return crawler
