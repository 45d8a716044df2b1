"""Tag history through the day archive: a tag's stories over plain GET, day by day.

``/tag/<slug>/archive`` lists the years that have stories, a year page its months, a month
page its days (``archiveIndex`` buckets marked ``hasStories``), and a day page that day's
stories, 128 a page, the day's further pages named by its ``paging``
(:mod:`topics_crawler.pages.tag_archive`). :class:`DayArchiveWalker` walks that tree depth
first, newest first — years, then the months of a year, then the days of a month, then each
day's pages — and takes every story of each day page (the root, year and month pages show
their most clapped stories too: the walk takes none from them, their days list them). A
range (``-a since``/``-a until``) keeps only the buckets that overlap it and starts at the
narrowest page holding it (a month, a year, or the root), so a range costs only its days.

Nothing is followed twice: a bucket is pushed only by its parent page, which is read once;
a day without stories (a stale bucket) answers a redirect to its month, which the walk
counts and does not follow (``dont_redirect``). The walk's state — the pages still to
read, the stories taken, the pages read — travels in each of its requests
(``meta["day_archive"]``, one request per tag in flight), never in a worker's memory, so
``max_stories``, ``HISTORY_MAX_PAGES`` and "each page once" hold across Redis workers and
a ``JOBDIR`` resume, as for the GraphQL listing. The pending list is bounded (a year's
months plus a month's days plus the years), not by the tag's size.

It is the history's listing when chosen (``-a history=archive``), and stands in for the
GraphQL listing when Medium refuses it (a 403, a challenge, an answer of ``errors``, any
unusable answer): the tag is then listed from the start through its day archive (stories
the GraphQL pages already listed are not fetched twice: their requests share the story's
fingerprint). A page that fails for good (its retries spent, or not an archive page) is
counted, logged with its URL and written to ``failures.jsonl``, and the walk goes on with the
pages left: only that page's stories, or the days under it, are missing, and said to be. A
walk that cannot start (its first page refused, nothing listed, nothing left) asks the tag page
again for the browser (``render_reason=history_fallback``: the last resort).

Stats: ``day_archive/walks``, ``day_archive/requests``, ``day_archive/pages``,
``day_archive/pages/<level>``, ``day_archive/stories``, ``day_archive/empty_days``,
``day_archive/done``, ``day_archive/stopped/page_cap``, ``day_archive/failed/<reason>``,
``day_archive/waited_for_queue``, ``day_archive/queue_unknown``;
``history/source/day_archive`` counts the tags it listed (``history/source/graphql``
those the GraphQL listing did).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import Any, ClassVar, Protocol, Unpack

from scrapy import Request
from scrapy.http import Response
from twisted.python.failure import Failure

from topics_crawler import settings as defaults
from topics_crawler.extensions.failures import GONE_STATUSES
from topics_crawler.extensions.progress import HISTORY_LISTED_PREFIX
from topics_crawler.items import TagStory
from topics_crawler.items.listing import ARCHIVE
from topics_crawler.middlewares.download_failures import failure_status
from topics_crawler.pages import WHOLE_PAGE_SOURCES, Document, PageResult
from topics_crawler.pages.coverage import record_coverage
from topics_crawler.pages.tag_archive import (
    ArchiveBucket,
    BucketLevel,
    TagArchivePage,
    archive_result,
    read_tag_archive,
)
from topics_crawler.scheduling.queue_length import requests_waiting
from topics_crawler.spiders._helpers import OptionsSpider, request_of, response_encoding
from topics_crawler.spiders._listing_requests import (
    WaitingCount,
    fallback_request,
    listing_priority,
)
from topics_crawler.spiders._memberships import listed_stories
from topics_crawler.spiders._missing_tags import MissingTags
from topics_crawler.spiders._paging import (
    Callbacks,
    Pager,
    PagerArguments,
    PagingState,
    ReportingSpider,
    failure_report,
)
from topics_crawler.urls import TagArchiveAddress

#: Request meta key: the walk's state (:class:`ArchiveWalk`) as of this request.
WALK_META = "day_archive"
#: Stories a day page holds at most (Medium, 2026-09): the queue bound's unit.
DAY_PAGE_STORIES = 128
#: ``history/source/<source>``: how each tag's history was listed.
SOURCE_STAT = "history/source/{source}"
REDIRECT_STATUSES = [301, 302, 303, 307, 308]
#: The level of the buckets a page of each level lists for the walk to go on.
CHILD_LEVEL: dict[str, BucketLevel] = {"archive": "year", "year": "month", "month": "day"}


@dataclass
class ArchiveWalk(PagingState):
    """The walk of one tag's archive: what is left to read, what was taken."""

    meta_key: ClassVar[str] = WALK_META

    tag: str
    tag_url: str
    pending: list[TagArchiveAddress]
    """Pages still to read, the next first (the one in flight is not in it)."""
    current: TagArchiveAddress
    """The page the request carrying this state asks for."""
    since: date | None = None
    until: date | None = None


