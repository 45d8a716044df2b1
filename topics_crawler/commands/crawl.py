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
a crawl that cannot start says why in one line and exits with status 1; one with nothing
to do (a distributed crawl that has finished) says so in one line and exits with 0.

Each such line is also written to ``LOG_FILE`` when one is set, as a log record: the log
of a Scrapyd job that could not start holds why (:mod:`topics_crawler.commands.refusal`).
A mirror (``MEDIUM_BASE_URL``) that does not accept a connection is one line naming it
(:func:`topics_crawler.middlewares.mirror.mirror_not_answering`), exit status 1, before
anything starts.

A Parquet feed given with ``-o`` (append) whose file already holds data is refused
the same way, with a line suggesting ``-O``: a Parquet file cannot be appended to,
and finding out at the end of the crawl would lose what it scraped. So is a CSV or
Parquet feed that would mix item types, with a line naming the per-type form
(``-O 'out/%(item_type)s.csv:csv'``, expanded here into one feed per item type:
:mod:`topics_crawler.output.per_type`).

Once the crawl is over it prints the run's last lines on stderr, whatever the log settings
(:mod:`topics_crawler.extensions.closing`: what was written where, the verdict and its exit
status, how to resume an interrupted run), and its final stats decide the exit status
(:func:`topics_crawler.errors.exit_code`, README "Exit codes"): 1 when a write failed
(stat ``write_failed``, see :func:`topics_crawler.errors.record_write_failure`), 3 when
the site refused the crawl for good (a Cloudflare WAF refusal of plain HTTP and of the
browser: stat ``refused_by_site``, set by :mod:`topics_crawler.middlewares.refused`), 1
when its health checks failed
(stat ``health/failed``, set by :class:`topics_crawler.extensions.health.CrawlHealth`) or
it closed for a reason other than ``finished`` or a ``closespider_*`` limit
(``redis_lost``, ``shutdown``…); else 0, "nothing new" included.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError
from scrapy.spiderloader import get_spider_loader
from scrapy.utils.misc import load_object

from topics_crawler.commands.quiet_start import startup_lists_at_debug
from topics_crawler.commands.refusal import (
    Refusal,
    command_name,
    command_says,
    console_line,
    log_to_file,
    scrapyd_job,
)
from topics_crawler.commands.settings_check import settings_error
from topics_crawler.errors import (
    CrawlNotStarted,
    ExitCode,
    NothingToDo,
    describe_failure,
    exit_code,
)
from topics_crawler.extensions.closing import closing_lines
from topics_crawler.extensions.summary import NO_OUTPUT_WARNING, has_output
from topics_crawler.middlewares.mirror import mirror_not_answering
from topics_crawler.output.exporters import ParquetItemExporter
from topics_crawler.output.feeds import local_feed_path
from topics_crawler.output.per_type import (
    expand_feeds,
    expand_per_type_feeds,
    feed_exporters,
    mixed_feed_error,
)

if TYPE_CHECKING:
    import argparse

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

ARGUMENT_ERROR_EXIT = ExitCode.USAGE
CRAWL_FAILURE_EXIT = ExitCode.FAILED
#: What a crawl that could not start reports in one line (a full disk, an unwritable
#: file, an add-on's check): anything else is a bug, and keeps its traceback.
START_FAILURES = (CrawlNotStarted, OSError, sqlite3.Error)


def preflight_failure(settings: BaseSettings) -> CrawlNotStarted | None:
    """Why the enabled add-ons say the crawl cannot start (or has nothing to do:
    :class:`~topics_crawler.errors.NothingToDo`), or None. A check that could not write
    what it checks (a full disk, a read-only mount) says so in one line too."""
    for path, priority in settings.getdict("ADDONS").items():
        if priority is None:
            continue
        addon = load_object(path) if isinstance(path, str) else path
        check = getattr(addon, "preflight", None)
        if check is None:
            continue
        try:
            check(settings)
        except CrawlNotStarted as exc:
            return exc
        except START_FAILURES as exc:
            area = addon.__module__.split(".")[1] if "." in addon.__module__ else addon.__name__
            why = f"{describe_failure(exc)} (while the {area} add-on checked its files)"
            return CrawlNotStarted(why)
    return None


def log_file_error(settings: BaseSettings) -> str | None:
    """Why ``LOG_FILE`` cannot take a line (a full disk: every log record would fail with
    a traceback of its own), or None. Probed with a byte in a file of its own."""
    log_file = settings.get("LOG_FILE")
    if not log_file:
        return None
    folder = Path(str(log_file)).expanduser().absolute().parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder) as probe:
            probe.write(b"\n")
            probe.flush()
            os.fsync(probe.fileno())
    except OSError as exc:
        return f"LOG_FILE {log_file}: {exc.strerror or exc}"
    return None


def feed_append_error(settings: BaseSettings) -> str | None:
    """Why an appending (``-o``) feed cannot be written: a non-empty Parquet file (of a
    ``%(item_type)s`` feed: any of its files)."""
    exporters = feed_exporters(settings)
    for uri, options in settings.getdict("FEEDS").items():
        if options.get("overwrite"):
            continue
        cls = exporters.get(options.get("format", ""))
        if not (isinstance(cls, type) and issubclass(cls, ParquetItemExporter)):
            continue
        for target in expand_feeds({uri: options}, exporters):
            path = local_feed_path(target)
            if path is not None and path.is_file() and path.stat().st_size > 0:
                replace = shlex.quote(f"{uri}:{options['format']}")
                return (
                    f"{path} already holds data and a Parquet file cannot be appended to: "
                    f"use -O {replace} to replace it, or another file name"
                )
    return None


