"""Resume add-on: with ``JOBDIR``, a crawl killed at any moment (even SIGKILL) resumes exactly.

    scrapy crawl topics -a tags=llm -s JOBDIR=crawls/llm-1 -o items.jsonl   # killed mid-way
    scrapy crawl topics -a tags=llm -s JOBDIR=crawls/llm-1 -o items.jsonl   # finishes the job

Replaces Scrapy's ``JOBDIR`` scheduler (consistent only after a clean stop) by
:class:`~topics_crawler.resume.scheduler.JournalScheduler`, marks pages done with
:class:`~topics_crawler.resume.tracker.DonePages` and keeps the dedupe state in the
same journal (see :mod:`topics_crawler.resume`). Off without ``JOBDIR`` and with
``REDIS_URL`` (Redis holds the crawl then).
"""

from __future__ import annotations

import logging

from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings

from topics_crawler.errors import CrawlNotStarted, check_or_log
from topics_crawler.resume.journal import CrawlJournal

logger = logging.getLogger(__name__)

SCHEDULER = "topics_crawler.resume.scheduler.JournalScheduler"
DEDUPE_STATE = "topics_crawler.resume.journal.JournalDedupeState"
TRACKER = "topics_crawler.resume.tracker.DonePages"
SPIDER_STATE = "scrapy.extensions.spiderstate.SpiderState"
#: Outermost spider middleware: it must see the callback's final output.
TRACKER_PRIORITY = 1


class ResumeError(CrawlNotStarted, ValueError):
    """The crawl cannot be resumed as configured; the message says why."""


class CrashSafeResume:
    """Scrapy add-on (``ADDONS``) behind ``JOBDIR``."""

    @classmethod
    def preflight(cls, settings: BaseSettings) -> None:
        """Raise :class:`ResumeError` when resuming ``JOBDIR`` would overwrite output, and
        :class:`~topics_crawler.errors.CrawlNotStarted` when its journal cannot be
        written (a full disk): opened here, before anything starts."""
        jobdir = settings.get("JOBDIR")
        if not jobdir or settings.get("REDIS_URL"):
            return
        if CrawlJournal.check(jobdir):  # an earlier run's journal: this is a resume
            cls._check_feeds_append(settings)

    def update_settings(self, settings: BaseSettings) -> None:
        if not settings.get("JOBDIR") or settings.get("REDIS_URL"):
            raise NotConfigured
        check_or_log(self.preflight, settings)
        settings.set("SCHEDULER", SCHEDULER, priority="addon")
        # The journal is the job's state; Scrapy's spider.state pickle in JOBDIR is not
        # crash-safe (cut short by a full disk, it breaks the resume), and unused here.
        settings["EXTENSIONS"].set(SPIDER_STATE, None, priority="addon")
        if not settings.get("DATASET_DIR"):  # a dataset's stage holds the dedupe state then
            settings.set("DEDUPE_STATE_CLASS", DEDUPE_STATE, priority="addon")
        settings["SPIDER_MIDDLEWARES"].set(TRACKER, TRACKER_PRIORITY, priority="addon")

    @staticmethod
    def _check_feeds_append(settings: BaseSettings) -> None:
        """A resumed crawl must not overwrite what the interrupted run exported."""
        default = settings.getbool("FEED_URI_PARAMS_OVERWRITE", False)
        for uri, options in settings.getdict("FEEDS").items():
            if options.get("overwrite", default):
                raise ResumeError(
                    f"resuming {settings['JOBDIR']} would overwrite {uri}; "
                    "append to it instead (-o, not -O)"
                )
