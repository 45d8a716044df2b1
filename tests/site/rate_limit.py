"""A token-bucket rate limiter for the local site: ``429`` + ``Retry-After`` past the rate.

    SiteServer(content, rate_limit=TokenBucket(rate=10))       # 10 requests/s, burst 10
    python -m tests.site --rate-limit 10 [--rate-burst 5]

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

    def take(self) -> int | None:
        """Take a token: None when there was one, else the ``Retry-After`` seconds."""
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
