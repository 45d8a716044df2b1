"""The scheduler's not-before gate: which requests go out, which wait aside, and for how long."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, Spider, signals
from scrapy.exceptions import IgnoreRequest
from scrapy.squeues import PickleLifoDiskQueue
from scrapy.utils.test import get_crawler

from topics_crawler.scheduling.not_before import (
    LOOKAHEAD,
    RETRY_NOT_BEFORE_META,
    SLOT_HELD_MAX,
    NotBeforeGate,
    NotBeforePriorityQueue,
)
from topics_crawler.signals import host_paused

NOW = 1_000_000.0


class Timers:
    """Stands in for ``call_later``: records what the gate scheduled, fires on demand."""

    def __init__(self) -> None:
        self.pending: list[tuple[float, Any]] = []

    def __call__(self, delay: float, func: Any) -> SimpleNamespace:
        entry = (delay, func)
        self.pending.append(entry)
        return SimpleNamespace(cancel=lambda: self.pending.remove(entry))

    def fire(self) -> None:
        _, func = self.pending.pop(0)
        func()


def slot(delay: float, waiting: int) -> Any:
    """A download slot as the gate sees it: its delay, what waits in it, what transfers."""
    return SimpleNamespace(delay=delay, queue=deque([object()] * waiting), transferring={1})


def make_gate(slots: dict[str, Any] | None = None, **settings: Any) -> tuple[NotBeforeGate, Any]:
    crawler = get_crawler(Spider, settings)
    crawled: list[Request] = []
    crawler.engine = SimpleNamespace(  # type: ignore[assignment]
        spider=object(),
        crawl=crawled.append,
        downloader=SimpleNamespace(
            slots=slots or {},
            get_slot_key=lambda request: urlsplit(request.url).hostname,
            active=set(),  # the requests of every slot (queued, transferring), as Scrapy's
        ),
    )
    crawler.stats.open_spider()  # type: ignore[union-attr]
    gate = NotBeforeGate.from_crawler(crawler)
    clock = [NOW]
    gate.clock = lambda: clock[0]
    gate.call_later = Timers()  # type: ignore[assignment]
    return gate, SimpleNamespace(crawler=crawler, crawled=crawled, clock=clock)


def queue_of(*requests: Request) -> tuple[Any, Any]:
    """A queue's pop and push-back, as the gate takes them."""
    waiting = deque(requests)
    return (lambda: waiting.popleft() if waiting else None), waiting.appendleft


def test_a_request_not_due_waits_aside_and_the_next_due_one_goes_out() -> None:
    gate, world = make_gate()
    retry = Request("http://a.test/1", meta={RETRY_NOT_BEFORE_META: NOW + 5})
    fresh = Request("http://a.test/2")
    assert gate.take(*queue_of(retry, fresh)) is fresh
    assert len(gate) == 1  # still pending: the crawl does not finish
    assert gate.take(*queue_of()) is None
    assert world.crawler.stats.get_value("scheduler/held") == 1
    assert gate.call_later.pending[0][0] == 5  # woken when it is due


def test_when_due_a_held_request_is_handed_back_and_the_engine_woken_for_it() -> None:
    """The wake is ``engine.crawl`` (the engine's only public one); the gate drops that
    request in ``request_scheduled`` (it is stored already) and gives it out next."""
    gate, world = make_gate()
    outcomes: list[Any] = []

    def crawl(request: Request) -> None:  # what Scrapy's engine does first
        results = world.crawler.signals.send_catch_log(
            signals.request_scheduled, request=request, spider=None, dont_log=IgnoreRequest
        )
        outcomes.extend(type(getattr(result, "value", result)) for _, result in results)

    world.crawler.engine.crawl = crawl
    retry = Request("http://a.test/1", meta={RETRY_NOT_BEFORE_META: NOW + 5})
    gate.take(*queue_of(retry))
    world.clock[0] = NOW + 5
    gate.call_later.fire()
    assert outcomes == [IgnoreRequest]  # never reaches the scheduler a second time
    crawl(retry)
    assert outcomes[1:] == [type(None)]  # only while it is the wake
    assert len(gate) == 1
    assert gate.take(*queue_of(Request("http://b.test/1"))) is retry  # first in line
    assert not retry.dont_filter
    assert len(gate) == 0
    assert gate.call_later.pending == []


