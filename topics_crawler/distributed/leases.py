"""The shared request queue with leases: a request a worker takes is not lost when it dies.

:class:`LeasedPriorityQueue` is a scrapy-redis queue class (the same sorted set
``<prefix>:requests`` and encoding as scrapy-redis's ``PriorityQueue``) whose
:meth:`~LeasedPriorityQueue.pop` moves the request, atomically (one Lua script),
into the worker's processing hash ``<prefix>:processing:<worker>`` under a lease
number, kept in ``request.meta["distributed_lease"]``. The lease ends when:

* the page is done — its callback ended and every item and request it yielded
  is handled, and the worker's feeds are flushed
  (:class:`~topics_crawler.distributed.checkpoint.LeaseCheckpoint` acks it);
* a request derived from it (a retry, a redirect, the mirror's rewrite, which
  carry its meta) is pushed back: the push and the ack are one script;
* the worker goes idle (nothing in flight: what is left failed for good and is
  in ``failures.jsonl``).

A worker's leases live as long as the worker's heartbeat key. When that key has
expired (the worker was killed, its machine lost), :func:`reclaim_dead_workers`
— run by every live worker's heartbeat — puts the dead worker's requests back in
the queue with their priority, and forgets the item keys it stored since its last
checkpoint (``<prefix>:owned:<worker>``), so the pages are fetched again and
their items exported by whoever takes them. Both in one script per dead worker.

Pushes of new requests check and add the fingerprint to the seen-set in the same
script as the push, so no request is ever "seen" without being queued.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy_redis.queue import Base

if TYPE_CHECKING:
    import redis

    from topics_crawler.distributed.connection import RedisKeys

logger = logging.getLogger(__name__)

LEASE_META = "distributed_lease"

# KEYS: requests, processing, lease counter. Returns {lease, request} or nil.
_POP = """
local top = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #top == 0 then return false end
redis.call('ZREM', KEYS[1], top[1])
local lease = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[2], lease, top[2] .. '|' .. top[1])
return {tostring(lease), top[1]}
"""

# KEYS: requests, seen, processing. ARGV: score, request, fingerprint ('' = no
# filter), lease being replaced ('' = none). Returns 1 when queued, 0 when seen.
_PUSH = """
if ARGV[3] ~= '' and redis.call('SADD', KEYS[2], ARGV[3]) == 0 then
  if ARGV[4] ~= '' then redis.call('HDEL', KEYS[3], ARGV[4]) end
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
if ARGV[4] ~= '' then redis.call('HDEL', KEYS[3], ARGV[4]) end
return 1
"""

# KEYS: worker heartbeat, its processing hash, its owned set, requests, items.
# Returns the number of requests put back, or -1 when the worker is alive.
_RECLAIM = """
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
local entries = redis.call('HGETALL', KEYS[2])
local count = 0
for i = 2, #entries, 2 do
  local value = entries[i]
  local sep = string.find(value, '|', 1, true)
  redis.call('ZADD', KEYS[4], tonumber(string.sub(value, 1, sep - 1)), string.sub(value, sep + 1))
  count = count + 1
end
local owned = redis.call('SMEMBERS', KEYS[3])
for _, key in ipairs(owned) do redis.call('HDEL', KEYS[5], key) end
redis.call('DEL', KEYS[2], KEYS[3])
return count
"""


class LeasedPriorityQueue(Base):
    """scrapy-redis priority queue whose pops are leases held by one worker."""

    def __init__(
        self,
        server: redis.Redis,
        spider: Any,
        key: str,
        serializer: Any = None,
        *,
        keys: RedisKeys,
        worker: str,
    ) -> None:
        super().__init__(server, spider, key, serializer)
        self.keys = keys
        self.processing = keys.processing(worker)
        self._pop = server.register_script(_POP)
        self._push = server.register_script(_PUSH)

    def __len__(self) -> int:
        return int(self.server.zcard(self.key))

    def push(self, request: Request, fingerprint: str = "") -> bool:
        """Queue ``request`` (unless ``fingerprint`` is already in the seen-set), ending
        the lease of the request it was derived from in the same step."""
        replaced = request.meta.pop(LEASE_META, None)
        data = self._encode_request(request)
        args = [-request.priority, data, fingerprint, str(replaced or "")]
        queued = self._push(keys=[self.key, self.keys.seen, self.processing], args=args)
        return bool(queued)

    def pop(self, timeout: int = 0) -> Request | None:
        found = self._pop(keys=[self.key, self.processing, self.keys.lease_counter])
        if not found:
            return None
        lease, data = found
        request: Request = self._decode_request(data)
        request.meta[LEASE_META] = lease.decode() if isinstance(lease, bytes) else str(lease)
        return request


def reclaim_dead_workers(server: redis.Redis, keys: RedisKeys) -> int:
    """Give back the requests and item keys of every worker whose heartbeat expired;
    the number of requests put back in the queue."""
    script = server.register_script(_RECLAIM)
    dead: set[str] = set()
    for pattern in (keys.processing_pattern, keys.owned_pattern):
        for key in server.scan_iter(pattern):
            dead.add(keys.worker_of(key, pattern))
    total = 0
    for worker in sorted(dead):
        put_back = int(
            script(
                keys=[
                    keys.worker(worker),
                    keys.processing(worker),
                    keys.owned(worker),
                    keys.requests,
                    keys.items,
                ]
            )
        )
        if put_back >= 0:
            total += put_back
            logger.warning(
                "Worker %s is gone: %d request(s) it had taken are back in the shared queue",
                worker,
                put_back,
            )
    return total
