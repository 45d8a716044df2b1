"""``scrapy crawl`` that rejects bad spider arguments with one line and exit status 2.

Spiders may define a ``check_arguments(**spider_args)`` class method raising
``ValueError``; it runs while the command line is read, before the crawler
process exists, so a typo in ``-a`` (or in the spider name) prints one error
line — no traceback, no Scrapy start-up banner — and never half-starts a crawl.

Every setting the project reads is checked the same way
(:mod:`topics_crawler.commands.settings_check`): ``-s RENDER_MODE=sometimes`` or an
unwritable ``JOBDIR`` is one error line and exit status 2.

Add-ons with a ``preflight(settings)`` check (dataset directory writable, Redis
answering, a resume that would not overwrite output) run it at the same point:
a crawl that cannot start says why in one line and exits with status 1.

A Parquet feed given with ``-o`` (append) whose file already holds data is refused
the same way, with a line suggesting ``-O``: a Parquet file cannot be appended to,
and finding out at the end of the crawl would lose what it scraped.

A crawl where a write failed (stat ``write_failed``, see
:func:`topics_crawler.errors.record_write_failure`), whose health checks failed (stat
``health/failed``, set by :class:`topics_crawler.extensions.health.CrawlHealth`), or that
closed for a reason other than ``finished`` or a ``closespider_*`` limit (``redis_lost``,
``shutdown``…), exits with status 1. A crawl the site refused for good (a Cloudflare WAF
refusal of plain HTTP and of the browser: stat ``refused_by_site``) exits with status 3.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import urlsplit

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError
from scrapy.spiderloader import get_spider_loader
from scrapy.utils.misc import load_object

from topics_crawler.commands.settings_check import settings_error
from topics_crawler.errors import REFUSED_STAT, WRITE_FAILED_STAT, CrawlNotStarted, ExitCode
from topics_crawler.extensions.health import HEALTH_FAILED_STAT
from topics_crawler.output.exporters import ParquetItemExporter

if TYPE_CHECKING:
    import argparse

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

ARGUMENT_ERROR_EXIT = ExitCode.USAGE
CRAWL_FAILURE_EXIT = ExitCode.FAILED


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


def local_feed_path(uri: str) -> Path | None:
    """The local file a feed URI names (plain path or ``file://``), None for other
    storages and for URIs with ``%(name)s`` placeholders."""
    if "%(" in uri:
        return None
    parts = urlsplit(uri)
    if parts.scheme == "file":
        return Path(parts.path)
    if len(parts.scheme) <= 1:  # no scheme, or a Windows drive letter
        return Path(uri)
    return None


def feed_append_error(settings: BaseSettings) -> str | None:
    """Why an appending (``-o``) feed cannot be written: a non-empty Parquet file."""
    exporters = {**settings.getdict("FEED_EXPORTERS_BASE"), **settings.getdict("FEED_EXPORTERS")}
    for uri, options in settings.getdict("FEEDS").items():
        if options.get("overwrite"):
            continue
        exporter = exporters.get(options.get("format", ""))
        cls = load_object(exporter) if isinstance(exporter, str) else exporter
        if not (isinstance(cls, type) and issubclass(cls, ParquetItemExporter)):
            continue
        path = local_feed_path(str(uri))
        if path is not None and path.is_file() and path.stat().st_size > 0:
            return (
                f"{path} already holds data and a Parquet file cannot be appended to: "
                f"use -O {uri}:{options['format']} to replace it, or another file name"
            )
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


def crawl_refused(crawler: Crawler) -> bool:
    """True when the site refused the crawl for good (stat ``refused_by_site``, set by
    :mod:`topics_crawler.middlewares.refused`): nothing the crawler may do helps."""
    stats = crawler.stats
    return bool(stats is not None and stats.get_value(REFUSED_STAT))


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
        feed_error = feed_append_error(self.settings)
        if feed_error is not None:
            refuse(f"scrapy crawl {args[0]}: error: {feed_error}")
        bad_setting = settings_error(self.settings)
        if bad_setting is not None:
            refuse(f"scrapy crawl {args[0]}: error: {bad_setting}")
        not_started = preflight_error(self.settings)
        if not_started is not None:
            refuse(f"scrapy crawl {args[0]}: error: crawl not started: {not_started}", 1)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        """Scrapy's crawl, through the public ``CrawlerProcess`` API, keeping the crawler.

        The crawler is kept to read its verdict once the crawl is over. (Scrapy's own
        ``run`` also warns when ``-o`` is given with the feed exporter disabled; this
        project always enables it.)
        """
        assert self.crawler_process is not None
        crawler = self.crawler_process.create_crawler(args[0])
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        if crawl_refused(crawler):
            self.exitcode = ExitCode.REFUSED
        elif self.crawler_process.bootstrap_failed or crawl_failed(crawler):
            self.exitcode = CRAWL_FAILURE_EXIT
