"""When a worker of a distributed crawl may stop, and who clears the crawl at the end.

A worker whose engine is idle does not stop while the shared queue holds
requests or another worker is busy (it may still add requests). It stops once
the queue has stayed empty with every worker idle for ``DISTRIBUTED_IDLE_CLOSE``
seconds. Each worker keeps a key ``<prefix>:worker:<host>:<pid>:<token>`` (``busy`` /
``idle``) alive with a heartbeat; a killed worker's key expires after
``DISTRIBUTED_WORKER_TIMEOUT`` seconds, and the next heartbeat of any live worker
puts the requests it had taken back in the queue
(:func:`~topics_crawler.distributed.leases.reclaim_dead_workers`) — until then
the dead worker's leases keep the crawl open. The heartbeat also watches the
crawl marker: if it vanishes (Redis restarted empty), the worker stops with one
line, reason ``redis_emptied``. The last worker to leave a finished crawl deletes
the queue, the seen-set and the item state and marks the crawl finished; a
worker stopped any other way (Ctrl-C, lost Redis) leaves them, and starting
workers again resumes the crawl.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from contextlib import suppress
from typing import Self

import redis
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider, NotConfigured
from scrapy.utils.asyncio import create_looping_call
from scrapy.utils.defer import deferred_from_coro

from topics_crawler.distributed.connection import (
    REDIS_DOWN_ERRORS,
    RedisKeys,
    redact,
    redis_client,
)
from topics_crawler.distributed.leases import reclaim_dead_workers
from topics_crawler.distributed.local_state import (
    forget_crawl,
    forget_feed_sizes,
    state_dir,
)
from topics_crawler.distributed.marker import (
    EMPTIED_REASON,
    FINISHED,
    mark_finished,
    marker_value,
)
from topics_crawler.output.feeds import local_feed_paths

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 1.0
#: A worker not heard of for this long is gone (killed, machine lost).
WORKER_TTL_SECONDS = 15.0
#: Heartbeats between two looks for dead workers' leases.
RECLAIM_EVERY = 2
BUSY, IDLE = "busy", "idle"


#: Drawn once per process: a restarted container keeps its host name and often its pid
#: (1), and must not be taken for the worker it replaces (whose leases it would drop).
_PROCESS_TOKEN = secrets.token_hex(4)


def worker_id() -> str:
    """``<host>:<pid>:<token>``: unique among workers, even across restarts."""
    return f"{socket.gethostname()}:{os.getpid()}:{_PROCESS_TOKEN}"


class WorkerCoordinator:
    """Keeps an idle worker open while the shared crawl goes on; the last one out cleans up."""

    def __init__(
        self,
        crawler: Crawler,
        server: redis.Redis,
        idle_close: float,
        worker_ttl: float = WORKER_TTL_SECONDS,
    ) -> None:
        self.crawler = crawler
        self.server = server
        self.keys = RedisKeys.from_settings(crawler.settings)
        self.idle_close = idle_close
        self.worker_ttl_ms = max(int(worker_ttl * 1000), 1000)
        self.worker = worker_id()
        self.crawl_id: str | None = None
        self.emptied = False
        self._beats = 0
        self._idle_since: float | None = None
        self._heartbeat = create_looping_call(self._beat)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        if not settings.get("REDIS_URL"):
            raise NotConfigured("REDIS_URL is not set")
        coordinator = cls(
            crawler,
            redis_client(settings),
            settings.getfloat("DISTRIBUTED_IDLE_CLOSE", 5.0),
            settings.getfloat("DISTRIBUTED_WORKER_TIMEOUT", WORKER_TTL_SECONDS),
        )
        crawler.signals.connect(coordinator.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(coordinator.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(coordinator.spider_closed, signal=signals.spider_closed)
        return coordinator

    def spider_opened(self, spider: Spider) -> None:
        with suppress(*REDIS_DOWN_ERRORS):  # the scheduler, opened first, joined the crawl
            self.crawl_id = marker_value(self.server, self.keys)
        self._announce(BUSY)
        self._heartbeat.start(HEARTBEAT_SECONDS, now=False)
        logger.info("Distributed worker %s joined (Redis keys %s:*)", self.worker, self.keys.prefix)

    def spider_idle(self, spider: Spider) -> None:
        """Raise DontCloseSpider until the crawl is over for every worker."""
        self._announce(IDLE)
        try:
            if self._crawl_emptied():
                return
            reclaim_dead_workers(self.server, self.keys)
            crawl_active = self._queued() or self._others_busy() or self._others_processing()
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
            if last and reason == "finished" and not self._was_finished():
                self.server.delete(*self.keys.crawl_keys())
                if self.crawl_id is not None:
                    mark_finished(self.server, self.keys, self.crawl_id)
                logger.info("Last worker of a finished crawl: cleared %s:*", self.keys.prefix)
        except REDIS_DOWN_ERRORS as exc:
            logger.warning("Could not deregister worker %s from Redis: %s", self.worker, exc)
        if reason == "finished":  # the crawl is over: nothing to resume on this machine
            settings = self.crawler.settings
            forget_crawl(state_dir(settings))
            forget_feed_sizes(state_dir(settings), local_feed_paths(settings))

    def _was_finished(self) -> bool:
        """The crawl had finished before this worker started (it had nothing to do)."""
        return self.crawl_id is not None and self.crawl_id.endswith(FINISHED)

    # --- Redis ---------------------------------------------------------------------

    def _beat(self) -> None:
        engine = self.crawler.engine
        busy = engine is not None and not engine.spider_is_idle()
        self._announce(BUSY if busy else IDLE)
        self._beats += 1
        with suppress(*REDIS_DOWN_ERRORS):  # reported once, by the scheduler
            if not self._crawl_emptied() and self._beats % RECLAIM_EVERY == 0:
                reclaim_dead_workers(self.server, self.keys)

    def _announce(self, state: str) -> None:
        with suppress(*REDIS_DOWN_ERRORS):  # reported once, by the scheduler
            self.server.set(self.keys.worker(self.worker), state, px=self.worker_ttl_ms)

    def _crawl_emptied(self) -> bool:
        """True (and the worker stops) when the crawl marker is gone: Redis came back empty."""
        if self.emptied or self.crawl_id is None:
            return self.emptied
        current = marker_value(self.server, self.keys)
        if current in (self.crawl_id, self.crawl_id + FINISHED):
            return False
        self.emptied = True
        url = redact(str(self.crawler.settings.get("REDIS_URL")))
        logger.error(
            "Redis at %s lost crawl %s (no crawl marker: it restarted empty): stopping this "
            "worker instead of starting the crawl over; what it exported is kept",
            url,
            self.crawl_id,
        )
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value("distributed/redis_emptied")
        engine = self.crawler.engine
        if engine is not None:
            deferred_from_coro(engine.close_spider_async(reason=EMPTIED_REASON))
        return True

    def _others_processing(self) -> bool:
        """Another worker (alive, or dead and not yet reclaimed) holds leases."""
        mine = self.keys.processing(self.worker)
        return any(
            key.decode() != mine for key in self.server.scan_iter(self.keys.processing_pattern)
        )

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
