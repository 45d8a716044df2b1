"""Retries with exponential backoff that honour ``Retry-After`` and slow a domain down on 429s.

Takes the place of Scrapy's ``RetryMiddleware`` (same position, same settings:
``RETRY_ENABLED``, ``RETRY_TIMES``, ``RETRY_HTTP_CODES``, ``RETRY_EXCEPTIONS``,
``RETRY_PRIORITY_ADJUST`` and the ``dont_retry`` / ``max_retry_times`` meta
keys) and builds every retry with Scrapy's own :func:`get_retry_request`, so the
``retry/*`` stats and give-up logging stay Scrapy's. What it adds:

* the retry waits — ``Retry-After`` (delta-seconds or HTTP-date, capped by
  ``RETRY_AFTER_MAX``) when the server sent one, else ``RETRY_BACKOFF_BASE``
  doubled per attempt up to ``RETRY_BACKOFF_MAX``. The wait is an asyncio /
  Twisted sleep inside an ``async`` ``process_response``: the reactor keeps
  running, only this request waits. Waits of ``RETRY_AFTER_LONG_WAIT`` seconds
  or more are logged as warnings.
* on a 429 (or any retried response carrying ``Retry-After``) the download
  slot of the request — the mirror's host when ``MEDIUM_BASE_URL`` is set,
  since the key is read from ``request.meta["download_slot"]`` — gets its
  delay raised to at least the wait, so every request to that domain slows
  down, not only the retried one. Each later successful response halves the
  raised delay back towards what it was (AutoThrottle alone never reads
  ``Retry-After``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Self

from scrapy import Request
from scrapy.downloadermiddlewares.retry import get_retry_request
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.utils.asyncio import sleep
from scrapy.utils.misc import load_object

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

TOO_MANY_REQUESTS = 429


def parse_retry_after(value: str | bytes | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (``"120"`` or an HTTP-date).

    A date in the past gives 0; a missing or unreadable value gives None.
    """
    if value is None:
        return None
    text = (value.decode("latin-1") if isinstance(value, bytes) else value).strip()
    if not text:
        return None
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def status_reason(status: int) -> str:
    """``"429 Too Many Requests"``: the retry reason for a status (Twisted lacks some phrases)."""
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"{status} Unknown Status"


def backoff_delay(attempt: int, base: float, cap: float) -> float:
    """Exponential backoff: ``base`` for the first retry, doubled for each further one."""
    if base <= 0:
        return 0.0
    return float(min(cap, base * 2 ** max(0, attempt - 1)))


@dataclass(frozen=True)
class RetryWaitPolicy:
    """How long a retry waits (all figures in seconds)."""

    backoff_base: float = 1.0
    backoff_max: float = 60.0
    retry_after_max: float = 300.0
    long_wait: float = 30.0

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Self:
        return cls(
            backoff_base=settings.getfloat("RETRY_BACKOFF_BASE", cls.backoff_base),
            backoff_max=settings.getfloat("RETRY_BACKOFF_MAX", cls.backoff_max),
            retry_after_max=settings.getfloat("RETRY_AFTER_MAX", cls.retry_after_max),
            long_wait=settings.getfloat("RETRY_AFTER_LONG_WAIT", cls.long_wait),
        )

    def wait(self, attempt: int, retry_after: float | None) -> float:
        """The server's ``Retry-After`` (capped) when given, else the backoff for ``attempt``."""
        if retry_after is not None:
            return min(retry_after, self.retry_after_max)
        return backoff_delay(attempt, self.backoff_base, self.backoff_max)


class SlotBrake:
    """Raise a download slot's delay after a rate limit, relax it on each success."""

    def __init__(self, max_delay: float) -> None:
        self.max_delay = max_delay
        self.base_delays: dict[str, float] = {}

    def brake(self, key: str, slot: Slot, wait: float) -> float:
        """Slow the slot to at least ``wait`` (and at least double); returns the new delay."""
        self.base_delays.setdefault(key, slot.delay)
        slot.delay = min(self.max_delay, max(wait, slot.delay * 2))
        return slot.delay

    def relax(self, key: str, slot: Slot) -> None:
        """Halve a raised delay, back to the slot's own delay at most."""
        base = self.base_delays.get(key)
        if base is None:
            return
        slot.delay = max(base, slot.delay / 2)
        if slot.delay <= base:
            del self.base_delays[key]