def test_a_backoff_retry_waits_alone_a_paused_host_waits_as_a_whole() -> None:
    gate, world = make_gate()
    backoff = Request("http://a.test/1", meta={RETRY_NOT_BEFORE_META: NOW + 5})
    same_host = Request("http://a.test/2")
    assert gate.take(*queue_of(backoff, same_host)) is same_host  # a 5xx retry: itself only
    world.crawler.signals.send_catch_log(host_paused, slot="a.test", until=NOW + 3)
    paused = Request("http://a.test/3")
    other_host = Request("http://b.test/1")
    assert gate.take(*queue_of(paused, other_host)) is other_host
    assert len(gate) == 2
    world.clock[0] = NOW + 3
    gate.call_later.fire()
    assert world.crawled == [paused]  # the backoff retry still has 2 s to go
    assert gate.take(*queue_of()) is paused
    assert gate.call_later.pending[0][0] == 2


def test_a_busy_paced_slot_gets_its_next_request_when_it_has_room() -> None:
    paced = slot(delay=0.2, waiting=2)
    gate, world = make_gate({"a.test": paced})
    active = world.crawler.engine.downloader.active
    active.update(Request(f"http://a.test/q{n}") for n in range(3))  # 2 waiting, 1 transfers
    first, other = Request("http://a.test/1"), Request("http://b.test/1")
    assert gate.take(*queue_of(first, other)) is other  # a.test has 2 waiting already
    assert len(gate) == 1
    assert gate.take(*queue_of()) is None
    active.pop()  # one of them was sent (and done)
    assert gate.take(*queue_of(Request("http://b.test/2"))) is first  # waited first, goes first
    unpaced = slot(delay=0.0, waiting=5)
    gate, world = make_gate({"c.test": unpaced})
    world.crawler.engine.downloader.active.update(Request(f"http://c.test/q{n}") for n in range(5))
    request = Request("http://c.test/1")
    assert gate.take(*queue_of(request)) is request  # no pace: the concurrency bounds it


def test_the_gate_holds_at_most_its_bound_then_leaves_the_rest_queued() -> None:
    gate, _ = make_gate(SCHEDULER_HELD_MAX=2)
    later = [Request(f"http://a.test/{i}", meta={RETRY_NOT_BEFORE_META: NOW + 9}) for i in range(3)]
    pop, push = queue_of(*later, Request("http://a.test/due"))
    assert gate.take(pop, push) is None
    assert len(gate) == 2
    assert pop() is later[2]  # never taken out of the queue


def test_a_paused_host_never_drains_the_queue_into_the_gate() -> None:
    """Past SLOT_HELD_MAX requests of a paused host the gate passes the rest over (back
    into the queue: a shared Redis queue keeps them for other workers, a JOBDIR queue on
    disk), looking up to LOOKAHEAD requests further; retries waiting for their own time
    do not count."""
    gate, world = make_gate()
    world.crawler.signals.send_catch_log(host_paused, slot="a.test", until=NOW + 3)
    paused = [Request(f"http://a.test/{n}") for n in range(SLOT_HELD_MAX + 1)]
    other = Request("http://b.test/1")
    pop, push = queue_of(*paused, other)
    assert gate.take(pop, push) is other  # looked past the paused host's backlog
    assert len(gate) == SLOT_HELD_MAX
    assert pop() is paused[-1]  # pushed back, first in line again
    backlog = [Request(f"http://a.test/more{n}") for n in range(LOOKAHEAD)]
    pop, push = queue_of(*backlog, other)
    assert gate.take(pop, push) is None  # the lookahead is bounded
    assert [pop() for _ in backlog] == backlog  # all back, in their order
    retry = Request("http://a.test/r", meta={RETRY_NOT_BEFORE_META: NOW + 9})
    assert gate.take(*queue_of(retry, other)) is other
    assert len(gate) == SLOT_HELD_MAX + 1


def test_the_priority_queue_keeps_held_requests_in_its_disk_queue_on_close(
    tmp_path: Path,
) -> None:
    crawler = get_crawler(Spider)
    crawler.engine = SimpleNamespace(  # type: ignore[assignment]
        spider=None, downloader=SimpleNamespace(slots={}, get_slot_key=lambda r: "a.test")
    )

    first = NotBeforePriorityQueue.from_crawler(
        crawler, downstream_queue_cls=PickleLifoDiskQueue, key=str(tmp_path)
    )
    first.gate.call_later = Timers()  # type: ignore[assignment]
    first.push(Request("http://a.test/held", meta={RETRY_NOT_BEFORE_META: 4e9}))
    first.push(Request("http://a.test/due"))
    popped = first.pop()
    assert popped is not None
    assert popped.url == "http://a.test/due"
    assert len(first) == 1
    assert first.pop() is None
    state = first.close()  # a JOBDIR: the held request is written back with its time
    again = NotBeforePriorityQueue.from_crawler(
        crawler, downstream_queue_cls=PickleLifoDiskQueue, key=str(tmp_path), startprios=state
    )
    again.gate.call_later = Timers()  # type: ignore[assignment]
    assert len(again) == 1
    assert again.pop() is None  # still not due after the restart
    assert len(again) == 1
    again.close()
