"""Requests that are not due yet wait in the scheduler, never in a download slot.

A retry carries its not-before time (``meta["retry_not_before"]``, epoch seconds: a
``Retry-After`` or a backoff, set by the retry middlewares), and a host the server
rate-limited is paused as a whole (the :data:`~topics_crawler.signals.host_paused`
signal of the rate controller: a 429, a ``Retry-After``, a challenge page). Scrapy's
downloader counts every request in a slot's queue in its ``active`` set, so a request
that waited there would hold one of the ``CONCURRENT_REQUESTS`` for as long as it
waits, and other hosts would starve behind a paused one. :class:`NotBeforeGate` sits
where the scheduler hands requests to the engine instead:

* a request that is due (its own time has passed, its host is not paused) goes out;
* one that is not is *held aside* (a heap by due time, at most ``SCHEDULER_HELD_MAX``
  requests: past that the gate stops taking more from the queue until some are due,
  so memory stays bounded however long the pause);
* a due request for a *paced* slot (one with a delay: the rate controller's pace)
  that already has ``SLOT_QUEUE_AHEAD`` (2) requests waiting waits in the gate for
  room (looked at again each time the engine asks, i.e. after every download), so
  a slot's queue never grows into the concurrency either;
* when the first held request is due, a timer moves the due ones to the front of the
  gate (the next ``take`` gives them out, through the same pause and pace checks) and
  wakes the engine up at that very moment instead of at its next 5 s heartbeat.

The engine's one public wake is ``engine.crawl``, so the gate passes it one of the
released requests and drops it again in the ``request_scheduled`` signal (an
``IgnoreRequest`` there is Scrapy's documented way to keep a request from the
scheduler). The request was stored, seen and counted when it was first scheduled, and
it still is: it goes out of the gate once, with no second ``scheduler/enqueued``, no
second journal row, its ``dont_filter`` as it was, and a duplicate of it is still
filtered. The other ``request_scheduled`` receivers see it a second time (those of
the project count the outputs of callbacks and ignore it).

Only the host that was rate-limited waits, and only the retried request waits for its
own backoff (a 5xx or a timeout says nothing about the host). Held requests count as
pending, so the crawl does not finish while one waits.

Used by every scheduler of the project: :class:`NotBeforePriorityQueue` is a
``SCHEDULER_PRIORITY_QUEUE`` for Scrapy's own scheduler (memory and ``JOBDIR`` disk
queues; on close, held requests go back into the queue they came from, their
not-before time in their meta), and the crash-safe journal scheduler and the Redis
scheduler take from their own queues through a gate (there, a held request stays
pending in the journal or leased in Redis, so a SIGKILLed worker loses none).
Stats: ``scheduler/held`` (requests held aside), ``scheduler/held_ms``.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Self

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.asyncio import CallLaterResult, call_later
from scrapy.utils.misc import build_from_crawler, load_object

from topics_crawler import settings as defaults
from topics_crawler.signals import host_paused

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.pqueues import ScrapyPriorityQueue

logger = logging.getLogger(__name__)

#: A paced slot (one with a delay) gets a request when fewer than this many wait in it.
#: Request meta key: epoch seconds before which a retry should not be sent (set by the
#: retry middlewares, held back here until then).
RETRY_NOT_BEFORE_META = "retry_not_before"
SLOT_QUEUE_AHEAD = 2
#: Requests the gate holds at most for one paused or busy slot (retries waiting for
#: their own time are not counted against it).
SLOT_HELD_MAX = 8
#: Requests of such full slots one ``take`` passes over (back into the queue after it)
#: looking for one that can go: the lookahead past a paused host's backlog.
LOOKAHEAD = 32


class NotBeforeGate:
    """Hands out due requests, holds the others aside (see the module docstring)."""

    def __init__(
        self,
        crawler: Crawler,
        max_held: int = defaults.SCHEDULER_HELD_MAX,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.crawler = crawler
        self.max_held = max_held
        self.clock = clock
        #: Paused hosts (download slot keys): epoch seconds the pause ends.
        self.pauses: dict[str, float] = {}
        self._held: list[tuple[float, int, str, Request]] = []
        self._held_by_slot: Counter[str] = Counter()
        #: Due requests whose paced slot is busy, per slot key (oldest first).
        self._waiting: dict[str, deque[Request]] = {}
        self._waiting_count = 0
        #: Held requests that became due, handed back: the first ones ``take`` looks at.
        self._released: deque[Request] = deque()
        #: The released request passed to ``engine.crawl`` to wake the engine up.
        self._waking: Request | None = None
        self._order = itertools.count()
        self._timer: CallLaterResult | None = None
        self._timer_at = float("inf")
        self.call_later: Callable[[float, Callable[[], None]], CallLaterResult] = call_later
        self.closed = False
        crawler.signals.connect(self.host_paused, host_paused)
        crawler.signals.connect(self.request_scheduled, signals.request_scheduled)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        held_max = crawler.settings.getint("SCHEDULER_HELD_MAX", defaults.SCHEDULER_HELD_MAX)
        return cls(crawler, held_max)

    def __len__(self) -> int:
        return len(self._held) + self._waiting_count + len(self._released)

    def host_paused(self, slot: str, until: float) -> None:
        """The rate controller paused a host (a download slot) until ``until``."""
        if until > self.pauses.get(slot, 0.0):
            self.pauses[slot] = until

    def request_scheduled(self, request: Request) -> None:
        """Drop the request that only wakes the engine up (see the module docstring): it
        is stored already, and goes out of this gate."""
        if self._waking is not None and request is self._waking:
            raise IgnoreRequest("handed back by the not-before gate")

    def due_at(self, request: Request) -> float:
        """Epoch seconds before which ``request`` must not go out (0: any time): its own
        not-before time and its host's pause."""
        due = float(request.meta.get(RETRY_NOT_BEFORE_META) or 0.0)
        if self.pauses:
            paused = self.pauses.get(self._slot_key(request))
            if paused is not None:
                due = max(due, paused)
        return due

    def slot_busy(self, key: str) -> bool:
        """A paced slot (one with a delay) that has ``SLOT_QUEUE_AHEAD`` requests waiting:
        more would only wait in it, each holding one of the downloader's concurrency."""
        slot = self._download_slot(key)
        if slot is None or slot.delay <= 0:
            return False
        # Waiting in the slot's queue, or on their way to it through the downloader
        # middlewares: in the downloader's active set and not being transferred.
        engine: Any = self._engine()
        headed = sum(1 for request in engine.downloader.active if self._slot_key(request) == key)
        return headed - len(slot.transferring) >= SLOT_QUEUE_AHEAD

    def take(
        self, pop: Callable[[], Request | None], push_back: Callable[[Request], object]
    ) -> Request | None:
        """The next due request from ``pop`` (the queue's own), holding the others.

        First a request that waited for its busy slot and whose slot has room now; then
        the held ones whose time came (released by the timer), then the queue's. Each: not
        due → held until its time (a timer releases it), due but
        its slot busy → waits for the slot (looked at again on the engine's next ask,
        which comes after every download), else it goes out. A paused or busy slot has
        at most ``SLOT_HELD_MAX`` requests held here; more are passed over (up to
        ``LOOKAHEAD``) and go back to the queue (``push_back``) after the call, so the gate
        never drains a shared queue (other workers take from it) nor pulls a JOBDIR queue
        into memory, and other hosts' requests behind them still go out."""
        request = self._ready_waiting()
        if request is not None:
            return request
        passed_over: list[Request] = []
        try:
            while len(passed_over) < LOOKAHEAD:
                if self._released:  # held, now due: first, through the same checks
                    request = self._released.popleft()
                elif len(self) < self.max_held:
                    request = pop()
                else:
                    return None
                if request is None:
                    return None
                key = self._slot_key(request)
                due, now = self.due_at(request), self.clock()
                if due > now:
                    own = float(request.meta.get(RETRY_NOT_BEFORE_META) or 0.0)
                    if own >= due or self._held_by_slot[key] < SLOT_HELD_MAX:
                        self._hold(request, key, due, now)  # a retry's own wait: always
                        continue
                elif not self.slot_busy(key):
                    return request
                elif len(self._waiting.get(key, ())) < SLOT_HELD_MAX:
                    self._waiting.setdefault(key, deque()).append(request)
                    self._waiting_count += 1
                    continue
                passed_over.append(request)
            return None
        finally:
            for request in reversed(passed_over):  # back in the order they came
                push_back(request)

    def close(self) -> list[Request]:
        """Stop the timer; the requests still held (for their queue to keep)."""
        self.closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        held = list(self._released)
        held += [request for _, _, _, request in sorted(self._held)]
        held += [request for queue in self._waiting.values() for request in queue]
        self._released.clear()
        self._held.clear()
        self._held_by_slot.clear()
        self._waiting.clear()
        self._waiting_count = 0
        return held

    def _ready_waiting(self) -> Request | None:
        """The first request waiting for a slot that has room now (in slot order)."""
        for key, queue in self._waiting.items():
            if self.slot_busy(key):
                continue
            request = queue.popleft()
            self._waiting_count -= 1
            if not queue:
                del self._waiting[key]
            due, now = self.due_at(request), self.clock()
            if due > now:  # its host was paused meanwhile
                self._hold(request, key, due, now)
                return None
            return request
        return None

    # --- holding and releasing ------------------------------------------------------

    def _hold(self, request: Request, key: str, due: float, now: float) -> None:
        heapq.heappush(self._held, (due, next(self._order), key, request))
        self._held_by_slot[key] += 1
        stats = self.crawler.stats
        if stats is not None:
            stats.inc_value("scheduler/held")
            stats.inc_value("scheduler/held_ms", round((due - now) * 1000))
        self._wake_at(self._held[0][0], now)

    def _wake_at(self, due: float, now: float) -> None:
        if self.closed or (self._timer is not None and self._timer_at <= due):
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = due
        self._timer = self.call_later(max(0.0, due - now), self._release)

    def _release(self) -> None:
        """Move the due requests to the front of the gate and wake the engine up for them."""
        self._timer, self._timer_at = None, float("inf")
        engine: Any = self._engine()
        if engine is None or engine.spider is None:
            return  # not crawling (closing): kept, close() hands them to the queue
        now = self.clock()
        while self._held and self._held[0][0] <= now:
            _, _, key, request = heapq.heappop(self._held)
            self._held_by_slot[key] -= 1
            self._released.append(request)
        if self._held:
            self._wake_at(self._held[0][0], now)
        if self._released:
            self._waking = self._released[0]
            try:
                engine.crawl(self._waking)  # dropped in request_scheduled: a wake only
            finally:
                self._waking = None

    def _engine(self) -> Any:
        """The crawler's engine; None before the crawl starts (a scheduler used alone)."""
        try:
            return self.crawler.engine
        except RuntimeError:
            return None

    def _download_slot(self, key: str) -> Slot | None:
        engine: Any = self._engine()
        if engine is None:
            return None
        slot: Slot | None = engine.downloader.slots.get(key)
        return slot

    def _slot_key(self, request: Request) -> str:
        slot = request.meta.get("download_slot")
        if slot is not None:
            return str(slot)
        engine: Any = self._engine()
        return str(engine.downloader.get_slot_key(request)) if engine is not None else ""