class RetryAfterMiddleware:
    """Downloader middleware replacing ``RetryMiddleware`` (see the module docstring)."""

    def __init__(self, crawler: Crawler, policy: RetryWaitPolicy) -> None:
        settings = crawler.settings
        if not settings.getbool("RETRY_ENABLED"):
            raise NotConfigured("RETRY_ENABLED is off")
        self.crawler = crawler
        self.policy = policy
        self.max_retry_times = settings.getint("RETRY_TIMES")
        self.retry_http_codes = {int(code) for code in settings.getlist("RETRY_HTTP_CODES")}
        self.priority_adjust = settings.getint("RETRY_PRIORITY_ADJUST")
        self.exceptions_to_retry = tuple(
            load_object(name) if isinstance(name, str) else name
            for name in settings.getlist("RETRY_EXCEPTIONS")
        )
        self.brake = SlotBrake(policy.retry_after_max)
        self.sleep: Callable[[float], Awaitable[None]] = sleep

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler, RetryWaitPolicy.from_settings(crawler.settings))

    async def process_response(self, request: Request, response: Response) -> Request | Response:
        if request.meta.get("dont_retry", False):
            return response
        if response.status not in self.retry_http_codes:
            self._relax(request)
            return response
        retry = self._retry_request(request, status_reason(response.status))
        if retry is None:
            return response
        retry_after = parse_retry_after(response.headers.get(b"Retry-After"))
        wait = self.policy.wait(retry.meta["retry_times"], retry_after)
        if response.status == TOO_MANY_REQUESTS or retry_after is not None:
            self._brake(request, wait)
        await self._wait(retry, wait, f"status {response.status}", retry_after)
        return retry

    async def process_exception(self, request: Request, exception: Exception) -> Request | None:
        if request.meta.get("dont_retry", False):
            return None
        if not isinstance(exception, self.exceptions_to_retry):
            return None
        retry = self._retry_request(request, exception)
        if retry is None:
            return None
        wait = self.policy.wait(retry.meta["retry_times"], None)
        await self._wait(retry, wait, type(exception).__name__, None)
        return retry

    # --- helpers ------------------------------------------------------------------

    def _retry_request(self, request: Request, reason: str | Exception) -> Request | None:
        spider = self.crawler.spider
        assert spider is not None, "retries happen while a spider runs"
        return get_retry_request(
            request,
            spider=spider,
            reason=reason,
            max_retry_times=request.meta.get("max_retry_times", self.max_retry_times),
            priority_adjust=request.meta.get("priority_adjust", self.priority_adjust),
        )

    async def _wait(
        self, retry: Request, wait: float, cause: str, retry_after: float | None
    ) -> None:
        if wait <= 0:
            return
        stats = self.crawler.stats
        assert stats is not None
        stats.inc_value("retry/wait_ms", round(wait * 1000))
        if retry_after is not None:
            stats.inc_value("retry/retry_after")
        level = logging.WARNING if wait >= self.policy.long_wait else logging.DEBUG
        source = "Retry-After" if retry_after is not None else "backoff"
        logger.log(
            level,
            "Waiting %.1fs (%s) before retry %d of %s after %s",
            wait,
            source,
            retry.meta["retry_times"],
            retry.url,
            cause,
        )
        await self.sleep(wait)

    def _brake(self, request: Request, wait: float) -> None:
        found = self._slot(request)
        if found is None:
            return
        key, slot = found
        delay = self.brake.brake(key, slot, wait)
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value("retry/slot_braked")
        logger.info("Rate limited on %s: download delay for this slot now %.1fs", key, delay)

    def _relax(self, request: Request) -> None:
        if not self.brake.base_delays:
            return
        found = self._slot(request)
        if found is not None:
            self.brake.relax(*found)

    def _slot(self, request: Request) -> tuple[str, Slot] | None:
        engine: Any = self.crawler.engine
        key = request.meta.get("download_slot")
        if engine is None or key is None:
            return None
        slot = engine.downloader.slots.get(key)
        return (key, slot) if slot is not None else None
