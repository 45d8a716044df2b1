"""Tag history paging: spider arguments, time ranges, and the pager's decisions (no network)."""

from __future__ import annotations

import json
import logging
import pickle
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from scrapy import Request
from scrapy.http import TextResponse
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from topics_crawler.graphql import GRAPHQL_URL, MAX_PAGE_SIZE, TimeRange
from topics_crawler.items import Story
from topics_crawler.settings import HISTORY_MAX_PAGES
from topics_crawler.site.content import default_site
from topics_crawler.site.graphql import graphql_response
from topics_crawler.site.model import SiteContent
from topics_crawler.spiders import _history as history_module
from topics_crawler.spiders._argument_values import SpiderArgumentError
from topics_crawler.spiders._arguments import CrawlOptions
from topics_crawler.spiders._history import (
    HISTORY_FALLBACK,
    HISTORY_TAG_META,
    HistoryPager,
    TagListing,
)
from topics_crawler.spiders._history_span import history_ranges
from topics_crawler.spiders._listing_requests import LISTING_PRIORITY, QUEUE_AHEAD_PAGES
from topics_crawler.spiders._paging import Callbacks
from topics_crawler.spiders.topics import TopicsSpider

TAG = "distributed-training"
TAG_URL = f"https://medium.com/tag/{TAG}"
TODAY = date(2026, 11, 30)


# --- arguments ------------------------------------------------------------------------


def test_history_and_since_are_parsed() -> None:
    options = CrawlOptions.from_arguments(
        tags=TAG, history="most_read", since="2024-06", today=TODAY
    )
    assert options.history == "MOST_READ"
    assert options.since == date(2024, 6, 1)
    assert options.until is None
    assert CrawlOptions.from_arguments(tags=TAG, history="NEWEST").history == "NEWEST"
    assert CrawlOptions.from_arguments(tags=TAG, history="archive").history == "ARCHIVE"
    assert CrawlOptions.from_arguments(tags=TAG).history is None
    ranged = CrawlOptions.from_arguments(
        tags=TAG, history="archive", since="2024-06-15", until="2025-02", today=TODAY
    )
    assert (ranged.since, ranged.until) == (date(2024, 6, 15), date(2025, 2, 28))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"history": "oldest"},
            "history: unknown value 'oldest'; choose from newest|most_read|archive",
        ),
        ({"history": "newest", "since": "2024-6"}, "is not a month or a day as YYYY-MM"),
        ({"history": "newest", "since": "2024-13"}, "is not a month or a day as YYYY-MM"),
        ({"history": "newest", "since": "June 2024"}, "is not a month or a day as YYYY-MM"),
        ({"history": "archive", "since": "2024-02-30"}, "is not a month or a day as YYYY-MM"),
        ({"history": "newest", "since": "2026-12"}, "is in the future"),
        ({"history": "newest", "since": "2026-11-31"}, "is not a month or a day"),
        ({"history": "newest", "since": "2009-01"}, "no stories before 2012"),
        ({"history": "archive", "until": "2011-12"}, "until: Medium has no stories before 2012"),
        ({"history": "archive", "since": "2025-03", "until": "2025-02"}, "is before since"),
        ({"history": "archive", "until": "soon"}, "until: 'soon' is not a month or a day"),
        ({"since": "2024-06"}, "only applies with -a history"),
        ({"until": "2024-06"}, "until: only applies with -a history"),
        ({"history": "newest", "max_stories": "0"}, "must be 1 or more"),
    ],
)
def test_bad_history_arguments(arguments: dict[str, str], message: str) -> None:
    with pytest.raises(SpiderArgumentError, match=message):
        CrawlOptions.from_arguments(tags=TAG, today=TODAY, **arguments)


def test_spider_check_arguments_knows_history() -> None:
    TopicsSpider.check_arguments(tags=TAG, history="newest", since="2024-06")
    with pytest.raises(SpiderArgumentError, match="history"):
        TopicsSpider.check_arguments(tags=TAG, history="sideways")
    spider = TopicsSpider(tags=TAG, history="newest")
    assert spider.arguments == {"tags": TAG, "history": "newest"}