class NotBeforePriorityQueue:
    """``SCHEDULER_PRIORITY_QUEUE`` for Scrapy's scheduler: a priority queue (by default
    Scrapy's own, ``SCHEDULER_GATED_PRIORITY_QUEUE``) taken from through a
    :class:`NotBeforeGate`."""

    def __init__(self, crawler: Crawler, inner: ScrapyPriorityQueue) -> None:
        self.inner = inner
        self.gate = NotBeforeGate.from_crawler(crawler)

    @classmethod
    def from_crawler(
        cls,
        crawler: Crawler,
        downstream_queue_cls: type[Any],
        key: str,
        startprios: Iterable[int] = (),
        *,
        start_queue_cls: type[Any] | None = None,
    ) -> Self:
        inner_cls = load_object(
            crawler.settings.get(
                "SCHEDULER_GATED_PRIORITY_QUEUE", "scrapy.pqueues.ScrapyPriorityQueue"
            )
        )
        inner = build_from_crawler(
            inner_cls,
            crawler,
            downstream_queue_cls=downstream_queue_cls,
            key=key,
            startprios=startprios,
            start_queue_cls=start_queue_cls,
        )
        return cls(crawler, inner)

    def push(self, request: Request) -> None:
        self.inner.push(request)

    def pop(self) -> Request | None:
        return self.gate.take(self.inner.pop, self.inner.push)

    def peek(self) -> Request | None:
        return self.inner.peek()

    def close(self) -> Any:
        """Held requests go back into the queue (a ``JOBDIR`` keeps them), then it closes."""
        for request in self.gate.close():
            self.inner.push(request)
        return self.inner.close()

    def __len__(self) -> int:
        return len(self.inner) + len(self.gate)
