"""Ends a worker's leases once what they stand for is on disk (see :mod:`.leases`).

A spider middleware (outermost, so it sees the final output of each callback)
counts, per lease, the items and requests a page's callback yields; the item
signals (exported, dropped, failed) and ``request_scheduled`` (the request is in
Redis) count them handled. A page whose callback has ended with everything
handled is *done*.

Every ``DISTRIBUTED_CHECKPOINT_INTERVAL`` seconds, when no item is between the
spider and the feeds, a checkpoint flushes the worker's feed files, records
their sizes on local disk (:mod:`.local_state`), then — in one Redis
transaction — ends the leases of the done pages and releases the item keys the
worker stored since the last checkpoint (they now stand for items on disk).
When the worker goes idle every lease it still holds is ended the same way:
nothing is in flight, so those pages failed for good (and are in
``failures.jsonl``). Killed between two checkpoints, the worker loses nothing:
its leases and item keys are given back (:func:`.leases.reclaim_dead_workers`)
and, started again with the same command, it cuts its feeds back to the last
checkpoint.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from scrapy import Request, signals
from scrapy.extensions.feedexport import FeedExporter, FileFeedStorage
from scrapy.http import Response
from scrapy.utils.asyncio import create_looping_call

from topics_crawler import settings as defaults
from topics_crawler.distributed.connection import REDIS_DOWN_ERRORS, RedisKeys, redis_client
from topics_crawler.distributed.leases import LEASE_META
from topics_crawler.distributed.local_state import record_feed_sizes, state_dir
from topics_crawler.distributed.workers import worker_id

if TYPE_CHECKING:
    import redis
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class LeaseCheckpoint:
    """Spider middleware tracking each lease's page, and the checkpoints that end leases."""

    def __init__(self, crawler: Crawler, server: redis.Redis, interval: float) -> None:
        self.crawler = crawler
        self.server = server
        self.keys = RedisKeys.from_settings(crawler.settings)
        self.worker = worker_id()
        self.folder = state_dir(crawler.settings)
        self.interval = interval
        self._open: dict[str, int] = {}
        """Lease → outputs of its page not yet handled."""
        self._callback_ended: set[str] = set()
        self._done: list[str] = []
        self._parents: dict[int, str] = {}
        """id() of each yielded request not yet scheduled → its page's lease."""
        self.items_in_flight = 0
        self._checkpoints = create_looping_call(self.checkpoint)
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(self.item_left, signal=signal)
        crawler.signals.connect(self.request_scheduled, signal=signals.request_scheduled)
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        interval = settings.getfloat(
            "DISTRIBUTED_CHECKPOINT_INTERVAL", defaults.DISTRIBUTED_CHECKPOINT_INTERVAL
        )
        return cls(crawler, redis_client(settings), interval)

    # --- counting ------------------------------------------------------------------------

    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterable[Any]:
        lease = self._lease(response)
        for output in result:
            self._count(lease, output)
            yield output
        self._callback_end(lease)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        lease = self._lease(response)
        async for output in result:
            self._count(lease, output)
            yield output
        self._callback_end(lease)

    def item_left(self, item: Any, response: Any = None, **kwargs: Any) -> None:
        lease = self._lease(response) if isinstance(response, Response) else None
        if lease is not None and lease in self._open:
            self.items_in_flight -= 1
            self._handled(lease)

    def request_scheduled(self, request: Request, **kwargs: Any) -> None:
        lease = self._parents.pop(id(request), None)
        if lease is not None:
            self._handled(lease)

    def _lease(self, response: Response | None) -> str | None:
        if response is None:
            return None
        lease = response.meta.get(LEASE_META)
        return str(lease) if lease is not None else None

    def _count(self, lease: str | None, output: Any) -> None:
        if lease is None:
            return
        self._open[lease] = self._open.get(lease, 0) + 1
        if isinstance(output, Request):
            self._parents[id(output)] = lease
        else:
            self.items_in_flight += 1

    def _callback_end(self, lease: str | None) -> None:
        if lease is None:
            return
        self._open.setdefault(lease, 0)
        self._callback_ended.add(lease)
        self._maybe_done(lease)

    def _handled(self, lease: str) -> None:
        self._open[lease] -= 1
        self._maybe_done(lease)

    def _maybe_done(self, lease: str) -> None:
        if lease in self._callback_ended and self._open.get(lease) == 0:
            self._callback_ended.discard(lease)
            del self._open[lease]
            self._done.append(lease)

    # --- checkpoints -------------------------------------------------------------------

    def spider_opened(self) -> None:
        self._checkpoints.start(self.interval, now=False)

    def spider_idle(self) -> None:
        """Nothing is in flight: end every lease this worker still holds."""
        self.checkpoint(end_all=True)

    def spider_closed(self, reason: str) -> None:
        if self._checkpoints.running:
            self._checkpoints.stop()
        self.checkpoint(end_all=reason == "finished")

    def checkpoint(self, end_all: bool = False) -> None:
        """Flush the feeds, record their sizes, then end done leases and release item keys."""
        if self.items_in_flight > 0 and not end_all:
            return
        record_feed_sizes(self.folder, self._flush_feeds())
        done, self._done = self._done, []
        try:
            with self.server.pipeline(transaction=True) as pipe:
                if end_all:
                    pipe.delete(self.keys.processing(self.worker))
                elif done:
                    pipe.hdel(self.keys.processing(self.worker), *done)
                pipe.delete(self.keys.owned(self.worker))
                pipe.execute()
        except REDIS_DOWN_ERRORS as exc:  # the scheduler reports a lost Redis once
            logger.debug("Checkpoint not written to Redis: %s", exc)
            self._done = done + self._done
            return
        if end_all:
            self._open.clear()
            self._callback_ended.clear()
            self.items_in_flight = 0
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value("distributed/checkpoints")
            self.crawler.stats.inc_value("distributed/leases_done", len(done))

    def _flush_feeds(self) -> dict[Path, int]:
        exporter = next(
            (e for e in self.crawler.extensions.middlewares if isinstance(e, FeedExporter)), None
        )
        sizes: dict[Path, int] = {}
        for slot in exporter.slots if exporter is not None else []:
            file = slot.file
            if isinstance(slot.storage, FileFeedStorage) and file is not None:
                file.flush()
                sizes[Path(slot.storage.path).absolute()] = os.fstat(file.fileno()).st_size
        return sizes