# --- time ranges --------------------------------------------------------------------


def test_ranges_newest_first_in_as_few_requests_as_possible() -> None:
    assert history_ranges(None, None, TODAY) == [TimeRange.all_time()]
    assert history_ranges(date(2024, 1, 1), None, TODAY) == [
        TimeRange.in_year(2026),
        TimeRange.in_year(2025),
        TimeRange.in_year(2024),
    ]
    assert history_ranges(date(2025, 10, 1), None, TODAY) == [
        TimeRange.in_year(2026),
        TimeRange.in_month(2025, 12),
        TimeRange.in_month(2025, 11),
        TimeRange.in_month(2025, 10),
    ]
    assert history_ranges(date(2026, 9, 1), None, TODAY) == [
        TimeRange.in_month(2026, 11),
        TimeRange.in_month(2026, 10),
        TimeRange.in_month(2026, 9),
    ]
    assert history_ranges(date(2026, 1, 1), None, TODAY) == [TimeRange.in_year(2026)]


def test_until_ends_the_ranges_in_its_month() -> None:
    """A range that ends before today asks for whole years only where they are whole."""
    assert history_ranges(date(2024, 6, 10), date(2025, 2, 3), TODAY) == [
        TimeRange.in_month(2025, 2),
        TimeRange.in_month(2025, 1),
        *(TimeRange.in_month(2024, m) for m in range(12, 5, -1)),
    ]
    assert history_ranges(None, date(2013, 12, 31), TODAY) == [
        TimeRange.in_year(2013),
        TimeRange.in_year(2012),
    ]
    assert history_ranges(date(2025, 1, 1), date(2025, 12, 31), TODAY) == [TimeRange.in_year(2025)]
    future = history_ranges(date(2026, 10, 1), date(2027, 1, 1), TODAY)
    assert future == [TimeRange.in_month(2026, 11), TimeRange.in_month(2026, 10)]


# --- the pager ---------------------------------------------------------------------------


class Recorder:
    """Stand-ins for the spider callbacks (requests only need them to be callables)."""

    def listing(self, response: Any) -> None: ...
    def listing_error(self, failure: Any) -> None: ...
    def tag_page(self, response: Any) -> None: ...
    def tag_error(self, failure: Any) -> None: ...


def make_pager(**overrides: Any) -> tuple[HistoryPager, MemoryStatsCollector]:
    recorder = Recorder()
    stats = MemoryStatsCollector(get_crawler())
    settings: dict[str, Any] = {
        "sort_order": "NEWEST",
        "ranges": [TimeRange.all_time()],
        "callbacks": Callbacks(recorder.listing, recorder.listing_error),
        "fallback": Callbacks(recorder.tag_page, recorder.tag_error),
        "limit": None,
        "page_size": MAX_PAGE_SIZE,
        "max_pages": HISTORY_MAX_PAGES,
        "stats": stats,
        "waiting": lambda: 0,
        "logger": logging.getLogger("test_history"),
        **overrides,
    }
    return HistoryPager(**settings), stats


def answer(content: SiteContent, request: Request) -> TextResponse:
    """What the local site's endpoint answers to a listing request."""
    status, body, headers = graphql_response(content, request.body)
    return TextResponse(
        request.url, status=status, body=body, headers=headers, request=request, encoding="utf-8"
    )


def page_all(pager: HistoryPager, content: SiteContent) -> Iterator[tuple[Request, Any]]:
    """Follow the pager until it stops; yields (request, result) per listing response."""
    request: Request | None = pager.start(TAG, TAG_URL)
    for _ in range(500):
        if request is None:
            return
        result, follow_up = pager.read(answer(content, request))
        yield request, result
        request = next(iter(follow_up), None)
        if request is not None and request.url != GRAPHQL_URL:
            yield request, None
            return
    raise AssertionError("pager never stopped")