class DayArchiveSpider(OptionsSpider, ReportingSpider, Protocol):
    """What the walk needs of the spider: its archive callbacks, and the tag page's for the
    fallback."""

    def parse_day_archive(self, response: Response) -> Iterator[Any]: ...
    def on_day_archive_error(self, failure: Failure) -> Iterator[Any]: ...
    def parse_tag(self, response: Response) -> Iterator[Any]: ...
    def on_error(self, failure: Failure) -> Iterator[Any]: ...

    @property
    def missing_tags(self) -> MissingTags: ...


class DayArchiveWalker(Pager[ArchiveWalk]):
    """Builds the walk's requests, reads its pages, decides what comes next (``limit``:
    ``max_stories`` per tag; ``max_pages``: ``HISTORY_MAX_PAGES``)."""

    state_type = ArchiveWalk

    def __init__(
        self,
        *,
        fallback: Callbacks,
        waiting: WaitingCount = lambda: 0,
        since: date | None = None,
        until: date | None = None,
        today: date | None = None,
        missing: MissingTags | None = None,
        **shape: Unpack[PagerArguments],
    ) -> None:
        super().__init__(**shape)
        self.missing = missing
        """Records a tag whose archive answers "not found" (then no fallback)."""
        self.fallback = fallback
        """The tag page's callbacks, for the fallback request."""
        self.waiting = waiting
        self.since, self.until = since, until
        self.today = today or datetime.now(UTC).date()

    @classmethod
    def from_spider(cls, spider: DayArchiveSpider) -> DayArchiveWalker | None:
        """The walk of ``-a history`` crawls (None without it): the listing of
        ``-a history=archive``, the stand-in of the GraphQL one otherwise."""
        options, crawler = spider.options, spider.crawler
        if options.history is None:
            return None
        assert crawler.stats is not None
        settings = crawler.settings
        return cls(
            fallback=Callbacks(spider.parse_tag, spider.on_error),
            waiting=lambda: requests_waiting(crawler),
            since=options.since,
            until=options.until,
            missing=spider.missing_tags,
            callbacks=Callbacks(spider.parse_day_archive, spider.on_day_archive_error),
            stats=crawler.stats,
            logger=spider.logger,
            limit=options.max_stories,
            max_pages=settings.getint("HISTORY_MAX_PAGES", defaults.HISTORY_MAX_PAGES),
            report=failure_report(spider, "tag_archive"),
        )

    def start(self, tag: str, tag_url: str, why: str | None = None) -> Request:
        """The first request of ``tag``'s walk (``why``: the GraphQL listing's failure it
        stands in for, None when the archive was asked for)."""
        self.stats.inc_value("day_archive/walks")
        self.stats.inc_value(SOURCE_STAT.format(source="day_archive"))
        if why is not None:
            self.logger.warning(
                "History of tag %s: listing it through its day archive instead (%s)", tag, why
            )
        first = range_root(tag, self.since, self.until or self.today)
        return self._request(ArchiveWalk(tag, tag_url, [], first, self.since, self.until))

    def read(self, response: Response) -> tuple[PageResult | None, Iterator[Request]]:
        """The stories one archive page gives (None when it gives none to take) and the
        requests that follow."""
        walk = self.state_of(response.meta)
        if walk is None:
            self.stats.inc_value("day_archive/ignored_responses")
            return None, iter(())
        walk.pages += 1
        if response.status in REDIRECT_STATUSES and walk.current.level == "day":
            self.stats.inc_value("day_archive/empty_days")  # a day without stories: its month
            return None, self._next(walk)
        if response.status in REDIRECT_STATUSES:
            location = (response.headers.get("Location") or b"").decode("latin-1")
            return None, self.fail(walk, "redirect", f"redirected to {location or '?'}")
        document = Document(response.body, response.url, encoding=response_encoding(response))
        page = read_tag_archive(document)
        self.stats.inc_value("parse/pages/tag_archive")  # the crawl health's page count
        record_coverage(self.stats, "tag_archive", archive_result(page, response.url))
        if not page.has_index:
            detail = "; ".join(page.errors) or "no archive index"
            return None, self.fail(walk, "not_an_archive", detail)
        self.stats.inc_value("day_archive/pages")
        self.stats.inc_value(f"day_archive/pages/{walk.current.level}")
        walk.pending[:0] = self._children(walk, page)
        result = self._stories(walk, page, response.url) if walk.current.level == "day" else None
        return result, self._next(walk)

    def listed(self, response: Response, result: PageResult) -> list[TagStory]:
        """The tag's ``archive`` rows of the stories one day page gave (:meth:`read`),
        ranked after those of the walk's pages before it."""
        walk = self.state_of(response.meta)  # as of the request: before this page
        if walk is None:
            return []
        return listed_stories(walk.tag, ARCHIVE, result, walk.taken + 1)

    def failed(self, failure: Failure) -> Iterator[Request]:
        walk = self.state_of(request_of(failure).meta)
        if walk is None:
            return iter(())
        walk.pages += 1
        status, reason = failure_status(failure)
        archive_root = walk.pages == 1 and walk.current.level == "archive"
        if self.missing is not None and archive_root and status in GONE_STATUSES:
            fetched = request_of(failure).url  # the tag's archive itself: no such tag
            self.missing.record(walk.tag, walk.tag_url, status, fetched=fetched)
            return iter(())
        return self.fail(walk, reason, failure.getErrorMessage())

    def fail(self, walk: ArchiveWalk, reason: str, detail: str) -> Iterator[Request]:
        """A page of the walk failed for good (retries spent): counted, logged with its URL,
        reported; the walk goes on with the pages left (that page's stories, or the days
        under it, are missing, and the failure says so), and when nothing was listed and
        nothing is left the tag page goes to the browser path."""
        url = walk.current.url
        self.stats.inc_value(f"day_archive/failed/{reason}")
        if self.report is not None:
            self.report(url, reason, detail)
        if walk.pending or walk.taken:
            self.logger.error(
                "Day archive of tag %s: %s failed: %s: %s; the walk goes on without it",
                walk.tag, url, reason, detail,
            )  # fmt: skip
            yield from self._next(walk)
            return
        self.logger.error(
            "Day archive of tag %s stopped at %s: %s: %s; falling back to the tag page",
            walk.tag, url, reason, detail,
        )  # fmt: skip
        self.stats.inc_value("history/fallback")
        yield fallback_request(walk.tag_url, self.fallback)

    # --- the walk ---------------------------------------------------------------------------

    def _children(self, walk: ArchiveWalk, page: TagArchivePage) -> list[TagArchiveAddress]:
        """The pages under this one to read next, newest first, in the walk's range: the
        years of the root, the months of a year, the days of a month, the day's next page."""
        current = walk.current
        if current.level == "day":
            if page.next_page is None:
                return []
            return [replace(current, page=current.page + 1)]
        level: BucketLevel = CHILD_LEVEL[current.level]
        buckets = [
            b
            for b in page.children(level)
            if _under(b, current) and _overlaps(b, walk.since, walk.until)
        ]
        newest_first = sorted(buckets, key=lambda b: (b.year, b.month or 0, b.day or 0))[::-1]
        return list(dict.fromkeys(b.address(walk.tag) for b in newest_first))

    def _stories(self, walk: ArchiveWalk, page: TagArchivePage, url: str) -> PageResult:
        """The day page's stories (the first ``max_stories`` left) with their authors and
        publications, as a page result the spider follows like tag-page cards."""
        remaining = self.remaining(walk)
        taken = page.stories if remaining is None else page.stories[:remaining]
        walk.taken += len(taken)
        self.stats.inc_value("day_archive/stories", len(taken))
        self.stats.inc_value("history/stories", len(taken))  # the progress line's count
        kept = {s.author_id for s in taken} | {s.publication_id for s in taken}
        listed = replace(
            page,
            stories=taken,
            authors=[a for a in page.authors if a.author_id in kept],
            publications=[p for p in page.publications if p.publication_id in kept],
        )
        result = archive_result(listed, url)
        layer = WHOLE_PAGE_SOURCES["tag_archive"]  # as parse_page names a day page's rows
        result.items = [replace(item, data_source=layer) for item in result.items]
        return result

    def _next(self, walk: ArchiveWalk) -> Iterator[Request]:
        if self.remaining(walk) == 0:
            return self._finish(walk, "max_stories reached")
        if not walk.pending:
            return self._finish(walk, "archive complete")
        if walk.pages >= self.max_pages:
            self.stats.inc_value("day_archive/stopped/page_cap")
            self.logger.warning(
                "Day archive of tag %s stopped at the page cap (HISTORY_MAX_PAGES=%d), %d stories",
                walk.tag, self.max_pages, walk.taken,
            )  # fmt: skip
            return self._finish(walk, "page cap")
        walk.current = walk.pending.pop(0)
        return iter([self._request(walk)])

    def _finish(self, walk: ArchiveWalk, why: str) -> Iterator[Request]:
        self.stats.set_value(f"{HISTORY_LISTED_PREFIX}{walk.tag}", walk.taken)  # the real size
        self.stats.inc_value("day_archive/done")
        self.stats.inc_value("history/done")
        self.logger.info(
            "Day archive of tag %s done (%s): %d stories in %d page(s)",
            walk.tag, why, walk.taken, walk.pages,
        )  # fmt: skip
        return iter(())

    def _priority(self) -> int:
        return listing_priority(self.waiting(), DAY_PAGE_STORIES, self.stats, "day_archive")

    def _request(self, walk: ArchiveWalk) -> Request:
        self.stats.inc_value("day_archive/requests")
        return self.callbacks.request(
            walk.current.url,
            priority=self._priority(),
            meta={
                "entity_kind": "tag_archive",
                WALK_META: walk.copy(),
                # A day without stories redirects to its month, read already: not followed.
                "dont_redirect": True,
                "handle_httpstatus_list": REDIRECT_STATUSES,
            },
        )


