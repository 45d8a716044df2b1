"""A request the gate held and hands back is scheduled once, by each scheduler of the project.

Scrapy's scheduler with :class:`~topics_crawler.scheduling.not_before.NotBeforePriorityQueue`, the
``JOBDIR`` journal scheduler and the Redis scheduler: a held request that becomes due
comes out of ``next_request`` as it went in (its ``dont_filter`` as it was), counted once
in the scheduler's stats, while a duplicate of it scheduled meanwhile is still filtered.
The engine is a stand-in whose ``crawl`` does what Scrapy's does: it schedules.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

import pytest
from scrapy import Request, Spider, signals
from scrapy.core.scheduler import BaseScheduler, Scheduler
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.misc import load_object
from scrapy.utils.project import get_project_settings
from scrapy.utils.test import get_crawler

from tests.services import RedisServer
from tests.test_not_before import NOW, Timers
from topics_crawler.scheduling.not_before import (
    RETRY_NOT_BEFORE_META,
    SLOT_HELD_MAX,
    NotBeforeGate,
    NotBeforePriorityQueue,
)
from topics_crawler.signals import host_paused


class _Spider(Spider):
    name = "handback"


class Engine:
    """What the gate and the schedulers use of Scrapy's engine; ``crawl`` schedules."""

    def __init__(self, crawler: Crawler) -> None:
        self.spider = crawler.spider
        self.signals = crawler.signals
        self.scheduler: BaseScheduler | None = None
        self.ignored: list[Request] = []
        self.dropped: list[Request] = []
        self.downloader = SimpleNamespace(
            slots={}, active=set(), get_slot_key=lambda request: urlsplit(request.url).hostname
        )

    def crawl(self, request: Request) -> None:
        """Scrapy's ``crawl``: the ``request_scheduled`` signal (a receiver raising
        ``IgnoreRequest`` keeps it from the scheduler), then the scheduler."""
        results = self.signals.send_catch_log(
            signals.request_scheduled, request=request, spider=self.spider, dont_log=IgnoreRequest
        )
        if any(isinstance(getattr(result, "value", None), IgnoreRequest) for _, result in results):
            self.ignored.append(request)
            return
        assert self.scheduler is not None
        if not self.scheduler.enqueue_request(request):
            self.dropped.append(request)


def scrapy_scheduler(crawler: Crawler, tmp_path: Path) -> tuple[BaseScheduler, NotBeforeGate]:
    scheduler = load_object(crawler.settings["SCHEDULER"]).from_crawler(crawler)
    assert isinstance(scheduler, Scheduler)
    scheduler.open(crawler.spider)  # type: ignore[arg-type]
    assert isinstance(scheduler.mqs, NotBeforePriorityQueue)
    return scheduler, scheduler.mqs.gate


def journal_scheduler(crawler: Crawler, tmp_path: Path) -> tuple[BaseScheduler, NotBeforeGate]:
    from topics_crawler.resume.scheduler import JournalScheduler

    scheduler = JournalScheduler.from_crawler(crawler)
    scheduler.open(crawler.spider)  # type: ignore[arg-type]
    return scheduler, scheduler.gate


def redis_scheduler(crawler: Crawler, tmp_path: Path) -> tuple[BaseScheduler, NotBeforeGate]:
    from topics_crawler.distributed.scheduler import RedisScheduler

    scheduler = RedisScheduler.from_crawler(crawler)
    scheduler.open(crawler.spider)  # type: ignore[arg-type]
    return scheduler, scheduler.gate


Build = Callable[[Crawler, Path], tuple[BaseScheduler, NotBeforeGate]]
#: Per scheduler: how to build it, the settings it needs, the queue its requests go to
#: (the twin of Scrapy's ``scheduler/enqueued``, like Scrapy's own ``/memory``) and its
#: "filtered" stat.
SCHEDULERS: dict[str, tuple[Build, dict[str, Any], str, str]] = {
    "scrapy": (scrapy_scheduler, {}, "memory", "dupefilter/filtered"),
    "journal": (
        journal_scheduler,
        {"JOBDIR": "{tmp}/job"},
        "journal",
        "scheduler/filtered/journal",
    ),
    "redis": (
        redis_scheduler,
        {"REDIS_URL": "{redis}", "REDIS_KEY_PREFIX": "handback"},
        "redis",
        "scheduler/filtered/redis",
    ),
}
PARAMS = [
    pytest.param("scrapy"),
    pytest.param("journal"),
    pytest.param("redis", marks=pytest.mark.integration),
]


@contextmanager
def scheduler_world(name: str, tmp_path: Path, redis_url: str) -> Iterator[SimpleNamespace]:
    """A scheduler of kind ``name`` on the project's settings, its gate on a fake clock."""
    build, settings, queue, filtered = SCHEDULERS[name]
    values = {key: value.format(tmp=tmp_path, redis=redis_url) for key, value in settings.items()}
    project = get_project_settings()
    crawler = get_crawler(
        _Spider,
        {
            "SCHEDULER_PRIORITY_QUEUE": project["SCHEDULER_PRIORITY_QUEUE"],
            "DUPEFILTER_CLASS": project["DUPEFILTER_CLASS"],
            "DISTRIBUTED_STATE_DIR": str(tmp_path / "state"),
            **values,
        },
    )
    crawler.spider = _Spider.from_crawler(crawler)
    engine = Engine(crawler)
    crawler.engine = engine  # type: ignore[assignment]
    assert crawler.stats is not None
    crawler.stats.open_spider()
    scheduler, gate = build(crawler, tmp_path)
    engine.scheduler = scheduler
    clock = [NOW]
    gate.clock = lambda: clock[0]
    gate.call_later = Timers()  # type: ignore[assignment]
    try:
        yield SimpleNamespace(
            name=name,
            crawler=crawler,
            engine=engine,
            scheduler=scheduler,
            gate=gate,
            clock=clock,
            stats=crawler.stats,
            queue=queue,
            filtered=filtered,
        )
    finally:
        scheduler.close("finished")


