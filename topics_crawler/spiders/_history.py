"""Tag history: page a tag's whole archive over GraphQL (plain HTTP POST, no browser).

For each tag, :class:`HistoryPager` walks the time ranges of the crawl newest
first (``-a since``/``-a until``: whole years where they are whole, months at the ends;
neither: all time), each through cursor pages of ``HISTORY_PAGE_SIZE`` posts (20: what
Medium answers at most), until the listing ends, ``max_stories`` posts are
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
on the first unusable one (a 403 or a challenge where Medium refuses GraphQL, GraphQL
``errors`` — drift, :mod:`topics_crawler.graphql.drift` —, an unexpected shape, a cursor
that comes back, an HTTP failure) the tag's paging stops with a logged reason,
``history/failed/<reason>`` is counted and written to ``failures.jsonl``, and the tag is
listed again from the start through its day archive (:mod:`topics_crawler.spiders._day_archive`,
``history/switched_to_day_archive``). A pager built without that stand-in requests the tag
page again with ``meta["render_reason"] = "history_fallback"``, for the browser path.

Listing requests go before the story pages they produce, until the scheduler holds a few
pages' worth: :mod:`topics_crawler.spiders._listing_requests`. The time ranges and the
expected size of a history: :mod:`topics_crawler.spiders._history_span`.

Stats: ``history/requests``, ``history/pages``, ``history/stories``,
``history/done``, ``history/source/graphql`` (tags the GraphQL listing completed),
``history/stopped/page_cap``, ``history/failed/<reason>``,
``history/switched_to_day_archive``, ``history/out_of_range`` (posts of the ranges' months
outside the ``since``/``until`` days), ``history/fallback``, ``history/ignored_responses``,
``history/waited_for_queue`` (listing requests put behind the waiting ones),
``history/queue_unknown`` (listing requests made while the scheduler could not say how many
wait: no ``len()``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, ClassVar, Protocol, Unpack

from scrapy import Request
from scrapy.http import Response
from twisted.python.failure import Failure

from topics_crawler import settings as defaults
from topics_crawler.extensions.progress import HISTORY_LISTED_PREFIX
from topics_crawler.graphql import (
    GRAPHQL_URL,
    MAX_PAGE_SIZE,
    OPERATION_NAME,
    REQUEST_HEADERS,
    ArchiveFailure,
    ArchivePage,
    SortOrder,
    TimeRange,
    archive_result,
    read_archive_response,
    tag_archive_body,
)
from topics_crawler.graphql.drift import GRAPHQL_ERROR_STATUSES, failure_detail
from topics_crawler.items import TagStory
from topics_crawler.items.listing import HISTORY
from topics_crawler.items.values import format_timestamp
from topics_crawler.middlewares.download_failures import failure_status
from topics_crawler.middlewares.render_policy import HISTORY_FALLBACK
from topics_crawler.pages import PageResult
from topics_crawler.scheduling.queue_length import requests_waiting
from topics_crawler.spiders._helpers import OptionsSpider, request_of
from topics_crawler.spiders._history_span import history_ranges, in_history_days
from topics_crawler.spiders._listing_requests import (
    WaitingCount,
    fallback_request,
    listing_priority,
)
from topics_crawler.spiders._memberships import listed_stories
from topics_crawler.spiders._missing_tags import TAG_NOT_FOUND, MissingTags
from topics_crawler.spiders._paging import (
    Callbacks,
    Pager,
    PagerArguments,
    PagingState,
    ReportingSpider,
    failure_report,
)

#: Request meta key: the tag slug a listing request pages.
HISTORY_TAG_META = "history_tag"
#: Request meta key: the tag's paging state (:class:`TagListing`) as of this request.
HISTORY_STATE_META = "history_listing"

#: ``stand_in(listing, why)``: the requests that list a tag whose GraphQL listing failed.
StandIn = Callable[["TagListing", str | None], Iterator[Request]]


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


class StandInWalk(Protocol):
    """What stands in for a failed GraphQL listing (the day-archive walk,
    :class:`~topics_crawler.spiders._day_archive.DayArchiveWalker`): it starts a tag's walk."""

    def start(self, tag: str, tag_url: str, why: str | None = None) -> Request: ...


