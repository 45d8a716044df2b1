"""Item dedupe state in Redis, shared by the workers of a distributed crawl.

Same interface as :mod:`topics_crawler.dedupe_state` (key → content hashes): one
Redis hash ``<prefix>:items``. A worker's arrival whose hash another worker has
already stored is dropped by the dedupe pipeline as ``unchanged``, so each
entity is exported once across workers. The hash lives as long as the crawl (the
last worker of a finished crawl deletes it); cross-run "only new or changed"
comes from the dataset merge. If Redis goes away the state answers "never seen"
(the worker is stopping; a duplicate is better than a lost item).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Self

import redis
from scrapy.settings import BaseSettings

from topics_crawler.distributed.connection import REDIS_DOWN_ERRORS, RedisKeys, redis_client

logger = logging.getLogger(__name__)


class RedisDedupeState:
    """Key → content hashes in one Redis hash."""

    def __init__(self, server: redis.Redis, key: str) -> None:
        self.server = server
        self.key = key
        self._warned = False

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Self:
        return cls(redis_client(settings), RedisKeys.from_settings(settings).items)

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
            self.server.hset(self.key, key, " ".join(sorted(hashes)))
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
