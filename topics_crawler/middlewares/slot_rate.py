"""The decisions of the adaptive rate control, pure (times are passed in): the policy read
from the settings and the rate of one download slot. The middleware that applies them to
Scrapy's slots, and the rules in words, are in :mod:`topics_crawler.middlewares.rate`."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Self

from topics_crawler import settings as defaults

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings


@dataclass(frozen=True)
class RatePolicy:
    """How a slot's rate is learned (rates in requests per second, times in seconds)."""

    ceilings: Mapping[str, float] = field(default_factory=lambda: dict(defaults.RATE_CEILINGS))
    default_ceiling: float = defaults.RATE_CEILING
    decrease: float = defaults.RATE_DECREASE
    increase: float = defaults.RATE_INCREASE
    fast_increase: float = defaults.RATE_FAST_INCREASE
    minimum: float = defaults.RATE_MIN
    first_guess: float = defaults.RATE_FIRST_GUESS
    #: First contact with a host: its first rate (0: none, as fast as the concurrency
    #: allows), grown by ``start_increase`` per second (×e^0.7 ≈ 2 a second) while it binds,
    #: until the first limit (then cut by ``start_decrease``) or ``start_unlimited``.
    start: float = defaults.RATE_START
    start_increase: float = defaults.RATE_START_INCREASE
    start_decrease: float = defaults.RATE_START_DECREASE
    start_unlimited: float = defaults.RATE_START_UNLIMITED
    window: float = defaults.RATE_WINDOW
    max_pause: float = defaults.RETRY_AFTER_MAX
    #: ``DOWNLOAD_DELAY``: the least delay between two requests of a slot (0: none).
    download_delay: float = 0.0

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Self:
        return cls(
            ceilings={
                str(host).lower(): float(value)
                for host, value in settings.getdict("RATE_CEILINGS", defaults.RATE_CEILINGS).items()
            },
            default_ceiling=settings.getfloat("RATE_CEILING", defaults.RATE_CEILING),
            decrease=settings.getfloat("RATE_DECREASE", defaults.RATE_DECREASE),
            increase=settings.getfloat("RATE_INCREASE", defaults.RATE_INCREASE),
            fast_increase=settings.getfloat("RATE_FAST_INCREASE", defaults.RATE_FAST_INCREASE),
            minimum=settings.getfloat("RATE_MIN", defaults.RATE_MIN),
            first_guess=settings.getfloat("RATE_FIRST_GUESS", defaults.RATE_FIRST_GUESS),
            start=settings.getfloat("RATE_START", defaults.RATE_START),
            start_increase=settings.getfloat("RATE_START_INCREASE", defaults.RATE_START_INCREASE),
            start_decrease=settings.getfloat("RATE_START_DECREASE", defaults.RATE_START_DECREASE),
            start_unlimited=settings.getfloat(
                "RATE_START_UNLIMITED", defaults.RATE_START_UNLIMITED
            ),
            window=settings.getfloat("RATE_WINDOW", defaults.RATE_WINDOW),
            max_pause=settings.getfloat("RETRY_AFTER_MAX", defaults.RETRY_AFTER_MAX),
            download_delay=settings.getfloat("DOWNLOAD_DELAY", 0.0),
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
        #: The rate is an address's, shared with other workers (a rate budget): what this
        #: worker was served is only its part, so a cut starts from the rate itself.
        self.shared = False

    def adopt(self, rate: float, cut_age: float | None, now: float) -> None:
        """Take the address's learned ``rate`` (cut ``cut_age`` seconds ago): responses to
        requests sent before that cut do not cut again."""
        self.shared, self.starting, self.rate = True, False, rate
        self.decreases = max(self.decreases, 1)
        if cut_age is not None:
            self.last_decrease = max(self.last_decrease, now - cut_age)

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
        served = None if self.shared else self.served_rate(now, 1.0 if self.starting else None)
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