class HistorySpider(ReportingSpider, OptionsSpider, Protocol):
    """What the history pager needs of the spider: its listing callbacks, the tag page's
    for the fallback, and the day-archive walk that stands in for a failed listing."""

    def parse_history(self, response: Response) -> Iterator[Any]: ...
    def on_history_error(self, failure: Failure) -> Iterator[Any]: ...
    def parse_tag(self, response: Response) -> Iterator[Any]: ...
    def on_error(self, failure: Failure) -> Iterator[Any]: ...

    @property
    def day_archive(self) -> StandInWalk | None: ...

    @property
    def missing_tags(self) -> MissingTags: ...


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
        days: tuple[date | None, date | None] = (None, None),
        stand_in: StandIn | None = None,
        missing: MissingTags | None = None,
        **shape: Unpack[PagerArguments],
    ) -> None:
        super().__init__(**shape)
        self.missing = missing
        """The tags found not to exist (their listing is not tried another way)."""
        self.sort_order = sort_order
        self.ranges = ranges
        self.since, self.until = days
        """The first and last day of the history (the ranges' months may be wider)."""
        self.stand_in = stand_in
        """Lists a tag another way when its GraphQL listing fails (the day archive)."""
        self.fallback = fallback
        """The tag page's callbacks, for the fallback request."""
        self.waiting = waiting
        self.page_size = max(1, min(page_size, MAX_PAGE_SIZE))

    @classmethod
    def from_spider(cls, spider: HistorySpider) -> HistoryPager | None:
        """The pager of ``-a history=newest|most_read`` crawls (None without it), the day
        archive standing in for a tag whose GraphQL listing fails."""
        options, crawler = spider.options, spider.crawler
        if options.history is None or options.history == "ARCHIVE":
            return None
        settings = crawler.settings
        assert crawler.stats is not None
        walker = spider.day_archive
        return cls(
            sort_order=options.history,
            ranges=history_ranges(options.since, options.until, datetime.now(UTC).date()),
            days=(options.since, options.until),
            stand_in=(
                (lambda listing, why: iter([walker.start(listing.tag, listing.tag_url, why)]))
                if walker is not None
                else None
            ),
            report=failure_report(spider, "history"),
            missing=spider.missing_tags,
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
            return None, self.fail(listing, page.reason, self._detail(page))
        nodes = [node for node in page.nodes if in_history_days(node, self.since, self.until)]
        if len(nodes) < len(page.nodes):
            self.stats.inc_value("history/out_of_range", len(page.nodes) - len(nodes))
        nodes = nodes[: self.remaining(listing)]
        listing.pages += 1
        listing.taken += len(nodes)
        listing.seen_cursors = [*listing.seen_cursors, *page.cursors][-SEEN_CURSORS_KEPT:]
        self.stats.inc_value("history/pages")
        self.stats.inc_value("history/stories", len(nodes))
        scraped_at = format_timestamp(datetime.now(UTC))
        result = archive_result(ArchivePage(nodes, page.cursors), response.url, scraped_at)
        return result, self._next(listing, page)

    def listed(self, response: Response, result: PageResult) -> list[TagStory]:
        """The tag's ``history`` rows of the stories one listing page gave (:meth:`read`),
        ranked after the pages before it."""
        listing = self.state_of(response.meta)  # as of the request: before this page
        if listing is None:
            return []
        return listed_stories(listing.tag, HISTORY, result, listing.taken + 1)

    def failed(self, failure: Failure) -> Iterator[Request]:
        listing = self.state_of(request_of(failure).meta)
        if listing is None:
            return iter(())
        _status, reason = failure_status(failure)
        return self.fail(listing, reason, failure.getErrorMessage())

    def fail(self, listing: TagListing, reason: str, detail: str) -> Iterator[Request]:
        """Stop paging the tag over GraphQL for ``reason`` (counted, logged, reported) and
        list it another way: through the day archive when one stands in, else the tag page
        in the browser."""
        tag = listing.tag
        self.stats.inc_value(f"history/failed/{reason}")
        if reason == TAG_NOT_FOUND and not listing.pages:
            yield from self._no_such_tag(listing)
            return
        if self.report is not None:
            self.report(listing.tag_url, reason, detail)
        if self.stand_in is not None:
            self.stats.inc_value("history/switched_to_day_archive")
            why = f"GraphQL {OPERATION_NAME} failed after {listing.pages} page(s): {reason}"
            self.logger.error("History of tag %s: %s: %s", tag, why, detail)
            yield from self.stand_in(listing, why)
            return
        self.stats.inc_value("history/fallback")
        self.logger.error(
            "History of tag %s (%s, %s) stopped after %d page(s): %s: %s; "
            "falling back to the tag page (render_reason=%s)",
            tag, self.sort_order, listing.time_range.label(), listing.pages, reason, detail,
            HISTORY_FALLBACK,
        )  # fmt: skip
        yield fallback_request(listing.tag_url, self.fallback)

    def _no_such_tag(self, listing: TagListing) -> Iterator[Request]:
        """GraphQL knows no such tag: nothing more when its tag page or archive already said
        so (their one line, :class:`MissingTags`); else its day archive decides, quietly."""
        if self.missing is not None and self.missing.known(listing.tag):
            return
        if self.stand_in is not None:
            self.logger.info("History of tag %s: GraphQL knows no such tag; asking its day "
                             "archive", listing.tag)  # fmt: skip
            yield from self.stand_in(listing, None)
            return
        yield fallback_request(listing.tag_url, self.fallback)  # its 404 says "not found"

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

    def _detail(self, failure: ArchiveFailure) -> str:
        return failure_detail(self.stats, OPERATION_NAME, failure)

    def _finish(self, listing: TagListing, why: str) -> Iterator[Request]:
        self.stats.set_value(f"{HISTORY_LISTED_PREFIX}{listing.tag}", listing.taken)
        self.stats.inc_value("history/done")
        self.stats.inc_value("history/source/graphql")
        self.logger.info(
            "History of tag %s done (%s): %d stories in %d page(s)",
            listing.tag, why, listing.taken, listing.pages,
        )  # fmt: skip
        return iter(())

    def _priority(self) -> int:
        return listing_priority(self.waiting(), self.page_size, self.stats, "history")

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
                # Medium refuses an operation off its schema with 400 and `errors`: read them.
                "handle_httpstatus_list": GRAPHQL_ERROR_STATUSES,
            },
        )
