"""The shared request queue and seen-set: scrapy-redis's scheduler, adapted.

:class:`RedisScheduler` keeps scrapy-redis's Redis queue classes and seen-set, and
changes three things:

* fingerprints come from the crawler's fingerprinter
  (:class:`~topics_crawler.scheduling.fingerprint.CanonicalUrlFingerprinter`), not scrapy-redis's
  own SHA1 of the URL, so the shared seen-set agrees with ``JOBDIR``, the HTTP cache
  and the dedupe of a single-process crawl;
* a lost Redis stops the worker with one error line (reason ``redis_lost``)
  instead of an error per request; what it exported stays as written;
* the queue is :class:`~topics_crawler.distributed.leases.LeasedPriorityQueue`:
  a request taken is leased to this worker until its page is on disk, and a new
  request is checked against the seen-set and queued in one step;
* on open it joins the crawl named by the crawl marker
  (:mod:`~topics_crawler.distributed.marker`) and cuts its feeds back to its last
  checkpoint (a worker started again after a kill).

Stats as Scrapy's scheduler keeps them, for this worker: ``scheduler/enqueued`` (requests
it added to the shared queue) and ``scheduler/dequeued`` (requests it took, whoever added
them), with ``/redis`` twins; a request the gate pushes back and takes again counts once.

It also avoids the calls scrapy-redis 0.9.1 makes that Scrapy 2.19 deprecates
(``spider=`` in stats calls, ``Spider.log``), so no warning needs filtering.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Self

import redis
from scrapy import Request, Spider
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.misc import load_object
from scrapy_redis import picklecompat
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.scheduler import Scheduler

from topics_crawler.distributed.connection import (
    REDIS_DOWN_ERRORS,
    RedisKeys,
    connect,
    redact,
)
from topics_crawler.distributed.leases import LeasedPriorityQueue
from topics_crawler.distributed.local_state import (
    cut_feeds_back,
    record_starting_sizes,
    remember_crawl,
    settle_finished,
    state_dir,
)
from topics_crawler.distributed.marker import FINISHED, finished_line, join_crawl
from topics_crawler.distributed.workers import worker_id
from topics_crawler.errors import NOTHING_TO_DO_STAT
from topics_crawler.output.feeds import local_feed_paths
from topics_crawler.scheduling.not_before import NotBeforeGate

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.utils.request import RequestFingerprinterProtocol

logger = logging.getLogger(__name__)

DEFAULT_QUEUE_CLASS = "topics_crawler.distributed.leases.LeasedPriorityQueue"
REDIS_LOST_REASON = "redis_lost"


class CanonicalRedisDupeFilter(RFPDupeFilter):
    """scrapy-redis's shared seen-set, keyed on the crawler's request fingerprints."""

    def __init__(
        self,
        server: redis.Redis,
        key: str,
        fingerprinter: RequestFingerprinterProtocol,
        debug: bool = False,
    ) -> None:
        super().__init__(server, key, debug)
        self.fingerprinter = fingerprinter

    def request_fingerprint(self, request: Request) -> str:
        return self.fingerprinter.fingerprint(request).hex()


class RedisScheduler(Scheduler):
    """Scheduler whose queue and seen-set live in Redis, shared by every worker."""

    crawler: Crawler
    redis_url: str
    """``REDIS_URL`` without its password, for log lines."""
    redis_lost: bool = False
    gate: NotBeforeGate
    crawl_id: str | None = None
    #: The crawl this worker would join has finished: it has nothing to do.
    finished: bool = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Connect (raises :class:`RedisUnavailableError` when Redis does not answer)."""
        settings = crawler.settings
        server = connect(settings)
        keys = RedisKeys.from_settings(settings)
        dupefilter = CanonicalRedisDupeFilter(
            server,
            keys.seen,
            crawler.request_fingerprinter,
            debug=settings.getbool("DUPEFILTER_DEBUG"),
        )
        scheduler = cls(
            server=server,
            persist=True,  # the last worker out clears the crawl (distributed.workers)
            queue_key=keys.requests,
            queue_cls=settings.get("SCHEDULER_QUEUE_CLASS") or DEFAULT_QUEUE_CLASS,
            dupefilter=dupefilter,
            serializer=picklecompat,
        )
        scheduler.crawler = crawler
        scheduler.stats = crawler.stats
        scheduler.redis_url = redact(settings["REDIS_URL"])
        #: Requests not due yet wait here, still leased to this worker in Redis.
        scheduler.gate = NotBeforeGate.from_crawler(crawler)
        return scheduler

    def open(self, spider: Spider) -> None:
        self.spider = spider
        settings = self.crawler.settings
        keys = RedisKeys.from_settings(settings)
        queue_cls = load_object(self.queue_cls)
        extra = {"keys": keys, "worker": worker_id()} if queue_cls is LeasedPriorityQueue else {}
        self.queue = queue_cls(
            server=self.server,
            spider=spider,
            key=self.queue_key,
            serializer=self.serializer,
            **extra,
        )
        folder = state_dir(settings)
        cut_feeds_back(folder, local_feed_paths(settings))
        restart = settings.getbool("DISTRIBUTED_RESTART")
        marker = self._call(partial(join_crawl, restart=restart), self.server, keys, default=None)
        if marker is not None and marker.endswith(FINISHED):
            self._nothing_to_do(finished_line(settings, marker.removesuffix(FINISHED)))
            return
        record_starting_sizes(settings)
        self.crawl_id = marker
        if self.crawl_id is not None:
            remember_crawl(folder, self.crawl_id)
        queued = self._call(len, self.queue, default=0)
        if queued:
            logger.info("Joining crawl %s with %d requests queued in Redis", self.crawl_id, queued)

    def _nothing_to_do(self, line: str) -> None:
        """The crawl has finished (the marker says so, as this worker starts): settle this
        worker's state, fetch nothing, close as soon as the engine asks."""
        settle_finished(self.crawler.settings)
        self.finished = True
        logger.info("%s", line)
        if self.stats is not None:
            self.stats.set_value(NOTHING_TO_DO_STAT, line)

    def close(self, reason: str) -> None:
        """Leave the shared state alone: other workers may still use it. Requests held
        for their not-before time go back to the queue (a push ends their lease)."""
        for request in self.gate.close():
            self._push_back(request)

    def enqueue_request(self, request: Request) -> bool:
        if self.finished:
            return False  # the crawl is over: not a request more into its queue
        fingerprint = "" if request.dont_filter else self.df.request_fingerprint(request)
        if isinstance(self.queue, LeasedPriorityQueue):
            queued = self._call(self.queue.push, request, fingerprint, default=None)
            if queued is None:
                return False  # Redis is gone
            if not queued:
                self._count("scheduler/filtered/redis")
                return False
        else:
            if fingerprint and self._call(self.df.request_seen, request, default=True):
                self._count("scheduler/filtered/redis")
                return False
            if self._call(self.queue.push, request, default=False) is False:
                return False
        self._count("scheduler/enqueued/redis")
        self._count("scheduler/enqueued")
        return True

    def next_request(self) -> Request | None:
        if self.finished:
            engine = self.crawler.engine
            if engine is not None and engine.running:
                deferred_from_coro(engine.close_spider_async(reason="finished"))
            return None
        request = self.gate.take(self._pop, self._push_back)
        if request is not None:
            self._count("scheduler/dequeued/redis")
            self._count("scheduler/dequeued")
        return request

    def _push_back(self, request: Request) -> None:
        """A request the gate cannot hold now goes back to the shared queue (the push
        ends its lease), for this or another worker to take: past the seen-set (it is in
        it), not counted as enqueued again, its ``dont_filter`` as it was."""
        if isinstance(self.queue, LeasedPriorityQueue):
            self._call(self.queue.push, request, "", default=None)
        else:
            self._call(self.queue.push, request, default=None)

    def _pop(self) -> Request | None:
        request: Request | None = self._call(self.queue.pop, default=None)
        return request

    def has_pending_requests(self) -> bool:
        if self.finished:
            return False
        return bool(self.gate) or bool(self._call(len, self.queue, default=0))

    def __len__(self) -> int:
        return len(self.gate) + int(self._call(len, self.queue, default=0))

    # --- a lost Redis -------------------------------------------------------------

    def _call(self, method: Callable[..., Any], *args: Any, default: Any) -> Any:
        """``method(*args)``; ``default`` (and the worker stops) when Redis is gone."""
        if self.redis_lost:
            return default
        try:
            return method(*args)
        except REDIS_DOWN_ERRORS as exc:
            self._stop_worker(exc)
            return default

    def _stop_worker(self, exc: Exception) -> None:
        self.redis_lost = True
        logger.error(
            "Lost Redis at %s (%s): stopping this worker. Items it exported are kept; "
            "requests still queued in Redis are picked up when workers are started again.",
            self.redis_url,
            exc,
        )
        self._count("distributed/redis_lost")
        engine = self.crawler.engine
        if engine is not None:
            deferred_from_coro(engine.close_spider_async(reason=REDIS_LOST_REASON))

    def _count(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)
