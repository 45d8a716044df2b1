"""Tag history: page a tag's whole archive over GraphQL (plain HTTP POST, no browser).

For each tag, :class:`HistoryPager` walks the time ranges of the crawl newest
first (``-a since=YYYY-MM``: the months left in that year, then whole years up
to the current one; no ``since``: all time), each through cursor pages of
``HISTORY_PAGE_SIZE`` posts, until the listing ends, ``max_stories`` posts are
taken or ``HISTORY_MAX_PAGES`` pages were read. Ranges are paged one after
another, so ``max_stories`` keeps the newest ones.

The paging state of a tag — the ranges left, the cursor, the stories taken, the
pages read — travels with each listing request (``meta["history_listing"]``, a
:class:`TagListing`; one listing request per tag is in flight at a time), never in
a worker's memory: whichever worker of a shared Redis queue handles a listing
response continues from the state that came with it, so ``max_stories``,
``HISTORY_MAX_PAGES`` and the time ranges hold across any number of workers (and
across a JOBDIR resume).

Every response is validated (:func:`~topics_crawler.graphql.read_archive_response`);
on the first unusable one (GraphQL errors, an unexpected shape, a cursor that
comes back, an HTTP failure) the tag's paging stops with a logged reason,
``history/failed/<reason>`` is counted, and the tag page is requested again
with ``meta["render_reason"] = "history_fallback"`` so the browser path (the
render policy, which scrolls the tag page) can take over.

Listing requests go before the story pages they produce, until more than
``QUEUE_AHEAD_PAGES`` pages' worth of requests wait in the scheduler: then the next one
waits behind them. "Waiting" is what the scheduler itself says
(:func:`~topics_crawler.scheduling.queue_length.requests_waiting`, the same for Scrapy's, the
journal and the Redis scheduler; on Redis the shared queue as this worker sees it), read
when the next listing request is made, before the page's own stories are scheduled; so
the listing runs at most that bound, plus one page, plus what is being downloaded, ahead
of the stories it listed, and the queue (each request holding its card) stays a few
pages long however large the archive.

Stats: ``history/requests``, ``history/pages``, ``history/stories``,
``history/done``, ``history/stopped/page_cap``, ``history/failed/<reason>``,
``history/fallback``, ``history/ignored_responses``, ``history/waited_for_queue``
(listing requests put behind the waiting ones), ``history/queue_unknown`` (listing
requests made while the scheduler could not say how many wait: no ``len()``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, ClassVar, Protocol, Unpack

from scrapy import Request
from scrapy.http import Response
from scrapy.statscollectors import StatsCollector
from twisted.python.failure import Failure

from topics_crawler import settings as defaults
from topics_crawler.extensions.progress import HISTORY_EXPECTED_STAT, HISTORY_SIZED_TAGS_STAT
from topics_crawler.graphql import (
    GRAPHQL_URL,
    MAX_PAGE_SIZE,
    REQUEST_HEADERS,
    ArchiveFailure,
    ArchivePage,
    SortOrder,
    TimeRange,
    archive_result,
    read_archive_response,
    tag_archive_body,
)
from topics_crawler.items.values import format_timestamp
from topics_crawler.middlewares.blocked import RENDER_REASON_META
from topics_crawler.middlewares.render_policy import HISTORY_FALLBACK
from topics_crawler.pages import PageResult
from topics_crawler.scheduling.queue_length import requests_waiting
from topics_crawler.spiders._arguments import CrawlOptions
from topics_crawler.spiders._helpers import OptionsSpider, failure_status, request_of
from topics_crawler.spiders._paging import Callbacks, Pager, PagerArguments, PagingState

#: Request meta key: the tag slug a listing request pages.
HISTORY_TAG_META = "history_tag"
#: Request meta key: the tag's paging state (:class:`TagListing`) as of this request.
HISTORY_STATE_META = "history_listing"
#: Listing requests go before story pages, so paging never waits behind a page's stories…
LISTING_PRIORITY = 10
#: …unless this many listing pages' worth of requests already wait in the scheduler: then
#: the next listing page waits behind them, so the queue (each request holding its card)
#: stays a few pages long and memory does not grow with the archive's size.
QUEUE_AHEAD_PAGES = 4

#: How many requests wait in the scheduler now (None: it cannot say).
WaitingCount = Callable[[], int | None]


def history_ranges(since: tuple[int, int] | None, today: date) -> list[TimeRange]:
    """Time ranges covering ``since`` (year, month) to today, newest first, in as few
    requests as possible: whole years, and months only for the part of the first year
    (and of the current year, when ``since`` is in it) that is not a whole year."""
    if since is None:
        return [TimeRange.all_time()]
    first_year, first_month = since
    ranges = [TimeRange.in_year(year) for year in range(today.year, first_year, -1)]
    if first_month == 1:
        ranges.append(TimeRange.in_year(first_year))
    else:
        last_month = today.month if first_year == today.year else 12
        months = range(last_month, first_month - 1, -1)
        ranges += [TimeRange.in_month(first_year, month) for month in months]
    return ranges


#: Cursors a listing keeps for its loop check: the last pages' (a server that loops
#: comes back to a page it served lately). Bounded, so the state each listing request
#: carries (and the JOBDIR/Redis queues store) does not grow with the tag's history.
SEEN_CURSORS_KEPT = 1000


@dataclass
class TagListing(PagingState):
    """Paging state of one tag: the ranges left, the cursor, what was taken."""

    meta_key: ClassVar[str] = HISTORY_STATE_META

    tag: str
    tag_url: str
    ranges: list[TimeRange]
    after: str | None = None
    seen_cursors: list[str] = field(default_factory=list)
    """The last ``SEEN_CURSORS_KEPT`` cursors read in the current range (one coming back
    is a paging loop)."""

    @property
    def time_range(self) -> TimeRange:
        return self.ranges[0]


class HistorySpider(OptionsSpider, Protocol):
    """What the history pager needs of the spider: its listing callbacks, and the tag
    page's for the fallback."""

    def parse_history(self, response: Response) -> Iterator[Any]: ...
    def on_history_error(self, failure: Failure) -> Iterator[Any]: ...
    def parse_tag(self, response: Response) -> Iterator[Any]: ...
    def on_error(self, failure: Failure) -> Iterator[Any]: ...


