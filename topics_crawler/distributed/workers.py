"""When a worker of a distributed crawl may stop, and who clears the crawl at the end.

A worker whose engine is idle does not stop while the shared queue holds
requests or another worker is busy (it may still add requests). It stops once
the queue has stayed empty with every worker idle for ``DISTRIBUTED_IDLE_CLOSE``
seconds. Each worker keeps a key ``<prefix>:worker:<host>:<pid>`` (``busy`` /
``idle``) alive with a heartbeat; a killed worker's key expires, so it never
holds the others open. The last worker to leave a finished crawl deletes the
queue, the seen-set and the item state; a worker stopped any other way (Ctrl-C,
lost Redis) leaves them, and starting workers again resumes the crawl.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from contextlib import suppress
from typing import Self

import redis
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider, NotConfigured
from scrapy.utils.asyncio import create_looping_call

from topics_crawler.distributed.connection import REDIS_DOWN_ERRORS, RedisKeys, redis_client

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 1.0
#: A worker not heard of for this long is gone (killed, machine lost).
WORKER_TTL_SECONDS = 15
BUSY, IDLE = "busy", "idle"


def worker_id() -> str:
    """``<host>:<pid>``: unique among live workers."""
    return f"{socket.gethostname()}:{os.getpid()}"


class WorkerCoordinator:
    """Keeps an idle worker open while the shared crawl goes on; the last one out cleans up."""

    def __init__(self, crawler: Crawler, server: redis.Redis, idle_close: float) -> None:
        self.crawler = crawler
        self.server = server
        self.keys = RedisKeys.from_settings(crawler.settings)
        self.idle_close = idle_close
        self.worker = worker_id()
        self._idle_since: float | None = None
        self._heartbeat = create_looping_call(self._beat)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        if not settings.get("REDIS_URL"):
            raise NotConfigured("REDIS_URL is not set")
        coordinator = cls(
            crawler, redis_client(settings), settings.getfloat("DISTRIBUTED_IDLE_CLOSE", 5.0)
        )
        crawler.signals.connect(coordinator.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(coordinator.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(coordinator.spider_closed, signal=signals.spider_closed)
        return coordinator

    def spider_opened(self, spider: Spider) -> None:
        self._announce(BUSY)
        self._heartbeat.start(HEARTBEAT_SECONDS, now=False)
        logger.info("Distributed worker %s joined (Redis keys %s:*)", self.worker, self.keys.prefix)

    def spider_idle(self, spider: Spider) -> None:
        """Raise DontCloseSpider until the crawl is over for every worker."""
        self._announce(IDLE)
        try:
            crawl_active = self._queued() or self._others_busy()
        except REDIS_DOWN_ERRORS:
            return  # the scheduler has already stopped the worker
        if crawl_active:
            self._idle_since = None
            raise DontCloseSpider
        now = time.monotonic()
        if self._idle_since is None:
            self._idle_since = now
        if now - self._idle_since < self.idle_close:
            raise DontCloseSpider
        logger.info(
            "Shared queue empty and every worker idle for %.0f s: worker %s stops",
            now - self._idle_since,
            self.worker,
        )

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self._heartbeat.running:
            self._heartbeat.stop()
        try:
            last = self._leave()
            if last and reason == "finished":
                self.server.delete(*self.keys.crawl_keys())
                logger.info("Last worker of a finished crawl: cleared %s:*", self.keys.prefix)
        except REDIS_DOWN_ERRORS as exc:
            logger.warning("Could not deregister worker %s from Redis: %s", self.worker, exc)

    # --- Redis ---------------------------------------------------------------------

    def _beat(self) -> None:
        engine = self.crawler.engine
        busy = engine is not None and not engine.spider_is_idle()
        self._announce(BUSY if busy else IDLE)

    def _announce(self, state: str) -> None:
        with suppress(*REDIS_DOWN_ERRORS):  # reported once, by the scheduler
            self.server.set(self.keys.worker(self.worker), state, ex=WORKER_TTL_SECONDS)

    def _queued(self) -> bool:
        return bool(self.server.exists(self.keys.requests))

    def _others_busy(self) -> bool:
        mine = self.keys.worker(self.worker)
        others = [k for k in self.server.scan_iter(self.keys.workers_pattern) if k.decode() != mine]
        states = self.server.mget(others) if others else []
        return any(state == BUSY.encode() for state in states)

    def _leave(self) -> bool:
        """Deregister; True when no other worker is registered (atomically, so one is last)."""
        with self.server.pipeline(transaction=True) as pipe:
            pipe.delete(self.keys.worker(self.worker))
            pipe.keys(self.keys.workers_pattern)
            _, remaining = pipe.execute()
        return not remaining
