"""The exception for a crawl that cannot start, and the helper add-ons check it with."""

from __future__ import annotations

import logging
from collections.abc import Callable

from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)


class CrawlNotStarted(Exception):
    """The crawl cannot start as configured (an unwritable ``DATASET_DIR``, Redis not
    answering, a resume that would overwrite output…); the message says why and what
    to do. Add-ons raise it from ``preflight(settings)``, which ``scrapy crawl`` runs
    before anything starts."""


def check_or_log(check: Callable[[BaseSettings], None], settings: BaseSettings) -> None:
    """Run an add-on's ``preflight`` check inside ``update_settings``.

    ``scrapy crawl`` has already run it (one line, exit 1); other ways to start a
    crawl (Scrapyd, ``runspider``, a script) reach this point: the reason is
    logged as ``Crawl not started: …`` and the exception stops the crawl.
    """
    try:
        check(settings)
    except CrawlNotStarted as exc:
        logger.error("Crawl not started: %s", exc)
        raise
