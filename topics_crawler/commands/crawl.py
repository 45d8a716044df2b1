"""``scrapy crawl`` that rejects bad spider arguments with one line and exit status 2.

Spiders may define a ``check_arguments(**spider_args)`` class method raising
``ValueError``; it runs while the command line is read, before the crawler
process exists, so a typo in ``-a`` (or in the spider name) prints one error
line — no traceback, no Scrapy start-up banner — and never half-starts a crawl.

Add-ons with a ``preflight(settings)`` check (dataset directory writable, Redis
answering, a resume that would not overwrite output) run it at the same point:
a crawl that cannot start says why in one line and exits with status 1.

A crawl where a write failed (stat ``write_failed``, see
:func:`topics_crawler.errors.record_write_failure`), whose health checks failed (stat
``health/failed``, set by :class:`topics_crawler.extensions.health.CrawlHealth`), or that
closed for a reason other than ``finished`` or a ``closespider_*`` limit (``redis_lost``,
``shutdown``…), exits with status 1.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, NoReturn

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError
from scrapy.spiderloader import get_spider_loader
from scrapy.utils.misc import load_object

from topics_crawler.errors import WRITE_FAILED_STAT, CrawlNotStarted
from topics_crawler.extensions.health import HEALTH_FAILED_STAT

if TYPE_CHECKING:
    import argparse

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

ARGUMENT_ERROR_EXIT = 2
CRAWL_FAILURE_EXIT = 1


def preflight_error(settings: BaseSettings) -> str | None:
    """Why the enabled add-ons say the crawl cannot start, or None."""
    for path, priority in settings.getdict("ADDONS").items():
        if priority is None:
            continue
        check = getattr(load_object(path) if isinstance(path, str) else path, "preflight", None)
        if check is None:
            continue
        try:
            check(settings)
        except CrawlNotStarted as exc:
            return str(exc)
    return None


def crawl_failed(crawler: Crawler) -> bool:
    """True when the crawl's health checks failed or it closed for a failure reason."""
    stats = crawler.stats
    if stats is None:
        return False
    if stats.get_value(HEALTH_FAILED_STAT) or stats.get_value(WRITE_FAILED_STAT):
        return True
    reason = str(stats.get_value("finish_reason") or "finished")
    return reason != "finished" and not reason.startswith("closespider_")


def spider_argument_error(
    name: str, spider_args: dict[str, Any], settings: BaseSettings
) -> str | None:
    """Why ``scrapy crawl <name> -a …`` cannot start (unknown spider, bad ``-a``), or None."""
    loader = get_spider_loader(settings)
    try:
        spider_cls = loader.load(name)
    except KeyError:
        available = ", ".join(sorted(loader.list())) or "none"
        return f"no spider named {name!r} (available: {available})"
    check = getattr(spider_cls, "check_arguments", None)
    if check is None:
        return None
    try:
        check(**spider_args)
    except ValueError as exc:
        return str(exc)
    return None


def refuse(line: str, status: int = ARGUMENT_ERROR_EXIT) -> NoReturn:
    """Print one error line and exit, before any crawl machinery starts."""
    print(line, file=sys.stderr)
    raise SystemExit(status)


class Command(ScrapyCrawlCommand):
    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        try:
            super().process_options(args, opts)  # -a / -s / -o syntax
        except UsageError as exc:
            refuse(f"scrapy crawl: error: {exc}")
        if len(args) != 1:
            refuse("scrapy crawl: error: name one spider, e.g. scrapy crawl topics -a tags=ai")
        assert self.settings is not None
        error = spider_argument_error(args[0], opts.spargs, self.settings)
        if error is not None:
            refuse(f"scrapy crawl {args[0]}: error: {error}")
        not_started = preflight_error(self.settings)
        if not_started is not None:
            refuse(f"scrapy crawl {args[0]}: error: crawl not started: {not_started}", 1)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        self._crawlers: list[Crawler] = []
        super().run(args, opts)
        if self.exitcode == 0 and any(crawl_failed(c) for c in self._crawlers):
            self.exitcode = CRAWL_FAILURE_EXIT

    def _create_crawler(self, spidercls: type[Spider] | str) -> Crawler:
        crawler = super()._create_crawler(spidercls)
        self._crawlers.append(crawler)  # kept to read its verdict after the crawl
        return crawler
