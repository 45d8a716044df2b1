"""How a crawl ends badly: the exit-code contract, the exception for a crawl that cannot start
(and the helper add-ons check it with), and the one way a failed write (feed, dataset,
journal) is reported and stops the crawl."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Mapping
from enum import IntEnum
from typing import TYPE_CHECKING, Any

from scrapy.settings import BaseSettings
from scrapy.utils.defer import deferred_from_coro

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


class ExitCode(IntEnum):
    """What a run's exit status means, for every command of the project (README "Exit codes").

    ``DONE`` includes "nothing new" (a feed run that found no new story, a resume that
    completes a killed job); ``FAILED`` is a run that did not do its job (data not written,
    a health check, drift); ``USAGE`` a bad argument or setting, refused before anything
    starts; ``REFUSED`` a site that refused the crawl where nothing the crawler may do helps
    (a Cloudflare WAF refusal of plain HTTP and of the browser): a proxy, Zyte API or another
    address is the user's to choose.
    """

    DONE = 0
    FAILED = 1
    USAGE = 2
    REFUSED = 3


#: Stat set when the site refused the crawl for good (see :attr:`ExitCode.REFUSED`).
REFUSED_STAT = "refused_by_site"
#: Stat listing the tags the user gave that do not exist (their tag page answered 404/410;
#: :mod:`topics_crawler.spiders._missing_tags`): the run did not do its job.
TAG_NOT_FOUND_STAT = "tags/not_found"
#: Stat set to True when a crawl health check failed
#: (:class:`topics_crawler.extensions.health.CrawlHealth`).
HEALTH_FAILED_STAT = "health/failed"


class CrawlNotStarted(Exception):
    """The crawl cannot start as configured (an unwritable ``DATASET_DIR``, Redis not
    answering, a resume that would overwrite output…); the message says why and what
    to do. Add-ons raise it from ``preflight(settings)``, which ``scrapy crawl`` runs
    before anything starts."""


class NothingToDo(CrawlNotStarted):
    """The crawl has nothing to do: the distributed crawl it would join has finished.
    ``scrapy crawl`` prints the message as its one line and exits 0
    (:attr:`ExitCode.DONE`); other ways to start the crawl log it, and the crawl closes
    at once without fetching (stat :data:`NOTHING_TO_DO_STAT`)."""


#: Stat holding why a crawl closed without doing anything (it had nothing to do).
NOTHING_TO_DO_STAT = "nothing_to_do"


def check_or_log(check: Callable[[BaseSettings], None], settings: BaseSettings) -> None:
    """Run an add-on's ``preflight`` check inside ``update_settings``.

    ``scrapy crawl`` has already run it (one line, exit 1); other ways to start a
    crawl (Scrapyd, ``runspider``, a script) reach this point: the reason is
    logged as ``Crawl not started: …`` and the exception stops the crawl.
    """
    try:
        check(settings)
    except NothingToDo as exc:
        logger.info("%s", exc)  # the crawl opens, sees the same and closes at once
    except CrawlNotStarted as exc:
        logger.error("Crawl not started: %s", exc)
        raise
    except (OSError, sqlite3.Error) as exc:  # the check could not write what it checks
        logger.error("Crawl not started: %s", describe_failure(exc))
        raise CrawlNotStarted(describe_failure(exc)) from exc


def describe_failure(error: BaseException) -> str:
    """``<file>: <cause>`` of a failed write (just the cause when no file is named)."""
    cause = getattr(error, "strerror", None) or str(error)
    filename = getattr(error, "filename", None)
    return f"{filename}: {cause}" if filename else cause


#: Stat set when a write the crawl's data depends on failed (feed, dataset, journal):
#: ``scrapy crawl`` then exits non-zero.
WRITE_FAILED_STAT = "write_failed"
WRITE_FAILED_REASON = "write_failed"
#: Stat holding the one line that explains why the crawl stopped (a failed write, the site's
#: refusal): the first one said is kept, for the summary at the end of the run.
STOPPED_LINE_STAT = "stopped/line"


def note_stop(stats: StatsCollector | None, line: str) -> None:
    """Keep ``line`` as the reason the crawl stopped, unless one is kept already."""
    if stats is not None and not stats.get_value(STOPPED_LINE_STAT):
        stats.set_value(STOPPED_LINE_STAT, line)


def exit_code(stats: Mapping[str, Any]) -> ExitCode:
    """The exit status a finished crawl's final stats call for (README "Exit codes").

    A failed write (the data is not where it should be) is :attr:`ExitCode.FAILED` first;
    then a site that refused the crawl (:attr:`ExitCode.REFUSED`); then a tag given that does
    not exist, a failed health check, or a close for another reason than ``finished`` or a
    ``closespider_*`` limit (``redis_lost``, ``shutdown``…): :attr:`ExitCode.FAILED`.
    Anything else did its job, "nothing new" included: :attr:`ExitCode.DONE`.
    """
    if stats.get(WRITE_FAILED_STAT):
        return ExitCode.FAILED
    if stats.get(REFUSED_STAT):
        return ExitCode.REFUSED
    if stats.get(TAG_NOT_FOUND_STAT) or stats.get(HEALTH_FAILED_STAT):
        return ExitCode.FAILED
    reason = str(stats.get("finish_reason") or "finished")
    if reason != "finished" and not reason.startswith("closespider_"):
        return ExitCode.FAILED
    return ExitCode.DONE


def record_write_failure(crawler: Crawler, what: str, line: str) -> None:
    """Log ``line`` (naming the file and the cause) once, count it and stop the crawl.

    ``what`` is ``feed``, ``dataset`` or ``journal`` (stat ``write_failed/<what>``).
    """
    stats = crawler.stats
    first = stats is None or not stats.get_value(WRITE_FAILED_STAT)
    if stats is not None:
        stats.inc_value(WRITE_FAILED_STAT)
        stats.inc_value(f"{WRITE_FAILED_STAT}/{what}")
    if not first:
        return
    logger.error("%s", line)
    note_stop(stats, line)
    stop_crawl(crawler)


def stop_crawl(crawler: Crawler) -> None:
    """Close the crawl (reason ``write_failed``) once its engine runs; a component that
    failed before (while the crawl opened) calls it again when the engine first asks."""
    engine = crawler.engine
    if engine is not None and engine.running:  # a second close waits for the first
        deferred_from_coro(engine.close_spider_async(reason=WRITE_FAILED_REASON))