@pytest.fixture(scope="module")
def archive() -> SiteContent:
    return default_site().with_archive(TAG, 250)


def body_of(request: Request) -> dict[str, Any]:
    operations = json.loads(request.body)
    assert len(operations) == 1
    return operations[0]["variables"]


def test_listing_request_is_a_batched_post(archive: SiteContent) -> None:
    pager, stats = make_pager()
    request = pager.start(TAG, TAG_URL)
    assert request.method == "POST"
    assert request.url == GRAPHQL_URL
    assert request.headers[b"graphql-operation"] == b"TagArchiveFeedQuery"
    assert request.meta[HISTORY_TAG_META] == TAG
    assert request.meta["entity_kind"] == "history"
    assert "playwright" not in request.meta
    assert body_of(request)["first"] == 20  # what Medium answers at most
    assert stats.get_value("history/requests") == 1


def test_pages_until_the_listing_ends(archive: SiteContent) -> None:
    pager, stats = make_pager()
    steps = list(page_all(pager, archive))
    requests = [r for r, _ in steps]
    assert len(requests) == 13  # 258 stories by 20
    assert [body_of(r)["after"] == "" for r in requests] == [True] + [False] * 12
    stories = [i for _, result in steps for i in result.items if isinstance(i, Story)]
    tagged = [s for s in archive.stories.values() if any(t.slug == TAG for t in s.tags)]
    assert sorted(s.story_id or "" for s in stories) == sorted(s.id for s in tagged)
    assert stats.get_value("history/pages") == 13
    assert stats.get_value("history/stories") == len(tagged)
    assert stats.get_value("history/done") == 1


def test_the_paging_state_travels_with_the_requests(archive: SiteContent) -> None:
    """Each listing response handled by a pager that never saw the tag before (another
    worker on the shared queue, a resumed job) continues exactly where the last one was."""
    request: Request | None = make_pager(limit=230, page_size=15)[0].start(TAG, TAG_URL)
    firsts, taken = [], 0
    while request is not None and request.url == GRAPHQL_URL:
        firsts.append(body_of(request)["first"])
        request = pickle.loads(pickle.dumps(request))  # as the Redis queue stores it
        worker, stats = make_pager(limit=230, page_size=15)
        result, follow_up = worker.read(answer(archive, request))
        assert result is not None
        taken += stats.get_value("history/stories")
        request = next(iter(follow_up), None)
    assert firsts == [15] * 15 + [5]
    assert taken == 230


def test_max_stories_caps_the_pages_and_asks_only_for_what_is_left(archive: SiteContent) -> None:
    pager, stats = make_pager(limit=130)
    requests = [r for r, _ in page_all(pager, archive)]
    assert [body_of(r)["first"] for r in requests] == [20] * 6 + [10]
    assert stats.get_value("history/stories") == 130


def test_page_cap_stops_paging(archive: SiteContent) -> None:
    pager, stats = make_pager(max_pages=2, page_size=15)
    requests = [r for r, _ in page_all(pager, archive)]
    assert len(requests) == 2
    assert stats.get_value("history/stopped/page_cap") == 1
    assert stats.get_value("history/stories") == 30


def test_ranges_are_paged_one_after_another(archive: SiteContent) -> None:
    ranges = [TimeRange.in_month(2024, 3), TimeRange.in_month(2024, 2)]
    pager, _ = make_pager(ranges=ranges)
    requests = [r for r, _ in page_all(pager, archive)]
    kinds = [body_of(r)["timeRange"] for r in requests]
    assert len(kinds) > len(ranges)  # a month of the archive is several pages of 20
    changes = [k for i, k in enumerate(kinds) if i == 0 or k != kinds[i - 1]]
    assert changes == [r.variables() for r in ranges]