class HistoryPager(Pager[TagListing]):
    """Builds listing requests, reads their responses, decides what comes next
    (``limit``: ``max_stories`` per tag)."""

    state_type = TagListing

    def __init__(
        self,
        *,
        sort_order: SortOrder,
        ranges: list[TimeRange],
        fallback: Callbacks,
        waiting: WaitingCount,
        page_size: int,
        **shape: Unpack[PagerArguments],
    ) -> None:
        super().__init__(**shape)
        self.sort_order = sort_order
        self.ranges = ranges
        self.fallback = fallback
        """The tag page's callbacks, for the fallback request."""
        self.waiting = waiting
        self.page_size = max(1, min(page_size, MAX_PAGE_SIZE))

    @classmethod
    def from_spider(cls, spider: HistorySpider) -> HistoryPager | None:
        """The pager of ``-a history`` crawls (None without it)."""
        options, crawler = spider.options, spider.crawler
        if options.history is None:
            return None
        settings = crawler.settings
        assert crawler.stats is not None
        return cls(
            sort_order=options.history,
            ranges=history_ranges(options.since, datetime.now(UTC).date()),
            fallback=Callbacks(spider.parse_tag, spider.on_error),
            waiting=lambda: requests_waiting(crawler),
            page_size=settings.getint("HISTORY_PAGE_SIZE", defaults.HISTORY_PAGE_SIZE),
            callbacks=Callbacks(spider.parse_history, spider.on_history_error),
            stats=crawler.stats,
            logger=spider.logger,
            limit=options.max_stories,
            max_pages=settings.getint("HISTORY_MAX_PAGES", defaults.HISTORY_MAX_PAGES),
        )

    def start(self, tag: str, tag_url: str) -> Request:
        """The first listing request of ``tag``."""
        return self._request(TagListing(tag, tag_url, list(self.ranges)))

    def read(self, response: Response) -> tuple[PageResult | None, Iterator[Request]]:
        """What one listing response gives: its page as a :class:`PageResult` (None when
        unusable) and the requests that follow (next page, or the fallback)."""
        listing = self.state_of(response.meta)
        if listing is None:  # not a listing request of this pager
            self.stats.inc_value("history/ignored_responses")
            return None, iter(())
        page = read_archive_response(response.body, listing.seen_cursors)
        if isinstance(page, ArchiveFailure):
            return None, self.fail(listing, page.reason, page.detail)
        nodes = page.nodes[: self.remaining(listing)]
        listing.pages += 1
        listing.taken += len(nodes)
        listing.seen_cursors = [*listing.seen_cursors, *page.cursors][-SEEN_CURSORS_KEPT:]
        self.stats.inc_value("history/pages")
        self.stats.inc_value("history/stories", len(nodes))
        scraped_at = format_timestamp(datetime.now(UTC))
        result = archive_result(ArchivePage(nodes, page.cursors), response.url, scraped_at)
        return result, self._next(listing, page)

    def failed(self, failure: Failure) -> Iterator[Request]:
        listing = self.state_of(request_of(failure).meta)
        if listing is None:
            return iter(())
        _status, reason = failure_status(failure)
        return self.fail(listing, reason, failure.getErrorMessage())

    def fail(self, listing: TagListing, reason: str, detail: str) -> Iterator[Request]:
        """Stop paging the tag for ``reason`` and hand the tag page to the browser path."""
        tag = listing.tag
        self.stats.inc_value(f"history/failed/{reason}")
        self.stats.inc_value("history/fallback")
        self.logger.error(
            "History of tag %s (%s, %s) stopped after %d page(s): %s: %s; "
            "falling back to the tag page (render_reason=%s)",
            tag, self.sort_order, listing.time_range.label(), listing.pages, reason, detail,
            HISTORY_FALLBACK,
        )  # fmt: skip
        yield fallback_request(listing.tag_url, self.fallback)

    def _next(self, listing: TagListing, page: ArchivePage) -> Iterator[Request]:
        if self.remaining(listing) == 0:
            return self._finish(listing, "max_stories reached")
        if listing.pages >= self.max_pages:
            self.stats.inc_value("history/stopped/page_cap")
            self.logger.warning(
                "History of tag %s stopped at the page cap (HISTORY_MAX_PAGES=%d), %d stories",
                listing.tag, self.max_pages, listing.taken,
            )  # fmt: skip
            return self._finish(listing, "page cap")
        if page.has_next_page:
            listing.after = page.end_cursor
            return iter([self._request(listing)])
        listing.ranges.pop(0)
        listing.after = None
        listing.seen_cursors = []  # cursors belong to one range's listing
        if not listing.ranges:
            return self._finish(listing, "listing complete")
        return iter([self._request(listing)])

    def _finish(self, listing: TagListing, why: str) -> Iterator[Request]:
        self.stats.inc_value("history/done")
        self.logger.info(
            "History of tag %s done (%s): %d stories in %d page(s)",
            listing.tag, why, listing.taken, listing.pages,
        )  # fmt: skip
        return iter(())

    def _priority(self) -> int:
        """:data:`LISTING_PRIORITY`, or below the story pages when more than
        :data:`QUEUE_AHEAD_PAGES` pages' worth of requests wait in the scheduler."""
        waiting = self.waiting()
        if waiting is None:
            self.stats.inc_value("history/queue_unknown")
        elif waiting > QUEUE_AHEAD_PAGES * self.page_size:
            self.stats.inc_value("history/waited_for_queue")
            return -LISTING_PRIORITY
        return LISTING_PRIORITY

    def _request(self, listing: TagListing) -> Request:
        self.stats.inc_value("history/requests")
        body = tag_archive_body(
            listing.tag,
            listing.time_range,
            self.sort_order,
            first=min(self.page_size, self.remaining(listing) or self.page_size),
            after=listing.after,
        )
        return self.callbacks.request(
            GRAPHQL_URL,
            method="POST",
            body=body,
            headers=REQUEST_HEADERS,
            priority=self._priority(),
            meta={
                "entity_kind": "history",
                HISTORY_TAG_META: listing.tag,
                HISTORY_STATE_META: listing.copy(),
            },
        )


def fallback_request(tag_url: str, callbacks: Callbacks) -> Request:
    """The tag page again, flagged for the browser path (it passed the dupefilter once)."""
    return callbacks.request(
        tag_url,
        dont_filter=True,
        meta={"entity_kind": "tag", RENDER_REASON_META: HISTORY_FALLBACK},
    )


def is_history_fallback(response: Response) -> bool:
    """True for the tag page requested because the history failed."""
    return response.meta.get(RENDER_REASON_META) == HISTORY_FALLBACK


def count_expected_history(
    stats: StatsCollector, result: PageResult, options: CrawlOptions
) -> None:
    """Add a tag page's story count (capped by ``options.max_stories``) to the history's
    known size, which the progress line turns into a share done and an ETA. Only for
    all-time histories: the count of a ``since`` range is not on the page."""
    if options.since is not None:
        return
    for page in result.items_of("tag_page"):
        count = getattr(page, "story_count", None)
        if count:
            cap = options.max_stories
            expected = min(count, cap) if cap else count
            stats.inc_value(HISTORY_EXPECTED_STAT, expected)
            stats.inc_value(HISTORY_SIZED_TAGS_STAT)
