"""A token-bucket rate limiter for the local site: ``429`` + ``Retry-After`` past the rate.

    SiteServer(content, rate_limit=TokenBucket(rate=10))       # 10 requests/s, burst 10
    SiteServer(content, rate_limit=AddressBuckets(rate=20))    # 20 requests/s per client address
    python -m topics_crawler.site --rate-limit 10 [--rate-burst 5]

:class:`AddressBuckets` gives each client address a bucket of its own, as a server that
limits by address does: workers bound to 127.0.0.2 and 127.0.0.3 (``DOWNLOAD_BIND_ADDRESS``)
each get the rate, two on 127.0.0.2 share it.

Every request (robots.txt, pages, GraphQL POSTs) takes one token; the bucket holds
``burst`` tokens (default: one second's worth) and refills at ``rate`` per second. A
request that finds the bucket empty is answered ``429 Too Many Requests`` with
``Retry-After`` set to the whole seconds until a token is back (at least 1, as
delta-seconds must be an integer), or to ``retry_after`` when given.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class TokenBucket:
    """Thread-safe token bucket (the site's request handlers run in threads)."""

    rate: float
    burst: float | None = None
    retry_after: int | None = None
    clock: Callable[[], float] = time.monotonic
    _tokens: float = field(init=False)
    _updated: float = field(init=False)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.rate <= 0:
            raise ValueError(f"rate must be positive, not {self.rate}")
        self.burst = max(1.0, self.burst if self.burst is not None else self.rate)
        self._tokens = self.burst
        self._updated = self.clock()

    def take(self, address: str = "") -> int | None:
        """Take a token (whoever asks): None when there was one, else the ``Retry-After``
        seconds."""
        with self._lock:
            now = self.clock()
            assert self.burst is not None
            self._tokens = min(self.burst, self._tokens + (now - self._updated) * self.rate)
            self._updated = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return None
            if self.retry_after is not None:
                return self.retry_after
            return max(1, math.ceil((1.0 - self._tokens) / self.rate))


@dataclass
class AddressBuckets:
    """One :class:`TokenBucket` (``rate``, ``burst``) per client address."""

    rate: float
    burst: float | None = None
    _buckets: dict[str, TokenBucket] = field(init=False, default_factory=dict)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def take(self, address: str = "") -> int | None:
        """Take a token from ``address``'s bucket (see :meth:`TokenBucket.take`)."""
        with self._lock:
            bucket = self._buckets.get(address)
            if bucket is None:
                bucket = self._buckets[address] = TokenBucket(self.rate, self.burst)
        return bucket.take()