def crawl_exit_code(crawler: Crawler) -> ExitCode:
    """The exit status of the finished crawl (:func:`topics_crawler.errors.exit_code`)."""
    return exit_code(crawler.stats.get_stats()) if crawler.stats is not None else ExitCode.DONE


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


def start_failure(task: asyncio.Future[Any]) -> list[str]:
    """``[why]`` when the crawl ``task`` failed to start for a reason that takes one line;
    any other error is logged with its traceback. Either way the error is retrieved, so
    asyncio never adds its own "Task exception was never retrieved"."""
    if task.cancelled() or task.exception() is None:
        return []
    error = task.exception()
    if isinstance(error, START_FAILURES):
        return [describe_failure(error)]
    logger.error("The crawl failed to start", exc_info=error)
    return []


def refuse(spider: str | None, why: str, status: int = ARGUMENT_ERROR_EXIT) -> NoReturn:
    """Stop with one line (an error, or, with ``status`` 0, that there is nothing to do)
    and ``status``, before any crawl machinery starts: :meth:`Command.process_options`
    prints it on stderr and writes it to ``LOG_FILE`` (:mod:`topics_crawler.commands.refusal`)."""
    raise Refusal(command_says(spider, why, "error" if status != ExitCode.DONE else None), status)


class Command(ScrapyCrawlCommand):
    #: Whether Scrapyd runs this crawl (a ``_job`` spider argument): read with the options.
    under_scrapyd = False

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        """Read the options and check them (:meth:`check_options`); a refusal is one line on
        stderr and in ``LOG_FILE``, and the exit status."""
        self.under_scrapyd = scrapyd_job(opts.spargs) is not None  # -a as given, read or not
        try:
            self.check_options(args, opts)
        except Refusal as refusal:
            self.say(refusal.line, refusal.status)
            raise SystemExit(refusal.status) from None

    def say(self, line: str, status: int = CRAWL_FAILURE_EXIT) -> None:
        """One line on stderr, and in ``LOG_FILE`` when set (an error unless ``status`` 0)."""
        print(console_line(line, self.under_scrapyd), file=sys.stderr, flush=True)
        if self.settings is not None:
            log_to_file(self.settings, line, logging.INFO if status == 0 else logging.ERROR)

    def check_options(self, args: list[str], opts: argparse.Namespace) -> None:
        try:
            super().process_options(args, opts)  # -a / -s / -o syntax
        except UsageError as exc:
            refuse(None, str(exc))
        if len(args) != 1:
            refuse(None, f"name one spider, e.g. {command_name(None)} topics -a tags=ai")
        spider = args[0]
        assert self.settings is not None
        error = spider_argument_error(spider, opts.spargs, self.settings)
        if error is not None:
            refuse(spider, error)
        feed_error = mixed_feed_error(self.settings) or feed_append_error(self.settings)
        if feed_error is not None:
            refuse(spider, feed_error)
        expand_per_type_feeds(self.settings, "cmdline")  # the files each check and add-on sees
        bad_setting = settings_error(self.settings)
        if bad_setting is not None:
            refuse(spider, bad_setting)
        not_started = preflight_failure(self.settings)
        if isinstance(not_started, NothingToDo):
            refuse(spider, str(not_started), ExitCode.DONE)
        why = not_started or log_file_error(self.settings) or mirror_not_answering(self.settings)
        if why is not None:
            refuse(spider, f"crawl not started: {why}", CRAWL_FAILURE_EXIT)
        if self.settings.get("LOG_FILE") and not has_output(self.settings):
            # the log says so too, but a log file is not what the person at the terminal reads
            print(command_says(spider, NO_OUTPUT_WARNING, "warning"), file=sys.stderr)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        """Scrapy's crawl, through the public ``CrawlerProcess`` API, keeping the crawler.

        The crawler is kept to read its verdict once the crawl is over; Scrapy's start-up
        lists are logged at DEBUG (:mod:`topics_crawler.commands.quiet_start`). (Scrapy's own
        ``run`` also warns when ``-o`` is given with the feed exporter disabled; this
        project always enables it.)
        """
        assert self.crawler_process is not None
        with startup_lists_at_debug():
            crawler = self.crawler_process.create_crawler(args[0])
            started = self.crawler_process.crawl(crawler, **opts.spargs)
            not_started: list[str] = []
            if isinstance(started, asyncio.Future):
                started.add_done_callback(lambda task: not_started.extend(start_failure(task)))
            self.crawler_process.start()
        for reason in not_started:
            self.say(command_says(args[0], f"crawl not started: {reason}"))
        if self.crawler_process.bootstrap_failed:
            self.exitcode = CRAWL_FAILURE_EXIT
        else:
            self.exitcode = crawl_exit_code(crawler)
            if not not_started:
                print_closing_lines(crawler, self.under_scrapyd)


def print_closing_lines(crawler: Crawler, under_scrapyd: bool = False) -> None:
    """The run's last lines on stderr (:mod:`topics_crawler.extensions.closing`), unless
    ``SUMMARY_ENABLED`` is off or the crawl never opened; braces doubled under Scrapyd
    (:func:`~topics_crawler.commands.refusal.console_line`)."""
    stats = crawler.stats.get_stats() if crawler.stats is not None else {}
    if not stats.get("start_time") or not crawler.settings.getbool("SUMMARY_ENABLED"):
        return
    lines = closing_lines(stats, crawler.settings)
    sys.stderr.write("\n".join(console_line(line, under_scrapyd) for line in lines) + "\n")
    sys.stderr.flush()
