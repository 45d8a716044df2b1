"""One rate controller per download slot: learn the rate a server allows, own the slot's delay.

The only writer of ``slot.delay`` in the project (AutoThrottle must be off; with
``AUTOTHROTTLE_ENABLED`` on this middleware refuses to start, so two writers never
coexist). For each download slot (a host; the mirror's host under ``MEDIUM_BASE_URL``)
a :class:`SlotRate` keeps a rate in requests per second and the slot's delay is
``1 / rate``:

* **slow down multiplicatively** on a rate limit — a 429, or any response carrying
  ``Retry-After`` — to ``RATE_DECREASE`` × the lower of the current rate and the rate
  of successful responses over the last ``RATE_WINDOW`` seconds (under a limit, the
  successes arrive at the rate the server allows). Once per round trip: responses to
  requests sent before the last decrease do not decrease again. A 5xx or a timeout
  says nothing about the rate (a flaky page, a slow one): it leaves the rate alone and
  is paced by its retry's own backoff (below).
* **pause the host** until a ``Retry-After`` (capped by ``RETRY_AFTER_MAX``) has
  passed: the server said when to come back, for every request to the host. The
  ``host_paused`` signal tells the scheduler's gate (:mod:`topics_crawler.scheduling.not_before`),
  which holds the host's requests aside until then, so none waits in the downloader
  holding a concurrency slot; the few already in the slot's queue are held by the slot
  (its ``lastseen`` is moved forward). The retried request goes back to the scheduler
  at once (the retry middlewares return it) with its not-before time,
  ``meta["retry_not_before"]``; a 5xx or timeout retry waits alone for its backoff.
  Nothing sleeps in a middleware.
* **speed up gradually** while responses succeed: ``RATE_INCREASE`` per second of
  success (a fraction of the rate, so the probe takes the same time at any rate), and
  only while requests wait in the slot's queue (the rate is what holds the crawl back).
  The first slow-down starts from a guess (the rate answers were arriving at, which a
  crawl still starting up keeps low; at least ``RATE_FIRST_GUESS``, 1/s), so until the
  second one the rate grows by ``RATE_FAST_INCREASE`` per second instead.
* **never past the ceiling**: ``RATE_CEILINGS`` per host (a host matches itself and
  its subdomains; ``medium.com``: 5 requests/s by default), else ``RATE_CEILING``
  (0: none); a ``DOWNLOAD_DELAY`` of *d* seconds caps every ceiling at 1/*d*, so the
  delay a user sets still holds. Until a slot is first rate-limited it runs at its
  ceiling (or, without one, as fast as the concurrency settings allow) — after a
  **cautious first contact**: a new host starts at ``RATE_START`` (4/s) and doubles
  about every second (``RATE_START_INCREASE``) while requests wait for it, until
  ``RATE_START_UNLIMITED`` (200/s: no limit in sight, unpaced from then on) or its
  ceiling; a limit met on the way cuts the served rate by ``RATE_START_DECREASE``
  (half: the probe overshot while the 429 was on its way), then the rules above.

Stats: ``rate/throttled`` (rate-limit responses), ``rate/decreased``,
``rate/paused_ms``, ``rate/learned/<slot>`` (the requests/s in force: the ceiling until
the first limit, then what was learned; absent while a slot has no limit; the progress
line shows it),
``rate/ceiling/<slot>``.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self

from scrapy import Request, Spider, signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from topics_crawler.middlewares.retry_after import TOO_MANY_REQUESTS, parse_retry_after
from topics_crawler.signals import host_paused

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

#: Stats key prefix of the learned rate per slot (requests per second).
LEARNED_RATE_STAT = "rate/learned/"


@dataclass(frozen=True)
class RatePolicy:
    """How a slot's rate is learned (rates in requests per second, times in seconds)."""

    ceilings: Mapping[str, float] = field(default_factory=lambda: {"medium.com": 5.0})
    default_ceiling: float = 0.0
    decrease: float = 0.85
    increase: float = 0.01
    fast_increase: float = 0.1
    minimum: float = 0.05
    first_guess: float = 1.0
    #: First contact with a host: its first rate (0: none, as fast as the concurrency
    #: allows), grown by ``start_increase`` per second (×e^0.7 ≈ 2 a second) while it binds,
    #: until the first limit (then cut by ``start_decrease``) or ``start_unlimited``.
    start: float = 4.0
    start_increase: float = 0.7
    start_decrease: float = 0.5
    start_unlimited: float = 200.0
    window: float = 5.0
    max_pause: float = 300.0
    #: ``DOWNLOAD_DELAY``: the least delay between two requests of a slot (0: none).
    download_delay: float = 0.0

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Self:
        default = cls()
        return cls(
            ceilings={
                str(host).lower(): float(value)
                for host, value in settings.getdict("RATE_CEILINGS", dict(default.ceilings)).items()
            },
            default_ceiling=settings.getfloat("RATE_CEILING", default.default_ceiling),
            decrease=settings.getfloat("RATE_DECREASE", default.decrease),
            increase=settings.getfloat("RATE_INCREASE", default.increase),
            fast_increase=settings.getfloat("RATE_FAST_INCREASE", default.fast_increase),
            minimum=settings.getfloat("RATE_MIN", default.minimum),
            first_guess=settings.getfloat("RATE_FIRST_GUESS", default.first_guess),
            start=settings.getfloat("RATE_START", default.start),
            start_increase=settings.getfloat("RATE_START_INCREASE", default.start_increase),
            start_decrease=settings.getfloat("RATE_START_DECREASE", default.start_decrease),
            start_unlimited=settings.getfloat("RATE_START_UNLIMITED", default.start_unlimited),
            window=settings.getfloat("RATE_WINDOW", default.window),
            max_pause=settings.getfloat("RETRY_AFTER_MAX", default.max_pause),
            download_delay=settings.getfloat("DOWNLOAD_DELAY", default.download_delay),
        )

    def ceiling_for(self, slot_key: str) -> float | None:
        """The ceiling of a slot (its host or the nearest parent domain listed, capped by
        ``DOWNLOAD_DELAY``), None: none."""
        ceiling = self._listed_ceiling(slot_key)
        if self.download_delay > 0:
            by_delay = 1.0 / self.download_delay
            return by_delay if ceiling is None else min(ceiling, by_delay)
        return ceiling

    def _listed_ceiling(self, slot_key: str) -> float | None:
        host = slot_key.lower()
        while host:
            if host in self.ceilings:
                value = self.ceilings[host]
                return value if value > 0 else None
            host = host.partition(".")[2]
        return self.default_ceiling if self.default_ceiling > 0 else None


