"""Scrapy's start-up lists at DEBUG: the enabled add-ons, extensions, middlewares and
pipelines and the overridden settings (about 70 lines) are what a developer reads when
something is wrong, not what a person running a crawl needs first. ``-s LOG_LEVEL=DEBUG``
shows them again, word for word; nothing else Scrapy logs changes.

:func:`startup_lists_at_debug` puts :class:`StartupListsAtDebug` on the loggers that write
them for the length of a crawl command (the same logging filter, as the stats dump moved to
DEBUG: :mod:`topics_crawler.extensions.stats_file`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

#: Logger → the start of each start-up list's message (its format string, as Scrapy logs it).
STARTUP_LISTS = {
    "scrapy.addons": ("Enabled addons:",),
    "scrapy.middleware": ("Enabled %(componentname)s",),
    "scrapy.crawler": ("Overridden settings:",),
}


class StartupListsAtDebug(logging.Filter):
    """Turns an INFO start-up list record into a DEBUG one (then the handlers' level decides)."""

    def __init__(self, starts: tuple[str, ...]) -> None:
        super().__init__()
        self.starts = starts

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.INFO and str(record.msg).startswith(self.starts):
            record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return True


@contextmanager
def startup_lists_at_debug() -> Iterator[None]:
    """Scrapy's start-up lists logged at DEBUG while the ``with`` block runs."""
    installed = [
        (logging.getLogger(name), StartupListsAtDebug(starts))
        for name, starts in STARTUP_LISTS.items()
    ]
    for logger, quiet in installed:
        logger.addFilter(quiet)
    try:
        yield
    finally:
        for logger, quiet in installed:
            logger.removeFilter(quiet)
