"""One rate budget per egress address (issue 21): the Redis schedule spaces every worker's
requests on one address by ``1 / rate``, whoever asks; a cut becomes the address's; other
addresses are budgets of their own. The throughput it gives real workers is measured in
``bench/egress_budget.py`` (BENCHMARKS.md, "One rate budget per egress address")."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy import Request, Spider
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from tests.services import RedisServer
from topics_crawler.distributed.connection import RedisKeys
from topics_crawler.middlewares.rate import BUDGET_META, AdaptiveRateMiddleware
from topics_crawler.middlewares.rate_budget import Grant, budget_key, egress_address

URL = "http://127.0.0.1:8000/tag/llm"
SLOT = "127.0.0.1"


def test_the_egress_address_of_a_request() -> None:
    settings = Settings({"DOWNLOAD_BIND_ADDRESS": "127.0.0.3"})
    assert egress_address(Request(URL), Settings()) == "default"
    assert egress_address(Request(URL), settings) == "127.0.0.3"
    assert egress_address(Request(URL, meta={"bindaddress": ("10.0.0.7", 0)}), settings) == (
        "10.0.0.7"
    )
    assert egress_address(Request(URL, meta={"bindaddress": "10.0.0.8:0"}), Settings()) == (
        "10.0.0.8"
    )
    assert budget_key("127.0.0.3", SLOT) == "127.0.0.3|127.0.0.1"


# --- the schedule in Redis ---------------------------------------------------------------------


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    with RedisServer(tmp_path / "redis") as server:
        yield server.url


def budgets(redis_url: str, n: int) -> list[object]:
    """``n`` budgets on one Redis, as ``n`` workers hold them."""
    from topics_crawler.distributed.rate_budget import RedisRateBudget

    crawler = get_crawler(Spider, {"REDIS_URL": redis_url})
    workers = [RedisRateBudget.from_crawler(crawler) for _ in range(n)]
    for worker in workers:  # scripts loaded and connections made before anything is timed
        worker.reserve("warm-up", 1000.0, None)
        worker.lowered("warm-up", 1000.0, 0.0)
        worker.raised("warm-up", 1000.0)
    return workers


def send_times(grants: list[tuple[float, Grant]]) -> list[float]:
    """When each reserved request may go: asked at + wait."""
    return [asked + grant.wait for asked, grant in grants]


def assert_spaced(times: list[float], interval: float) -> None:
    """One send every ``interval`` seconds (the local clock around each call adds a little
    noise to each gap, none to the span)."""
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert all(gap > interval * 0.7 for gap in gaps), gaps
    assert abs((times[-1] - times[0]) - interval * len(gaps)) < 0.05, gaps


def reserve_in_turn(workers: list, key: str, count: int, rate: float, ceiling: float) -> list:
    grants = []
    for n in range(count):
        asked = time.monotonic()
        grants.append((asked, workers[n % len(workers)].reserve(key, rate, ceiling)))
    return grants


@pytest.mark.integration
def test_workers_on_one_address_share_its_ceiling(redis_url: str) -> None:
    workers = budgets(redis_url, 3)
    key = budget_key("127.0.0.2", SLOT)
    times = send_times(reserve_in_turn(workers, key, 12, rate=50.0, ceiling=5.0))
    assert_spaced(times, 1 / 5.0)  # 5/s for the three together


@pytest.mark.integration
def test_each_address_has_a_budget_of_its_own(redis_url: str) -> None:
    first, second = budgets(redis_url, 2)
    for _ in range(5):
        first.reserve(budget_key("127.0.0.2", SLOT), 5.0, 5.0)  # type: ignore[attr-defined]
    grant = second.reserve(budget_key("127.0.0.3", SLOT), 5.0, 5.0)  # type: ignore[attr-defined]
    assert grant.wait == 0.0


@pytest.mark.integration
def test_a_cut_becomes_the_addresses_rate_once_per_round_trip(redis_url: str) -> None:
    first, second = budgets(redis_url, 2)
    key = budget_key("127.0.0.2", SLOT)
    assert first.lowered(key, 2.0, sent_ago=0.0).rate == 2.0  # type: ignore[attr-defined]
    # the other worker's answer to a request sent before the cut: no second cut
    assert second.lowered(key, 1.0, sent_ago=5.0).rate == 2.0  # type: ignore[attr-defined]
    grants = reserve_in_turn([first, second], key, 6, rate=5.0, ceiling=5.0)
    assert_spaced(send_times(grants), 1 / 2.0)  # 2/s, whatever the callers say
    assert grants[0][1].rate == 2.0
    assert grants[0][1].cut_age is not None
    # growth is taken a second after the cut, not sooner
    assert second.raised(key, 3.0).rate == 2.0  # type: ignore[attr-defined]
    time.sleep(1.05)
    assert second.raised(key, 3.0).rate == 3.0  # type: ignore[attr-defined]
    assert RedisKeys("topics_crawler").rate(key) == "topics_crawler:rate:127.0.0.2|127.0.0.1"


# --- the middleware ----------------------------------------------------------------------------


class MemoryBudget:
    """A budget in this process: a fixed wait, an optional shared rate, calls recorded."""

    def __init__(self) -> None:
        self.wait = 0.3
        self.shared: float | None = None
        self.calls: list[tuple[str, str, float | None]] = []

    def reserve(self, key: str, rate: float | None, ceiling: float | None) -> Grant:
        self.calls.append(("reserve", key, rate))
        return Grant(self.wait, self.shared, 0.0 if self.shared else None)

    def lowered(self, key: str, rate: float, sent_ago: float) -> Grant:
        self.calls.append(("lowered", key, rate))
        self.shared = rate
        return Grant(0.0, rate, 0.0)

    def raised(self, key: str, rate: float) -> Grant:
        self.calls.append(("raised", key, rate))
        return Grant(0.0, self.shared, 0.0)


def middleware(**settings: object) -> AdaptiveRateMiddleware:
    crawler = get_crawler(
        Spider,
        {
            "RATE_BUDGET_CLASS": "tests.test_rate_budget.MemoryBudget",
            "RATE_CEILING": 5.0,
            "RATE_START": 0,
            "DOWNLOAD_BIND_ADDRESS": "127.0.0.2",
            **settings,
        },
    )
    return AdaptiveRateMiddleware.from_crawler(crawler)


def test_a_request_waits_for_its_slot_on_the_shared_schedule() -> None:
    rates = middleware()
    budget = rates.budget
    assert isinstance(budget, MemoryBudget)
    request = Request(URL, meta={"download_slot": SLOT})
    started = time.monotonic()
    asyncio.run(rates.process_request(request))
    assert time.monotonic() - started >= 0.29
    assert budget.calls == [("reserve", "127.0.0.2|127.0.0.1", 5.0)]
    assert request.meta[BUDGET_META] == "127.0.0.2|127.0.0.1"


def test_the_addresses_learned_rate_is_adopted() -> None:
    rates = middleware()
    budget = rates.budget
    assert isinstance(budget, MemoryBudget)
    budget.wait, budget.shared = 0.0, 2.5
    asyncio.run(rates.process_request(Request(URL, meta={"download_slot": SLOT})))
    slot_rate = rates.slots[SLOT]
    assert (slot_rate.current, slot_rate.shared) == (2.5, True)


def test_without_a_budget_nothing_waits_in_the_middleware() -> None:
    rates = middleware(RATE_BUDGET_CLASS=None)
    assert rates.budget is None
    started = time.monotonic()
    asyncio.run(rates.process_request(Request(URL, meta={"download_slot": SLOT})))
    assert time.monotonic() - started < 0.05
