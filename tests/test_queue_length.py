"""``requests_waiting``: what waits in each scheduler of the project, asked the public way.

Scrapy's scheduler, the ``JOBDIR`` journal scheduler and the Redis scheduler, each
through ``crawler.engine.scheduler`` and ``len()``: requests held by the not-before gate
count as waiting, a resumed journal's pending requests too, and on Redis every worker
sees the shared queue — where the stats ``scheduler/enqueued`` − ``scheduler/dequeued``
say something else.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from tests.services import RedisServer
from tests.test_not_before import NOW
from tests.test_not_before_handback import PARAMS, run, scheduler_world
from tests.test_not_before_handback import Engine as EngineStandIn
from tests.test_not_before_handback import _Spider as HandbackSpider
from topics_crawler.scheduling.queue_length import requests_waiting
from topics_crawler.signals import host_paused


def stat_difference(world: SimpleNamespace) -> int:
    stats = world.stats
    enqueued = int(stats.get_value("scheduler/enqueued", 0))
    return enqueued - int(stats.get_value("scheduler/dequeued", 0))


@pytest.mark.parametrize("name", PARAMS)
def test_held_requests_wait_too(name: str, tmp_path: Path) -> None:
    run(held_scenario, name, tmp_path)


def held_scenario(world: SimpleNamespace) -> None:
    scheduler, crawler = world.scheduler, world.crawler
    assert requests_waiting(crawler) == 0
    crawler.signals.send_catch_log(host_paused, slot="a.test", until=NOW + 3)
    assert scheduler.enqueue_request(Request("http://a.test/paused", priority=5))  # first out
    for url in ("http://b.test/1", "http://b.test/2"):
        assert scheduler.enqueue_request(Request(url))
    assert requests_waiting(crawler) == 3
    assert scheduler.next_request() is not None  # a b.test one; a.test's is held
    assert len(world.gate) == 1
    assert requests_waiting(crawler) == 2 == stat_difference(world)


def test_none_before_the_crawl_opens_its_scheduler_or_without_len() -> None:
    crawler = get_crawler(HandbackSpider)
    assert requests_waiting(crawler) is None  # no engine yet
    crawler.spider = HandbackSpider.from_crawler(crawler)
    engine = EngineStandIn(crawler)
    crawler.engine = engine  # type: ignore[assignment]
    assert requests_waiting(crawler) is None  # no scheduler yet
    engine.scheduler = SimpleNamespace(  # type: ignore[assignment]
        has_pending_requests=lambda: True, enqueue_request=bool, next_request=lambda: None
    )
    assert requests_waiting(crawler) is None  # a scheduler with no len()


def test_a_resumed_journal_counts_the_requests_an_earlier_run_queued(tmp_path: Path) -> None:
    """The stats of the resumed run start at 0 and go negative; what waits is still known."""

    async def main() -> None:
        with scheduler_world("journal", tmp_path, "") as first:
            for n in range(3):
                assert first.scheduler.enqueue_request(Request(f"http://b.test/{n}"))
        with scheduler_world("journal", tmp_path, "") as resumed:
            assert requests_waiting(resumed.crawler) == 3
            assert resumed.scheduler.next_request() is not None
            assert requests_waiting(resumed.crawler) == 2
            assert stat_difference(resumed) == -1

    asyncio.run(main())


@pytest.mark.integration
def test_every_redis_worker_sees_the_shared_queue(tmp_path: Path) -> None:
    """Worker A queues, worker B takes: both see what waits for either of them."""

    async def main(url: str) -> None:
        with (
            scheduler_world("redis", tmp_path / "a", url) as a,
            scheduler_world("redis", tmp_path / "b", url) as b,
        ):
            for n in range(3):
                assert a.scheduler.enqueue_request(Request(f"http://b.test/{n}"))
            assert requests_waiting(a.crawler) == requests_waiting(b.crawler) == 3
            assert b.scheduler.next_request() is not None
            assert requests_waiting(a.crawler) == requests_waiting(b.crawler) == 2
            assert (stat_difference(a), stat_difference(b)) == (3, -1)

    with RedisServer(tmp_path / "redis") as server:
        asyncio.run(main(server.url))