class SlotRate:
    """The rate of one slot and the decisions that change it (pure: times are passed in)."""

    def __init__(self, policy: RatePolicy, ceiling: float | None) -> None:
        self.policy = policy
        self.ceiling = ceiling
        #: Learned rate; None until the first rate limit (then the ceiling, or no limit).
        self.rate: float | None = None
        self.last_decrease = float("-inf")
        #: Slow-downs so far: until the second, the first guess is probed quickly.
        self.decreases = 0
        self.last_success: float | None = None
        self.pause_until = float("-inf")
        self.successes: deque[float] = deque()
        self.first_seen: float | None = None
        #: First contact: the rate starts at ``policy.start`` and doubles about every
        #: second, so a burst never runs a new host's limit dry by much.
        self.starting = policy.start > 0
        if self.starting:
            self.rate = policy.start if ceiling is None else min(policy.start, ceiling)

    @property
    def current(self) -> float | None:
        """Requests per second this slot may make (None: no limit)."""
        if self.rate is None:
            return self.ceiling
        return self.rate if self.ceiling is None else min(self.rate, self.ceiling)

    @property
    def delay(self) -> float:
        """The slot delay that gives :attr:`current`."""
        rate = self.current
        return 1.0 / rate if rate else 0.0

    def succeeded(self, now: float, *, binding: bool = True) -> None:
        """A response that was served: count it, speed up a little — only while the rate
        is what holds the crawl back (``binding``: requests wait in the slot's queue), so
        a rate the crawl does not use never grows past what the server was shown to take."""
        self._seen(now)
        self.successes.append(now)
        while self.successes and self.successes[0] < now - self.policy.window:
            self.successes.popleft()
        if self.rate is not None and binding:
            elapsed = min(1.0, now - self.last_success) if self.last_success is not None else 0.0
            if self.starting:
                step = self.policy.start_increase
            elif self.decreases >= 2:
                step = self.policy.increase
            else:
                step = self.policy.fast_increase
            self.rate *= 1.0 + step * max(0.0, elapsed)
            if self.ceiling is not None:
                self.rate = min(self.rate, self.ceiling)
            elif self.starting and self.rate >= self.policy.start_unlimited:
                self.starting, self.rate = False, None  # no limit in sight: unpaced
        self.last_success = now

    def throttled(self, now: float, sent_at: float, retry_after: float | None) -> bool:
        """A rate-limit answer to a request sent at ``sent_at``; True when the rate went
        down (once per round trip). A ``Retry-After`` pauses the slot until it passed."""
        self._seen(now)
        if retry_after is not None:
            self.pause_until = max(self.pause_until, now + min(retry_after, self.policy.max_pause))
        return self._decrease(now, sent_at, self.policy.decrease)

    def served_rate(self, now: float, window: float | None = None) -> float | None:
        """Successful responses per second over the window (None before any). The span is
        at least a second: a burst the server allowed at the start is not its rate."""
        if not self.successes or self.first_seen is None:
            return None
        span = min(window or self.policy.window, max(now - self.first_seen, 1.0))
        return sum(1 for t in self.successes if t >= now - span) / span

    def _decrease(self, now: float, sent_at: float, factor: float) -> bool:
        if sent_at < self.last_decrease:
            return False  # sent before the last slow-down: already accounted for
        # While starting the rate doubled each second: the last second tells what the
        # server took at the end of the probe (a longer window would average the ramp).
        current = self.current
        served = self.served_rate(now, 1.0 if self.starting else None)
        if current is None:
            # The first limit of an unlimited slot: what was served is a guess (low while
            # the crawl had little to ask), never below ``first_guess``; a server that
            # allows less says so again.
            start = max(served or 0.0, self.policy.first_guess)
        else:
            start = min(current, served) if served else current
            if self.starting:  # the first limit: the same floor under the guess
                start = max(start, self.policy.first_guess)
        if self.starting:
            # The probe overshot the limit (its rate grew while the 429 was on its way):
            # cut deeper once, then probe up slowly.
            self.starting, factor = False, min(factor, self.policy.start_decrease)
        self.rate = max(self.policy.minimum, start * factor)
        self.last_decrease = now
        self.decreases += 1
        return True

    def _seen(self, now: float) -> None:
        if self.first_seen is None:
            self.first_seen = now


