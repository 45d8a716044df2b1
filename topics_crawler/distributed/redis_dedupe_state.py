"""Item dedupe state in Redis, shared by the workers of a distributed crawl.

Same interface as :mod:`topics_crawler.pipelines.dedupe_state` (key → content hashes): one
Redis hash ``<prefix>:items``. A worker's arrival whose hash another worker has
already stored is dropped by the dedupe pipeline as ``unchanged``, so each
entity is exported once across workers. The hash lives as long as the crawl (the
last worker of a finished crawl deletes it); cross-run "only new or changed"
comes from the dataset merge. If Redis goes away the state answers "never seen"
(the worker is stopping; a duplicate is better than a lost item).

Each key a worker stores is also added to ``<prefix>:owned:<worker>`` until the
worker's next checkpoint (:mod:`.checkpoint`) has the item on disk: if the worker
dies first, the keys are forgotten with its leases, and the item is exported by
the worker that fetches its page again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Self

import redis
from scrapy.settings import BaseSettings

from topics_crawler.distributed.connection import REDIS_DOWN_ERRORS, RedisKeys, redis_client
from topics_crawler.distributed.workers import worker_id

logger = logging.getLogger(__name__)


class RedisDedupeState:
    """Key → content hashes in one Redis hash."""

    def __init__(self, server: redis.Redis, key: str, owned_key: str | None = None) -> None:
        self.server = server
        self.key = key
        self.owned_key = owned_key
        self._warned = False

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Self:
        keys = RedisKeys.from_settings(settings)
        return cls(redis_client(settings), keys.items, keys.owned(worker_id()))

    def get(self, key: str) -> frozenset[str]:
        try:
            value = self.server.hget(self.key, key)
        except REDIS_DOWN_ERRORS as exc:
            self._warn(exc)
            return frozenset()
        text = value.decode() if isinstance(value, bytes) else value
        return frozenset(text.split()) if text else frozenset()

    def put(self, key: str, hashes: Iterable[str]) -> None:
        try:
            with self.server.pipeline(transaction=True) as pipe:
                pipe.hset(self.key, key, " ".join(sorted(hashes)))
                if self.owned_key is not None:
                    pipe.sadd(self.owned_key, key)
                pipe.execute()
        except REDIS_DOWN_ERRORS as exc:
            self._warn(exc)

    def close(self) -> None:
        self.server.close()

    def __len__(self) -> int:
        return int(self.server.hlen(self.key))

    def _warn(self, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            logger.warning("Item dedupe state in Redis unavailable (%s): items pass unchecked", exc)
