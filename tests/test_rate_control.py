"""The per-slot rate controller: its decisions (pure), and the middleware that owns slot.delay."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from scrapy import Request, Spider
from scrapy.core.downloader import Slot
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.utils.test import get_crawler

from topics_crawler.middlewares.rate import (
    LEARNED_RATE_STAT,
    AdaptiveRateMiddleware,
    RatePolicy,
    SlotRate,
)
from topics_crawler.signals import host_paused

SLOT = "127.0.0.1"
URL = "http://127.0.0.1:8000/tag/llm"
#: The decisions after the first contact (``start=0``: no cautious start; tested apart).
POLICY = RatePolicy(ceilings={"medium.com": 5.0}, decrease=0.5, increase=0.1, window=2.0, start=0.0)
STARTING = RatePolicy(start=4.0, start_increase=0.7, start_decrease=0.5, start_unlimited=200.0)


def served(rate: SlotRate, start: float, per_second: float, seconds: float) -> float:
    """Feed ``per_second`` successes for ``seconds``; returns the time after them."""
    now = start
    for _ in range(round(per_second * seconds)):
        now += 1 / per_second
        rate.succeeded(now)
    return now


def test_ceilings_match_the_host_and_its_subdomains() -> None:
    assert POLICY.ceiling_for("medium.com") == 5.0
    assert POLICY.ceiling_for("towardsdatascience.medium.com") == 5.0
    assert POLICY.ceiling_for("notmedium.com") is None
    assert POLICY.ceiling_for("127.0.0.1") is None
    assert RatePolicy(default_ceiling=2.0).ceiling_for("example.org") == 2.0
    # DOWNLOAD_DELAY still holds: a 0.5 s delay caps every slot at 2 requests/s
    assert RatePolicy(download_delay=0.5).ceiling_for("127.0.0.1") == 2.0
    assert RatePolicy(download_delay=0.5).ceiling_for("medium.com") == 2.0
    assert RatePolicy(download_delay=0.1).ceiling_for("medium.com") == 5.0


def test_until_the_first_limit_a_slot_runs_at_its_ceiling_or_unlimited() -> None:
    assert SlotRate(POLICY, 5.0).delay == pytest.approx(0.2)
    unlimited = SlotRate(POLICY, None)
    served(unlimited, 0.0, 50, 1)
    assert (unlimited.current, unlimited.delay) == (None, 0.0)


def test_first_contact_starts_modestly_and_doubles_about_every_second() -> None:
    rate = SlotRate(STARTING, None)
    assert rate.current == 4.0
    now, seen = 0.0, []
    for _ in range(3):
        now = served(rate, now, rate.current or 0.0, 1)
        seen.append(rate.current)
    assert seen[0] == pytest.approx(8, rel=0.25)  # ~2× a second
    assert seen[2] == pytest.approx(32, rel=0.4)
    assert SlotRate(STARTING, 5.0).current == 4.0  # below a ceiling, up to it in <1 s
    capped = SlotRate(STARTING, 5.0)
    served(capped, 0.0, 4, 1)
    assert capped.current == 5.0


def test_first_contact_without_a_limit_ends_unpaced() -> None:
    rate = SlotRate(STARTING, None)
    now = 0.0
    for _ in range(12):
        now = served(rate, now, min(rate.current or 300.0, 300.0), 1)
    assert (rate.current, rate.delay, rate.starting) == (None, 0.0, False)


def test_a_limit_met_while_starting_cuts_the_served_rate_in_half_once() -> None:
    rate = SlotRate(STARTING, None)
    now = served(rate, 0.0, 4, 1)
    now = served(rate, now, 8, 1)  # ~12 served over 2 s, the probe at ~16/s
    assert rate.throttled(now, sent_at=now - 0.05, retry_after=1) is True
    assert rate.current == pytest.approx(0.5 * 8, rel=0.3)
    assert not rate.starting
    now = served(rate, now + 1, rate.current or 0.0, 1)
    assert rate.throttled(now, sent_at=now - 0.05, retry_after=1) is True
    assert rate.decreases == 2  # the next cut is the ordinary one
    assert rate.current == pytest.approx(0.85 * 4.4, rel=0.3)


def test_a_429_halves_the_rate_it_was_served_at_and_pauses_for_retry_after() -> None:
    rate = SlotRate(POLICY, None)
    now = served(rate, 0.0, 20, 2)  # 20 successes/s before the limit
    assert rate.throttled(now, sent_at=now - 0.05, retry_after=3) is True
    assert rate.current == pytest.approx(10.0, rel=0.1)
    assert rate.pause_until == pytest.approx(now + 3)


def test_one_decrease_per_round_trip() -> None:
    rate = SlotRate(POLICY, 8.0)
    now = served(rate, 0.0, 8, 1)
    assert rate.throttled(now, sent_at=now - 0.1, retry_after=None)
    after_first = rate.current
    # answers to requests already in flight at the first 429 do not decrease again
    assert not rate.throttled(now + 0.01, sent_at=now - 0.05, retry_after=None)
    assert rate.current == after_first
    # a request sent after the decrease that is limited again does
    assert rate.throttled(now + 1, sent_at=now + 0.5, retry_after=None)
    assert rate.current is not None
    assert after_first is not None
    assert rate.current < after_first


def test_success_speeds_up_gradually_and_never_past_the_ceiling() -> None:
    rate = SlotRate(POLICY, 5.0)
    now = served(rate, 0.0, 5, 1)
    rate.throttled(now, sent_at=now, retry_after=None)
    assert rate.current == pytest.approx(2.5)
    now = served(rate, now, 2.5, 1)
    assert rate.current is not None
    assert 2.5 < rate.current < 2.5 * 1.15
    served(rate, now, 5, 60)
    assert rate.current == 5.0


def test_until_the_second_slow_down_the_first_guess_is_probed_quickly() -> None:
    policy = RatePolicy(decrease=0.5, increase=0.01, fast_increase=0.2)
    rate = SlotRate(policy, None)
    now = served(rate, 0.0, 2, 2)  # a crawl still starting up: 2 answers/s
    rate.throttled(now, sent_at=now, retry_after=None)
    first_guess = rate.current
    assert first_guess is not None
    assert first_guess < 2.0
    now = served(rate, now, 2, 5)
    assert rate.current is not None
    assert rate.current > first_guess * 2  # ~20 %/s, not 1 %/s
    rate.throttled(now, sent_at=now, retry_after=None)
    slow_from = rate.current
    served(rate, now, 1, 5)
    assert rate.current == pytest.approx(slow_from * 1.01**5, rel=0.02)


def test_the_first_guess_of_an_idle_crawl_is_not_below_the_floor() -> None:
    rate = SlotRate(RatePolicy(decrease=0.5, first_guess=1.0), None)
    now = served(rate, 0.0, 0.2, 10)  # a crawl that asked little: 0.2 answers/s
    rate.throttled(now, sent_at=now, retry_after=1)
    assert rate.current == pytest.approx(0.5)  # 0.5 x the 1/s floor, not 0.5 x 0.2/s


def test_a_rate_the_crawl_does_not_use_does_not_grow() -> None:
    rate = SlotRate(POLICY, None)
    now = served(rate, 0.0, 10, 1)
    rate.throttled(now, sent_at=now, retry_after=None)
    learned = rate.current
    for step in range(1, 100):
        rate.succeeded(now + step * 0.5, binding=False)  # nothing waited for the slot
    assert rate.current == learned


def test_the_rate_never_falls_below_the_floor() -> None:
    rate = SlotRate(RatePolicy(decrease=0.1, minimum=0.5), None)
    for step in range(10):
        rate.throttled(float(step), sent_at=float(step), retry_after=None)
    assert rate.current == 0.5


# --- the middleware -------------------------------------------------------------------


def make_middleware(**settings: object) -> tuple[AdaptiveRateMiddleware, Slot, list[float]]:
    crawler = get_crawler(Spider, {"RATE_DECREASE": 0.5, "RATE_START": 0, **settings})
    slot = Slot(concurrency=4, delay=0.0, jitter=0)
    crawler.engine = SimpleNamespace(downloader=SimpleNamespace(slots={SLOT: slot}))
    middleware = AdaptiveRateMiddleware.from_crawler(crawler)
    clock = [100.0]
    middleware.clock = lambda: clock[0]
    return middleware, slot, clock


def request(**meta: object) -> Request:
    return Request(URL, meta={"download_slot": SLOT, "download_latency": 0.05, **meta})


def test_autothrottle_and_the_rate_control_never_both_write_the_delay() -> None:
    with pytest.raises(NotConfigured):
        AdaptiveRateMiddleware.from_crawler(get_crawler(Spider, {"AUTOTHROTTLE_ENABLED": True}))
    with pytest.raises(NotConfigured):
        AdaptiveRateMiddleware.from_crawler(get_crawler(Spider, {"RATE_CONTROL_ENABLED": False}))


def test_a_429_sets_the_slot_delay_pauses_the_slot_and_records_the_rate() -> None:
    middleware, slot, clock = make_middleware()
    for _ in range(20):
        clock[0] += 0.05
        middleware.response_downloaded(Response(URL, status=200), request())
    assert slot.delay == 0.0  # no limit seen yet, no ceiling on this host
    limited = Response(URL, status=429, headers={"Retry-After": "2"})
    middleware.response_downloaded(limited, request())  # the retry is the retry middleware's
    assert slot.delay > 0
    assert slot.lastseen == pytest.approx(clock[0] + 2)  # the slot's queue resumes then
    stats = middleware.crawler.stats
    assert stats is not None
    assert stats.get_value("rate/throttled") == 1
    assert stats.get_value(LEARNED_RATE_STAT + SLOT) == pytest.approx(1 / slot.delay, rel=0.01)


def test_errors_leave_the_rate_alone() -> None:
    middleware, slot, clock = make_middleware(RATE_CEILING=4.0)
    for status in (500, 503, 404):
        clock[0] += 1
        middleware.response_downloaded(Response(URL, status=status), request())
    assert slot.delay == pytest.approx(0.25)
    stats = middleware.crawler.stats
    assert stats is not None
    assert stats.get_value("rate/decreased") is None


def test_a_retry_after_pauses_the_whole_host_in_the_scheduler() -> None:
    middleware, _, _ = make_middleware()
    pauses: list[tuple[str, float]] = []
    middleware.crawler.signals.connect(
        lambda slot, until: pauses.append((slot, until)), host_paused, weak=False
    )
    middleware.response_downloaded(Response(URL, status=503), request())
    assert pauses == []  # a 5xx pauses only its own retry (its backoff)
    limited = Response(URL, status=429, headers={"Retry-After": "3"})
    middleware.response_downloaded(limited, request())
    assert [slot for slot, _ in pauses] == [SLOT]
    assert pauses[0][1] == pytest.approx(time.time() + 3, abs=0.5)