def walk_of(meta: dict[str, Any]) -> ArchiveWalk | None:
    """A copy of the walk state a request carries (None: not a walk request)."""
    return ArchiveWalk.from_meta(meta)


def range_root(tag: str, since: date | None, until: date) -> TagArchiveAddress:
    """The narrowest archive page holding the range: its month, its year, or the root."""
    if since is not None and (since.year, since.month) == (until.year, until.month):
        return TagArchiveAddress(tag, since.year, since.month)
    if since is not None and since.year == until.year:
        return TagArchiveAddress(tag, since.year)
    return TagArchiveAddress(tag)


def _bounds(bucket: ArchiveBucket) -> tuple[date, date]:
    """The first and last day a bucket covers."""
    if bucket.day is not None and bucket.month is not None:
        day = date(bucket.year, bucket.month, bucket.day)
        return day, day
    if bucket.month is not None:
        following = date(bucket.year + bucket.month // 12, bucket.month % 12 + 1, 1)
        return date(bucket.year, bucket.month, 1), date.fromordinal(following.toordinal() - 1)
    return date(bucket.year, 1, 1), date(bucket.year, 12, 31)


def _overlaps(bucket: ArchiveBucket, since: date | None, until: date | None) -> bool:
    first, last = _bounds(bucket)
    return (since is None or last >= since) and (until is None or first <= until)


def _under(bucket: ArchiveBucket, parent: TagArchiveAddress) -> bool:
    """The bucket lies inside the page it was listed on (a page lists its neighbours too)."""
    return (parent.year is None or bucket.year == parent.year) and (
        parent.month is None or bucket.month == parent.month
    )
