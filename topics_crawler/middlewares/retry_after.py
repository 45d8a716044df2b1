"""Retries returned at once, with a not-before time from ``Retry-After`` or a backoff.

Takes the place of Scrapy's ``RetryMiddleware`` (same position, same settings:
``RETRY_ENABLED``, ``RETRY_TIMES``, ``RETRY_HTTP_CODES``, ``RETRY_EXCEPTIONS``,
``RETRY_PRIORITY_ADJUST`` and the ``dont_retry`` / ``max_retry_times`` meta
keys) and builds every retry with Scrapy's own :func:`get_retry_request`, so the
``retry/*`` stats and give-up logging stay Scrapy's. What it adds: each retry
carries ``meta["retry_not_before"]`` (epoch seconds) — the server's
``Retry-After`` (delta-seconds or HTTP-date, capped by ``RETRY_AFTER_MAX``) when
it sent one, else ``RETRY_BACKOFF_BASE`` doubled per attempt up to
``RETRY_BACKOFF_MAX``. Like Scrapy's, it returns the retry at once: the request
goes back to the scheduler and holds no download or concurrency slot while it
waits; nothing sleeps here. The waiting is the scheduler's: its gate
(:mod:`topics_crawler.scheduling.not_before`) hands the retry to the downloader only once its
not-before time has passed, and for a ``Retry-After`` the rate controller
(:mod:`topics_crawler.middlewares.rate`) pauses the whole host; a backoff (a 5xx, a
timeout) delays only the retried request. Waits of ``RETRY_AFTER_LONG_WAIT`` seconds
or more are logged as warnings. Stats: ``retry/wait_ms`` (not-before offsets),
``retry/retry_after``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import TYPE_CHECKING, Self

from scrapy import Request
from scrapy.downloadermiddlewares.retry import get_retry_request
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.utils.misc import load_object

from topics_crawler import settings as defaults
from topics_crawler.scheduling.not_before import RETRY_NOT_BEFORE_META

if TYPE_CHECKING:
    from collections.abc import Callable

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

    backoff_base: float = defaults.RETRY_BACKOFF_BASE
    backoff_max: float = defaults.RETRY_BACKOFF_MAX
    retry_after_max: float = defaults.RETRY_AFTER_MAX
    long_wait: float = defaults.RETRY_AFTER_LONG_WAIT

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Self:
        return cls(
            backoff_base=settings.getfloat("RETRY_BACKOFF_BASE", defaults.RETRY_BACKOFF_BASE),
            backoff_max=settings.getfloat("RETRY_BACKOFF_MAX", defaults.RETRY_BACKOFF_MAX),
            retry_after_max=settings.getfloat("RETRY_AFTER_MAX", defaults.RETRY_AFTER_MAX),
            long_wait=settings.getfloat("RETRY_AFTER_LONG_WAIT", defaults.RETRY_AFTER_LONG_WAIT),
        )

    def wait(self, attempt: int, retry_after: float | None) -> float:
        """The server's ``Retry-After`` (capped) when given, else the backoff for ``attempt``."""
        if retry_after is not None:
            return min(retry_after, self.retry_after_max)
        return backoff_delay(attempt, self.backoff_base, self.backoff_max)


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
        self.clock: Callable[[], float] = time.time

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler, RetryWaitPolicy.from_settings(crawler.settings))

    def process_response(self, request: Request, response: Response) -> Request | Response:
        if request.meta.get("dont_retry", False):
            return response
        if response.status not in self.retry_http_codes:
            return response
        retry = self._retry_request(request, status_reason(response.status))
        if retry is None:
            return response
        retry_after = parse_retry_after(response.headers.get(b"Retry-After"))
        wait = self.policy.wait(retry.meta["retry_times"], retry_after)
        return self._not_before(retry, wait, f"status {response.status}", retry_after)

    def process_exception(self, request: Request, exception: Exception) -> Request | None:
        if request.meta.get("dont_retry", False):
            return None
        if not isinstance(exception, self.exceptions_to_retry):
            return None
        retry = self._retry_request(request, exception)
        if retry is None:
            return None
        wait = self.policy.wait(retry.meta["retry_times"], None)
        return self._not_before(retry, wait, type(exception).__name__, None)

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

    def _not_before(
        self, retry: Request, wait: float, cause: str, retry_after: float | None
    ) -> Request:
        """The retry, stamped with the time before which it should not go out."""
        stats = self.crawler.stats
        assert stats is not None
        if retry_after is not None:
            stats.inc_value("retry/retry_after")
        if wait <= 0:
            retry.meta.pop(RETRY_NOT_BEFORE_META, None)
            return retry
        retry.meta[RETRY_NOT_BEFORE_META] = self.clock() + wait
        stats.inc_value("retry/wait_ms", round(wait * 1000))
        level = logging.WARNING if wait >= self.policy.long_wait else logging.DEBUG
        source = "Retry-After" if retry_after is not None else "backoff"
        logger.log(
            level,
            "Retry %d of %s after %s not before %.1fs from now (%s)",
            retry.meta["retry_times"],
            retry.url,
            cause,
            wait,
            source,
        )
        return retry
