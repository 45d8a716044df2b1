"""The shape every listing walker shares: a tag's GraphQL history (``_history``), an
author's archive (``_author_archive``), a story's responses (``_responses``).

A walker pages one listing as a chain of requests, one in flight per listing. It is three
pieces, the same in each walker (copy one to add one, e.g. a tag's day archive):

1. **Its state**: a :class:`PagingState` dataclass (``taken``, ``pages``, plus what its
   listing needs: a cursor, the cursors seen, the ranges left) naming its request meta key
   in ``meta_key``. Each request carries the state as of that request and
   :meth:`~CarriedState.from_meta` reads a copy, so nothing per listing stays in a worker:
   any worker of a shared Redis queue, or a ``JOBDIR`` resume, continues a listing from the
   request it holds, and memory does not grow with the crawl. States are picklable (the
   Redis and ``JOBDIR`` queues store requests).
2. **Its pager**: a :class:`Pager` subclass, built by its ``from_spider(spider)``
   classmethod (None when its ``-a`` argument is off), typed against a small ``Protocol``
   naming only what it needs of the spider. ``from_spider`` reads the pager's settings, once,
   with their defaults from :mod:`topics_crawler.settings` (each written there only). Every
   pager is built with the same keywords: ``callbacks`` (the spider methods its requests
   carry), ``stats``, ``logger``, ``limit`` (items per listing, None: no cap),
   ``max_pages`` (pages per listing at most, never a loop) and ``report`` (a failure for
   ``failures.jsonl``; None: none), plus what is its own.
3. **Its methods**: ``start(…)`` (the first request of a listing), ``read(response)`` (what
   one answer gives and the requests that follow) and :meth:`Pager.failed` (a request that
   failed for good: its listing stops; the requests that replace it, if any). The spider
   holds the pager and has one callback and one errback per walker that hand it the
   response or the failure (Scrapy stores a request's callback by the spider method's name,
   for ``JOBDIR`` and Redis, so they are the spider's own methods).

Stats go under the walker's name: ``<name>/requests``, ``<name>/pages``,
``<name>/failed/<reason>``, ``<name>/stopped/page_cap``, ``<name>/done``, …
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, Generic, NotRequired, Protocol, Self, TypedDict, TypeVar, Unpack

from scrapy import Request
from scrapy.statscollectors import StatsCollector
from twisted.python.failure import Failure

from topics_crawler.spiders._helpers import Logger

#: A spider callback or errback a request carries.
Callback = Callable[..., Any]
#: ``report(url, reason, detail)``: record a listing's failure for ``failures.jsonl``.
Report = Callable[[str, str, str], None]


@dataclass
class CarriedState:
    """State a request carries in its meta under :attr:`meta_key` (a listing's paging
    state, the related-tag walk): a picklable dataclass, copied whenever it is read or
    sent on."""

    meta_key: ClassVar[str]

    def copy(self) -> Self:
        """A copy with its own lists, sets and dicts, so reading one answer never changes
        the state another request holds."""
        containers = {
            spec.name: copy.copy(value)
            for spec in fields(self)
            if isinstance(value := getattr(self, spec.name), list | set | dict)
        }
        return replace(self, **containers)

    @classmethod
    def from_meta(cls, meta: dict[str, Any]) -> Self | None:
        """A copy of the state a request carries (None: not such a request)."""
        state = meta.get(cls.meta_key)
        return state.copy() if isinstance(state, cls) else None


@dataclass(kw_only=True)
class PagingState(CarriedState):
    """What every listing's state counts: the items taken and the pages read so far."""

    taken: int = 0
    pages: int = 0


@dataclass(frozen=True)
class Callbacks:
    """The spider's callback and errback a walker's requests carry."""

    callback: Callback
    errback: Callback

    def request(self, url: str, **kwargs: Any) -> Request:
        """A request to ``url`` carrying these callbacks."""
        return Request(url, callback=self.callback, errback=self.errback, **kwargs)


class ReportingSpider(Protocol):
    """What a pager that reports its failures needs of the spider."""

    def report_failure(
        self, url: str, kind: str, status: int | None, reason: str, meta: dict[str, Any]
    ) -> None: ...


def failure_report(spider: ReportingSpider, kind: str) -> Report:
    """``report(url, reason, detail)`` sending the spider's ``page_failed`` for ``kind``."""
    return lambda url, reason, _detail: spider.report_failure(url, kind, None, reason, {})


State = TypeVar("State", bound=PagingState)


class PagerArguments(TypedDict):
    """The keywords every pager is built with (a subclass's ``__init__`` takes its own,
    then ``**shape: Unpack[PagerArguments]``)."""

    callbacks: Callbacks
    stats: StatsCollector
    logger: Logger
    limit: int | None
    """Items taken per listing (None: no cap)."""
    max_pages: int
    """Pages read per listing at most (so a server that loops costs a bounded crawl)."""
    report: NotRequired[Report | None]
    """Records a listing's failure for ``failures.jsonl`` (None: not recorded)."""


class Pager(ABC, Generic[State]):
    """Builds a listing's requests, reads their answers, decides what comes next (see the
    module for the shape; subclasses add ``from_spider``, ``start`` and ``read``)."""

    #: The state class its requests carry.
    state_type: type[State]

    def __init__(self, **shape: Unpack[PagerArguments]) -> None:
        self.callbacks = shape["callbacks"]
        self.stats = shape["stats"]
        self.logger = shape["logger"]
        self.limit = shape["limit"]
        self.max_pages = max(1, shape["max_pages"])
        self.report = shape.get("report")

    def state_of(self, meta: dict[str, Any]) -> State | None:
        """A copy of the listing state a request carries (None: not one of this pager's)."""
        return self.state_type.from_meta(meta)

    def remaining(self, state: State) -> int | None:
        """Items the listing may still take (None: no cap)."""
        if self.limit is None:
            return None
        return max(0, self.limit - state.taken)

    @abstractmethod
    def failed(self, failure: Failure) -> Iterator[Request]:
        """A request of this pager failed for good (HTTP error, timeout): its listing stops;
        the requests that replace it, if any."""