@pytest.mark.parametrize(
    ("fault", "reason", "listing_requests"),
    [
        ("errors", "graphql_errors", 1),
        ("repeat_cursor", "repeated_cursor", 2),
        ("null_node", "null_node", 1),
        ("empty_page", "empty_page", 1),
    ],
)
def test_bad_answers_stop_and_fall_back_to_the_tag_page(
    fault: str,
    reason: str,
    listing_requests: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    content = default_site().with_archive(TAG, 250)
    content.graphql_fault = fault
    pager, stats = make_pager()
    with caplog.at_level(logging.ERROR, logger="test_history"):
        steps = list(page_all(pager, content))
    listing = [r for r, _ in steps if r.url == GRAPHQL_URL]
    assert len(listing) == listing_requests
    fallback = steps[-1][0]
    assert fallback.url == TAG_URL
    assert fallback.meta["render_reason"] == HISTORY_FALLBACK
    assert fallback.dont_filter is True
    assert stats.get_value(f"history/failed/{reason}") == 1
    assert stats.get_value("history/fallback") == 1
    assert f"History of tag {TAG}" in caplog.text
    assert reason in caplog.text


def test_a_failed_listing_request_falls_back_from_the_state_it_carries() -> None:
    pager, stats = make_pager()
    request = pager.start(TAG, TAG_URL)
    listing = TagListing.from_meta(request.meta)
    assert listing is not None
    (fallback,) = pager.fail(listing, "timeout_error", "took too long")
    assert (fallback.url, fallback.meta["render_reason"]) == (TAG_URL, HISTORY_FALLBACK)
    assert stats.get_value("history/failed/timeout_error") == 1


def test_a_response_without_paging_state_is_ignored(archive: SiteContent) -> None:
    pager, stats = make_pager()
    request = pager.start(TAG, TAG_URL)
    stray = request.replace(meta={k: v for k, v in request.meta.items() if k != "history_listing"})
    result, follow_up = pager.read(answer(archive, stray))
    assert result is None
    assert list(follow_up) == []
    assert stats.get_value("history/ignored_responses") == 1


def test_the_state_a_listing_request_carries_stays_bounded(
    archive: SiteContent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop check keeps the last pages' cursors only: the paging state each listing
    request carries (and a JOBDIR or Redis queue stores) does not grow with the history."""
    monkeypatch.setattr(history_module, "SEEN_CURSORS_KEPT", 30)
    pager, stats = make_pager(page_size=20)
    carried = []
    for request, _ in page_all(pager, archive):
        listing = TagListing.from_meta(request.meta)
        if listing is not None:
            carried.append(len(listing.seen_cursors))
    assert stats.get_value("history/done") == 1  # no loop reported: the check still passes
    assert len(carried) >= 10
    assert max(carried) == 30  # bounded, while 258 cursors were read


@pytest.mark.parametrize(
    ("waiting", "priority", "waited", "unknown"),
    [
        (0, LISTING_PRIORITY, None, None),
        (QUEUE_AHEAD_PAGES * 20, LISTING_PRIORITY, None, None),  # the bound itself: ahead
        (QUEUE_AHEAD_PAGES * 20 + 1, -LISTING_PRIORITY, 1, None),  # past it: behind
        (None, LISTING_PRIORITY, None, 1),  # the scheduler cannot say: counted
    ],
)
def test_the_next_listing_waits_behind_the_stories_past_the_bound(
    archive: SiteContent,
    waiting: int | None,
    priority: int,
    waited: int | None,
    unknown: int | None,
) -> None:
    """What the scheduler says waits decides: the pager reads no scheduler's stats."""
    pager, stats = make_pager(page_size=20, waiting=lambda: waiting)
    stats.set_value("scheduler/enqueued", 10_000)  # a stat difference would say 10,000
    request = pager.start(TAG, TAG_URL)
    assert request.priority == priority
    assert stats.get_value("history/waited_for_queue") == waited
    assert stats.get_value("history/queue_unknown") == unknown
    _, follow_up = pager.read(answer(archive, request))
    assert [r.priority for r in follow_up] == [priority]  # asked again for each request
