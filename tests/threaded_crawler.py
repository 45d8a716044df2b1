"""A crawler process on the session's reactor thread (:class:`ThreadedCrawlerProcess`) and the
logging a crawler process sets up around a crawl; see :mod:`tests.in_process`."""

from __future__ import annotations

import concurrent.futures
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from scrapy.crawler import AsyncCrawlerRunner, Crawler
from scrapy.settings import Settings
from scrapy.spiders import Spider
from scrapy.utils.log import TopLevelFormatter, log_scrapy_info
from scrapy.utils.misc import build_from_crawler, load_object

from tests.reactor_thread import in_reactor


class ThreadedCrawlerProcess(AsyncCrawlerRunner):
    """``AsyncCrawlerProcess``'s interface on the session's reactor thread.

    :meth:`crawl` starts a crawl in the reactor thread, :meth:`start` waits for all of
    them (the process's ``start`` runs the reactor until they are done), with the
    crawl's ``TWISTED_DNS_RESOLVER`` installed meanwhile.
    """

    def __init__(self, settings: Settings, timeout: float) -> None:
        super().__init__(settings)
        self.timeout = timeout
        self._started: list[concurrent.futures.Future[None]] = []

    def crawl(  # type: ignore[override]
        self, crawler_or_spidercls: type[Spider] | str | Crawler, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[None]:
        started = in_reactor(lambda: super(ThreadedCrawlerProcess, self).crawl(
            crawler_or_spidercls, *args, **kwargs
        ))  # fmt: skip
        self._started.append(started)
        return started

    def start(self, stop_after_crawl: bool = True, install_signal_handlers: bool = True) -> None:
        """Wait for the crawls (``timeout`` seconds at most, then stop them)."""
        done, pending = concurrent.futures.wait(self._started, timeout=self.timeout)
        if pending:
            in_reactor(self.stop).result(60)
            raise TimeoutError(f"in-process crawl still running after {self.timeout} s")
        for future in done:
            if future.exception() is not None:
                logging.getLogger(__name__).error("crawl failed", exc_info=future.exception())

    def install_resolver(self) -> Any:
        """Install ``TWISTED_DNS_RESOLVER`` on the reactor, as the process does; returns
        the name resolver it replaced. Call in the reactor thread."""
        from scrapy import resolver as scrapy_resolver
        from twisted.internet import reactor

        from topics_crawler.safety import resolver as safe_resolver

        scrapy_resolver.dnscache.clear()  # process-wide: a new process starts empty
        safe_resolver.REFUSED.clear()
        previous = reactor.nameResolver
        resolver_class = load_object(self.settings["TWISTED_DNS_RESOLVER"])
        resolver = build_from_crawler(resolver_class, self, reactor=reactor)  # type: ignore[call-overload]
        resolver.install_on_reactor()
        reactor.getThreadPool().adjustPoolsize(
            maxthreads=self.settings.getint("REACTOR_THREADPOOL_MAXSIZE")
        )
        return previous


@contextmanager
def crawl_logging(settings: Settings) -> Iterator[None]:
    """The root log handler a crawler process installs (``LOG_FILE``, ``LOG_LEVEL``,
    ``LOG_FORMAT``…), for the duration of the block; the root logger's level is the
    crawl's meanwhile."""
    filename = settings.get("LOG_FILE")
    handler: logging.Handler
    if filename:
        mode = "a" if settings.getbool("LOG_FILE_APPEND") else "w"
        handler = logging.FileHandler(filename, mode=mode, encoding=settings.get("LOG_ENCODING"))
    elif settings.getbool("LOG_ENABLED"):
        handler = logging.StreamHandler(sys.stderr)  # the command's (captured) stderr
    else:
        handler = logging.NullHandler()
    handler.setFormatter(
        logging.Formatter(fmt=settings.get("LOG_FORMAT"), datefmt=settings.get("LOG_DATEFORMAT"))
    )
    handler.setLevel(settings.get("LOG_LEVEL"))
    if settings.getbool("LOG_SHORT_NAMES"):
        handler.addFilter(TopLevelFormatter(["scrapy"]))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(handler.level)
    log_scrapy_info(settings)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        handler.close()


@contextmanager
def last_resort_logging() -> Iterator[None]:
    """What a new process does with a warning logged before Scrapy configures logging (the
    crawl command's checks): :data:`logging.lastResort`, the message alone on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