Scenario = Callable[[SimpleNamespace], None]


def run(scenario: Scenario, name: str, tmp_path: Path) -> None:
    """``scenario`` on a scheduler of kind ``name``, inside a running asyncio loop (the
    journal scheduler's checkpoint timer needs one), with a redis-server for Redis."""

    async def main(redis_url: str) -> None:
        with scheduler_world(name, tmp_path, redis_url) as world:
            scenario(world)

    if name != "redis":
        asyncio.run(main(""))
        return
    with RedisServer(tmp_path / "redis") as server:
        asyncio.run(main(server.url))


def assert_counted(world: SimpleNamespace, requests: int) -> None:
    """Scrapy's ``scheduler/enqueued`` and ``scheduler/dequeued`` (and their twins of the
    scheduler's queue) count each of ``requests`` once, as Scrapy's scheduler does."""
    stats = world.stats
    for stat in ("scheduler/enqueued", "scheduler/dequeued"):
        assert (stats.get_value(stat), stats.get_value(f"{stat}/{world.queue}")) == (
            requests,
            requests,
        ), stat


def out(world: SimpleNamespace) -> list[Request]:
    """Everything ``next_request`` gives now."""
    taken = []
    while (request := world.scheduler.next_request()) is not None:
        taken.append(request)
    return taken


@pytest.mark.parametrize("name", PARAMS)
def test_a_paused_hosts_request_comes_back_once_unchanged_and_its_duplicate_is_filtered(
    name: str, tmp_path: Path
) -> None:
    run(paused_host_scenario, name, tmp_path)


def paused_host_scenario(world: SimpleNamespace) -> None:
    scheduler, stats = world.scheduler, world.stats
    world.crawler.signals.send_catch_log(host_paused, slot="a.test", until=NOW + 3)
    assert scheduler.enqueue_request(Request("http://a.test/paused", priority=5))
    assert scheduler.enqueue_request(Request("http://b.test/other"))
    assert [r.url for r in out(world)] == ["http://b.test/other"]  # a.test's one is held
    assert scheduler.has_pending_requests()
    # A duplicate scheduled while the first waits in the gate is still a duplicate.
    assert not scheduler.enqueue_request(Request("http://a.test/paused"))

    world.clock[0] = NOW + 3
    world.gate.call_later.fire()  # due: handed back, the engine woken up
    assert world.engine.dropped == []
    assert [r.url for r in world.engine.ignored] == ["http://a.test/paused"]  # the wake
    back = out(world)
    assert [(r.url, r.dont_filter, r.priority) for r in back] == [
        ("http://a.test/paused", False, 5)
    ]
    assert not scheduler.has_pending_requests()
    assert_counted(world, 2)  # each request once
    assert stats.get_value(world.filtered) == 1
    # Fetched and seen: scheduling it again is filtered, as for any seen request.
    assert not scheduler.enqueue_request(Request("http://a.test/paused"))
    assert stats.get_value(world.filtered) == 2


@pytest.mark.parametrize("name", PARAMS)
def test_a_retry_held_for_its_own_time_comes_back_once_with_its_flags(
    name: str, tmp_path: Path
) -> None:
    run(retry_scenario, name, tmp_path)


def retry_scenario(world: SimpleNamespace) -> None:
    scheduler = world.scheduler
    first = Request("http://a.test/page")
    assert scheduler.enqueue_request(first)
    assert [r.url for r in out(world)] == ["http://a.test/page"]
    # Downloaded, answered 503: the retry middleware's retry (dont_filter, as Scrapy's).
    retry = first.replace(dont_filter=True, meta={RETRY_NOT_BEFORE_META: NOW + 9})
    assert scheduler.enqueue_request(retry)
    assert out(world) == []  # held for its own time
    world.clock[0] = NOW + 9
    world.gate.call_later.fire()
    back = out(world)
    assert [(r.url, r.dont_filter) for r in back] == [("http://a.test/page", True)]
    assert back[0].meta[RETRY_NOT_BEFORE_META] == NOW + 9
    assert_counted(world, 2)  # the page, its retry: once each
    assert not scheduler.has_pending_requests()


@pytest.mark.parametrize("name", PARAMS)
def test_a_paused_hosts_backlog_passed_over_by_the_gate_comes_out_once_each(
    name: str, tmp_path: Path
) -> None:
    run(backlog_scenario, name, tmp_path)


def backlog_scenario(world: SimpleNamespace) -> None:
    """More requests of a paused host than the gate holds for it: the rest go back to
    the queue (passed over), not counted again, their ``dont_filter`` as it was."""
    scheduler, stats = world.scheduler, world.stats
    world.crawler.signals.send_catch_log(host_paused, slot="a.test", until=NOW + 3)
    backlog = [f"http://a.test/{n}" for n in range(SLOT_HELD_MAX + 3)]
    for url in [*backlog, "http://b.test/other"]:
        assert scheduler.enqueue_request(Request(url))
    assert [r.url for r in out(world)] == ["http://b.test/other"]
    assert len(world.gate) == SLOT_HELD_MAX  # the rest wait in the queue
    assert not scheduler.enqueue_request(Request(backlog[-1]))  # passed over, still seen
    world.clock[0] = NOW + 3
    world.gate.call_later.fire()
    back = out(world)
    assert sorted(r.url for r in back) == sorted(backlog)
    assert not any(r.dont_filter for r in back)
    assert not scheduler.has_pending_requests()
    assert_counted(world, len(backlog) + 1)
    assert stats.get_value(world.filtered) == 1