class AdaptiveRateMiddleware:
    """Downloader middleware (see the module docstring): reads every response from the
    ``response_downloaded`` signal."""

    def __init__(self, crawler: Crawler, policy: RatePolicy) -> None:
        self.crawler = crawler
        self.policy = policy
        self.slots: dict[str, SlotRate] = {}
        self.clock: Callable[[], float] = time.monotonic

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        if not settings.getbool("RATE_CONTROL_ENABLED", True):
            raise NotConfigured("RATE_CONTROL_ENABLED is off")
        if settings.getbool("AUTOTHROTTLE_ENABLED"):
            logger.warning(
                "AUTOTHROTTLE_ENABLED is on: AutoThrottle owns the download delays, "
                "the adaptive rate control is off (one writer per slot delay)"
            )
            raise NotConfigured("AutoThrottle owns slot.delay")
        middleware = cls(crawler, RatePolicy.from_settings(settings))
        crawler.signals.connect(middleware.reached_downloader, signals.request_reached_downloader)
        crawler.signals.connect(middleware.response_downloaded, signals.response_downloaded)
        return middleware

    def reached_downloader(self, request: Request, spider: Spider | None = None) -> None:
        """A request joined its slot's queue: pace a new slot at once (its ceiling)."""
        key = request.meta.get("download_slot")
        if key is not None and key not in self.slots:
            found = self._slot(request)
            if found is not None:
                self._apply(*found, self.clock())

    def response_downloaded(
        self, response: Response, request: Request, spider: Spider | None = None
    ) -> None:
        """Every response, as it arrives: the downloader sends this signal before its
        slot sends the next request (as AutoThrottle reads it), so a 429's slow-down
        and pause apply to that very next request."""
        found = self._slot(request)
        if found is None:
            return
        key, slot, rate = found
        now = self.clock()
        retry_after = parse_retry_after(response.headers.get(b"Retry-After"))
        if response.status == TOO_MANY_REQUESTS or (
            retry_after is not None and response.status >= 400
        ):
            self._count("rate/throttled")
            if retry_after is not None:
                self._pause_host(key, min(retry_after, self.policy.max_pause))
            if rate.throttled(now, self._sent_at(request, now), retry_after):
                self._count("rate/decreased")
                logger.info(
                    "Rate limited on %s (status %d): now %.2f requests/s",
                    key, response.status, rate.current or 0.0,
                )  # fmt: skip
        elif response.status < 400:
            rate.succeeded(now, binding=bool(slot.queue))
        self._apply(key, slot, rate, now)

    # --- helpers ------------------------------------------------------------------

    def _apply(self, key: str, slot: Slot, rate: SlotRate, now: float) -> None:
        """Write the slot's delay (and its pause) — the one place that does."""
        slot.delay = rate.delay
        if rate.pause_until > now:
            # The slot sends its next request ``delay`` after ``lastseen``: moving
            # ``lastseen`` to the pause's end holds the slot's queue until then.
            resume_at = rate.pause_until
            if resume_at > slot.lastseen:
                self._count("rate/paused_ms", round((resume_at - max(now, slot.lastseen)) * 1000))
                slot.lastseen = resume_at
            if not slot.delay:
                slot.delay = 1e-3  # a zero delay skips the slot's pacing (and the pause)
        stats, current = self.crawler.stats, rate.current
        if stats is not None and current is not None:
            stats.set_value(LEARNED_RATE_STAT + key, round(current, 2))

    def _pause_host(self, key: str, seconds: float) -> None:
        """Tell the scheduler's gate to hold the host's requests for ``seconds``."""
        self.crawler.signals.send_catch_log(host_paused, slot=key, until=time.time() + seconds)

    def _slot(self, request: Request) -> tuple[str, Slot, SlotRate] | None:
        engine: Any = self.crawler.engine
        key = request.meta.get("download_slot")
        if engine is None or key is None:
            return None
        slot = engine.downloader.slots.get(key)
        if slot is None:
            return None
        rate = self.slots.get(key)
        if rate is None:
            rate = self.slots[key] = SlotRate(self.policy, self.policy.ceiling_for(key))
            if self.crawler.stats is not None and rate.ceiling is not None:
                self.crawler.stats.set_value(f"rate/ceiling/{key}", rate.ceiling)
        return key, slot, rate

    @staticmethod
    def _sent_at(request: Request, now: float) -> float:
        """When the request went out: its response time minus Scrapy's download latency."""
        return now - float(request.meta.get("download_latency") or 0.0)

    def _count(self, key: str, count: int = 1) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(key, count)
