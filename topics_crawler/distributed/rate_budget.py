"""The rate budget of each egress address in Redis, shared by every worker that uses it.

``<prefix>:rate:<egress>|<host>`` is a hash: ``tat`` (the GCRA "theoretical arrival
time": when the next send slot begins, on Redis's clock), ``rate`` (the address's
learned rate, once a rate limit taught one) and ``cut`` (when it was last lowered). One
Lua script per call, atomic: workers never race for a slot, and their clocks do not
matter (Redis's ``TIME`` is the only clock). The hash expires a day after its last use,
so a rate learned stays known to the next crawl from the same address.

See :mod:`topics_crawler.middlewares.rate_budget` for what the calls mean.
"""

from __future__ import annotations

from typing import Any, Self

import redis
from scrapy.crawler import Crawler

from topics_crawler.distributed.connection import RedisKeys, redis_client
from topics_crawler.middlewares.rate_budget import Grant

TTL_MS = 24 * 3600 * 1000

_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local shared = tonumber(redis.call('HGET', KEYS[1], 'rate') or '0')
local cut = tonumber(redis.call('HGET', KEYS[1], 'cut') or '0')
"""
_STATE = """
redis.call('PEXPIRE', KEYS[1], ARGV[#ARGV])
local age = -1
if cut > 0 then age = now - cut end
return {tostring(wait), tostring(shared), tostring(age)}
"""
# ARGV: caller's rate (0: none), ceiling (0: none), ttl ms.
_RESERVE = (
    _NOW
    + """
local rate = shared
if rate <= 0 then rate = tonumber(ARGV[1]) end
local ceiling = tonumber(ARGV[2])
if ceiling > 0 and (rate <= 0 or rate > ceiling) then rate = ceiling end
local wait = 0
if rate > 0 then
  local tat = tonumber(redis.call('HGET', KEYS[1], 'tat') or '0')
  if tat < now then tat = now end
  wait = tat - now
  redis.call('HSET', KEYS[1], 'tat', string.format('%.6f', tat + 1 / rate))
end
"""
    + _STATE
)
# ARGV: the lowered rate, seconds since the request was sent, ttl ms.
_LOWER = (
    _NOW
    + """
local wait = 0
if cut <= 0 or now - tonumber(ARGV[2]) >= cut then
  shared = tonumber(ARGV[1])
  cut = now
  redis.call('HSET', KEYS[1], 'rate', string.format('%.6f', shared))
  redis.call('HSET', KEYS[1], 'cut', string.format('%.6f', now))
end
"""
    + _STATE
)
# ARGV: the grown rate, ttl ms.
_RAISE = (
    _NOW
    + """
local wait = 0
if shared > 0 and tonumber(ARGV[1]) > shared and now - cut >= 1 then
  shared = tonumber(ARGV[1])
  redis.call('HSET', KEYS[1], 'rate', string.format('%.6f', shared))
end
"""
    + _STATE
)


class RedisRateBudget:
    """:class:`~topics_crawler.middlewares.rate_budget.RateBudget` in Redis."""

    def __init__(self, server: redis.Redis, keys: RedisKeys) -> None:
        self.server = server
        self.keys = keys
        self._reserve = server.register_script(_RESERVE)
        self._lower = server.register_script(_LOWER)
        self._raise = server.register_script(_RAISE)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(redis_client(crawler.settings), RedisKeys.from_settings(crawler.settings))

    def reserve(self, key: str, rate: float | None, ceiling: float | None) -> Grant:
        return self._call(self._reserve, key, rate or 0, ceiling or 0)

    def lowered(self, key: str, rate: float, sent_ago: float) -> Grant:
        return self._call(self._lower, key, rate, max(0.0, sent_ago))

    def raised(self, key: str, rate: float) -> Grant:
        return self._call(self._raise, key, rate)

    def _call(self, script: Any, key: str, *args: float) -> Grant:
        wait, shared, age = script(keys=[self.keys.rate(key)], args=[*args, TTL_MS])
        shared_rate, cut_age = float(shared), float(age)
        return Grant(
            wait=max(0.0, float(wait)),
            rate=shared_rate if shared_rate > 0 else None,
            cut_age=cut_age if cut_age >= 0 else None,
        )
