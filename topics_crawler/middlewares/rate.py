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

**One budget per egress address** (``RATE_BUDGET_CLASS``, set with ``REDIS_URL``:
:mod:`topics_crawler.middlewares.rate_budget`): workers behind one address share its
ceiling and its learned rate. Each request to a paced host then waits for its send slot
on the address's schedule (in ``process_request``: at most ``SLOT_QUEUE_AHEAD`` per host
wait there, as they would in the slot's queue), the slot's own delay steps aside, a
worker's cut becomes the address's and each worker adopts the address's rate. Growth
still follows each worker's successes (while requests wait for the host).

Stats: ``rate/throttled`` (rate-limit responses), ``rate/decreased``,
``rate/paused_ms``, ``rate/learned/<slot>`` (the requests/s in force: the ceiling until
the first limit, then what was learned; absent while a slot has no limit; the progress
line shows it),
``rate/ceiling/<slot>``, ``rate/budget_wait_ms`` (time requests waited for their slot on
a shared budget).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

from scrapy import Request, Spider, signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.utils.misc import build_from_crawler, load_object

from topics_crawler.middlewares.rate_budget import Grant, RateBudget, budget_key, egress_address
from topics_crawler.middlewares.retry_after import TOO_MANY_REQUESTS, parse_retry_after
from topics_crawler.middlewares.slot_rate import RatePolicy, SlotRate
from topics_crawler.signals import host_paused

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: Stats key prefix of the learned rate per slot (requests per second).
LEARNED_RATE_STAT = "rate/learned/"
#: Request meta: the shared budget the request reserved its send slot on.
BUDGET_META = "rate_budget"
#: The delay of a slot a shared budget paces: not zero, so the scheduler's gate still
#: treats the slot as paced and lets only a couple of its requests wait at a time.
SHARED_PACE = 1e-3


class AdaptiveRateMiddleware:
    """Downloader middleware (see the module docstring): reads every response from the
    ``response_downloaded`` signal."""

    def __init__(
        self, crawler: Crawler, policy: RatePolicy, budget: RateBudget | None = None
    ) -> None:
        self.crawler = crawler
        self.policy = policy
        self.slots: dict[str, SlotRate] = {}
        self.clock: Callable[[], float] = time.monotonic
        #: The shared budget of each egress address (None: each process paces itself).
        self.budget = budget
        #: Requests of each slot waiting for their send slot on the shared budget.
        self.waiting: Counter[str] = Counter()
        self._synced: dict[str, float] = {}
        self._raised: dict[str, float] = {}

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
        budget_class = settings.get("RATE_BUDGET_CLASS")
        budget = build_from_crawler(load_object(budget_class), crawler) if budget_class else None
        middleware = cls(crawler, RatePolicy.from_settings(settings), budget)
        crawler.signals.connect(middleware.reached_downloader, signals.request_reached_downloader)
        crawler.signals.connect(middleware.response_downloaded, signals.response_downloaded)
        return middleware

    async def process_request(self, request: Request) -> None:
        """With a shared budget: wait for this request's send slot on its egress address's
        schedule (paced hosts only; an unpaced one looks the address's rate up each
        second, in case another worker learned one)."""
        if self.budget is None:
            return
        key = self._slot_key(request)
        if key is None:
            return
        rate = self._rate(key)
        now = self.clock()
        if rate.current is None and now - self._synced.get(key, float("-inf")) < 1.0:
            return
        self._synced[key] = now
        shared_key = budget_key(egress_address(request, self.crawler.settings), key)
        request.meta[BUDGET_META] = shared_key
        grant = self.budget.reserve(shared_key, rate.current, rate.ceiling)
        self._adopt(key, rate, grant, now)
        wait = max(grant.wait, rate.pause_until - now)
        if wait <= 0:
            return
        self.waiting[key] += 1
        try:
            await asyncio.sleep(min(wait, self.policy.max_pause))
        finally:
            self.waiting[key] -= 1
        self._count("rate/budget_wait_ms", round(wait * 1000))

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
                self._share_cut(request, key, rate, now)
                logger.info(
                    "Rate limited on %s (status %d): now %.2f requests/s",
                    key, response.status, rate.current or 0.0,
                )  # fmt: skip
        elif response.status < 400:
            rate.succeeded(now, binding=bool(slot.queue) or self.waiting[key] > 0)
            self._share_growth(request, key, rate, now)
        self._apply(key, slot, rate, now)

    # --- helpers ------------------------------------------------------------------

    def _apply(self, key: str, slot: Slot, rate: SlotRate, now: float) -> None:
        """Write the slot's delay (and its pause) — the one place that does. A host paced
        by a shared budget keeps only a token delay (the gate's sign of a paced slot)."""
        slot.delay = SHARED_PACE if self.budget is not None and rate.current else rate.delay
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
        return key, slot, self._rate(key)

    def _rate(self, key: str) -> SlotRate:
        rate = self.slots.get(key)
        if rate is None:
            rate = self.slots[key] = SlotRate(self.policy, self.policy.ceiling_for(key))
            if self.crawler.stats is not None and rate.ceiling is not None:
                self.crawler.stats.set_value(f"rate/ceiling/{key}", rate.ceiling)
        return rate

    def _slot_key(self, request: Request) -> str | None:
        """The download slot a request will take (set on it once it reaches the slot)."""
        key = request.meta.get("download_slot")
        if key is not None:
            return str(key)
        engine = self._engine()
        return str(engine.downloader.get_slot_key(request)) if engine is not None else None

    # --- the shared budget ------------------------------------------------------------

    def _adopt(self, key: str, rate: SlotRate, grant: Grant, now: float) -> None:
        """Take the address's learned rate when it differs from this worker's."""
        if grant.rate is not None and grant.rate != rate.rate:
            rate.adopt(grant.rate, grant.cut_age, now)
            found = self._slot_of(key)
            if found is not None:
                self._apply(key, found, rate, now)

    def _share_cut(self, request: Request, key: str, rate: SlotRate, now: float) -> None:
        shared_key = request.meta.get(BUDGET_META)
        if self.budget is None or shared_key is None or rate.current is None:
            return
        sent_ago = now - self._sent_at(request, now)
        self._adopt(key, rate, self.budget.lowered(shared_key, rate.current, sent_ago), now)

    def _share_growth(self, request: Request, key: str, rate: SlotRate, now: float) -> None:
        """Tell the address this worker's rate grew, at most once a second."""
        shared_key = request.meta.get(BUDGET_META)
        if self.budget is None or shared_key is None or not rate.shared or rate.rate is None:
            return
        if now - self._raised.get(key, float("-inf")) < 1.0:
            return
        self._raised[key] = now
        self._adopt(key, rate, self.budget.raised(shared_key, rate.rate), now)

    def _slot_of(self, key: str) -> Slot | None:
        engine = self._engine()
        return engine.downloader.slots.get(key) if engine is not None else None

    def _engine(self) -> Any:
        """The crawler's engine; None before the crawl starts."""
        try:
            return self.crawler.engine
        except RuntimeError:
            return None

    @staticmethod
    def _sent_at(request: Request, now: float) -> float:
        """When the request went out: its response time minus Scrapy's download latency."""
        return now - float(request.meta.get("download_latency") or 0.0)

    def _count(self, key: str, count: int = 1) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(key, count)
