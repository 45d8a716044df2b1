"""The day-archive walk (``spiders/_day_archive.py``): its decisions against the local site's
archive (no network), the state its requests carry, and the GraphQL history handing over
to it."""

from __future__ import annotations

import logging
import pickle
from collections import Counter
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse, Response
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from topics_crawler.graphql import GRAPHQL_URL, TimeRange
from topics_crawler.items import Story
from topics_crawler.site.content import default_site
from topics_crawler.site.day_archive import archive_answer, parse_archive_path, story_days, tagged
from topics_crawler.site.graphql import graphql_response
from topics_crawler.site.model import SiteContent
from topics_crawler.spiders._day_archive import DayArchiveWalker, range_root, walk_of
from topics_crawler.spiders._history import HistoryPager
from topics_crawler.spiders._paging import Callbacks
from topics_crawler.urls import TagArchiveAddress

TAG = "distributed-training"
TAG_URL = f"https://medium.com/tag/{TAG}"
TODAY = date(2026, 11, 30)


class Recorder:
    """Stand-ins for the spider callbacks (requests only need them to be callables)."""

    def page(self, response: Any) -> None: ...
    def page_error(self, failure: Any) -> None: ...
    def tag_page(self, response: Any) -> None: ...
    def tag_error(self, failure: Any) -> None: ...


RECORDER = Recorder()
PAGES = Callbacks(RECORDER.page, RECORDER.page_error)
TAG_PAGE = Callbacks(RECORDER.tag_page, RECORDER.tag_error)


def make_walker(**overrides: Any) -> tuple[DayArchiveWalker, MemoryStatsCollector, list[Any]]:
    stats = MemoryStatsCollector(get_crawler())
    reported: list[Any] = []
    settings: dict[str, Any] = {
        "callbacks": PAGES,
        "fallback": TAG_PAGE,
        "stats": stats,
        "logger": logging.getLogger("test_day_archive"),
        "limit": None,
        "max_pages": 1000,
        "report": lambda *args: reported.append(args),
        "today": TODAY,
        **overrides,
    }
    walker = DayArchiveWalker(**settings)
    return walker, walker.stats, reported


def answer(content: SiteContent, request: Request) -> Response:
    """What the local site answers to an archive request (the site's own routes)."""
    address = parse_archive_path(request.url.removeprefix("https://medium.com"))
    assert address is not None, request.url
    reply = archive_answer(content, address)
    headers = {"Location": reply.location} if reply.location else {}
    return HtmlResponse(
        request.url, status=reply.status, body=reply.html.encode(), headers=headers,
        request=request, encoding="utf-8",
    )  # fmt: skip


def walk_all(
    walker_for: Any, content: SiteContent, first: Request
) -> Iterator[tuple[Request, list[Story]]]:
    """Follow the walk until it stops: (request, stories taken) per page. ``walker_for()``
    gives the walker that reads each answer (a fresh one: another worker, a resume)."""
    request: Request | None = first
    for _ in range(2000):
        if request is None:
            return
        request = pickle.loads(pickle.dumps(request))  # as the Redis queue stores it
        result, follow_up = walker_for().read(answer(content, request))
        stories = [s for s in result.items if isinstance(s, Story)] if result else []
        yield request, stories
        request = next(iter(follow_up), None)
    raise AssertionError("the walk never stopped")


@pytest.fixture(scope="module")
def archive() -> SiteContent:
    site = default_site().with_archive(TAG, 250)
    site.archive_page_size = 3  # a day of the archive holds up to 4 stories: some split
    return site


def test_the_walk_lists_every_story_once_through_day_pages(archive: SiteContent) -> None:
    walker, stats, _ = make_walker()
    steps = list(walk_all(lambda: walker, archive, walker.start(TAG, TAG_URL)))
    urls = [r.url for r, _ in steps]
    assert len(urls) == len(set(urls))  # each page once
    ids = [s.story_id for _, stories in steps for s in stories]
    assert Counter(ids).most_common(1)[0][1] == 1
    assert set(ids) == {s.id for s in tagged(archive, TAG)}
    days = story_days(archive, TAG)
    years, months = {d[0] for d in days}, {d[:2] for d in days}
    extra = sum(1 for r, _ in steps if "?page=" in r.url)
    assert extra > 0
    assert len(urls) == 1 + len(years) + len(months) + len(days) + extra
    assert urls[:2] == [f"{TAG_URL}/archive", f"{TAG_URL}/archive/2025"]  # newest first
    assert stats.get_value("day_archive/stories") == len(ids)
    assert stats.get_value("day_archive/done") == 1
    assert stats.get_value("history/source/day_archive") == 1
    dates = [s.published_at for _, stories in steps for s in stories]
    assert [d[:10] for d in dates] == sorted((d[:10] for d in dates), reverse=True)


def test_a_range_costs_only_its_days(archive: SiteContent) -> None:
    since, until = date(2024, 2, 3), date(2024, 2, 5)
    walker, _, _ = make_walker(since=since, until=until)
    steps = list(walk_all(lambda: walker, archive, walker.start(TAG, TAG_URL)))
    urls = [r.url.removeprefix(f"{TAG_URL}/archive") for r, _ in steps]
    assert urls[0] == "/2024/02"  # the range's month, not the root
    assert [u for u in urls if u.count("/") == 3 and "?" not in u] == [
        "/2024/02/05", "/2024/02/04", "/2024/02/03"
    ]  # fmt: skip
    ids = {s.story_id for _, stories in steps for s in stories}
    expected = {s.id for s in tagged(archive, TAG) if since <= s.published_at.date() <= until}
    assert ids == expected


@pytest.mark.parametrize(
    ("since", "until", "root"),
    [
        (None, TODAY, TagArchiveAddress(TAG)),
        (date(2024, 2, 1), date(2024, 2, 29), TagArchiveAddress(TAG, 2024, 2)),
        (date(2024, 2, 1), date(2024, 9, 1), TagArchiveAddress(TAG, 2024)),
        (date(2023, 2, 1), date(2024, 9, 1), TagArchiveAddress(TAG)),
    ],
)
def test_the_walk_starts_at_the_narrowest_page_holding_the_range(
    since: date | None, until: date, root: TagArchiveAddress
) -> None:
    assert range_root(TAG, since, until) == root


def test_max_stories_holds_when_each_page_is_read_by_another_worker(
    archive: SiteContent,
) -> None:
    """Every answer is read by a walker that never saw the tag (another worker on the
    shared queue, a resumed job): the state its request carries is all it needs."""
    first, _, _ = make_walker(limit=101)
    stats = MemoryStatsCollector(get_crawler())

    def fresh() -> DayArchiveWalker:
        return make_walker(limit=101, stats=stats)[0]

    steps = list(walk_all(fresh, archive, first.start(TAG, TAG_URL)))
    ids = [s.story_id for _, stories in steps for s in stories]
    assert len(ids) == len(set(ids)) == 101
    assert stats.get_value("day_archive/done") == 1
    newest = sorted(tagged(archive, TAG), key=lambda s: s.published_at, reverse=True)
    assert {s.published_at.date() for s in newest[:90]} <= {
        date.fromisoformat(s.published_at[:10]) for _, st in steps for s in st
    }  # fmt: skip


def test_the_state_a_request_carries_stays_small(archive: SiteContent) -> None:
    walker, _, _ = make_walker()
    pending = []
    for request, _ in walk_all(lambda: walker, archive, walker.start(TAG, TAG_URL)):
        walk = walk_of(request.meta)
        assert walk is not None
        pending.append(len(walk.pending))
    assert max(pending) <= 2 + 12 + 31  # years, a year's months, a month's days


def test_the_page_cap_stops_the_walk(archive: SiteContent) -> None:
    walker, stats, _ = make_walker(max_pages=5)
    steps = list(walk_all(lambda: walker, archive, walker.start(TAG, TAG_URL)))
    assert len(steps) == 5
    assert stats.get_value("day_archive/stopped/page_cap") == 1


def test_a_day_without_stories_is_counted_not_followed() -> None:
    site = default_site().with_archive(TAG, 30)
    walker, stats, _ = make_walker()
    stale = TagArchiveAddress(TAG, 2023, 5, 17)
    start = walker.start(TAG, TAG_URL)
    walk = walk_of(start.meta)
    assert walk is not None
    walk.current, walk.pending = stale, []
    request = start.replace(url=stale.url, meta={**start.meta, "day_archive": walk})
    assert request.meta["dont_redirect"] is True
    response = answer(site, request)
    assert (response.status, response.headers[b"Location"]) == (
        302,
        f"/tag/{TAG}/archive/2023/05".encode(),
    )
    result, follow_up = walker.read(response)
    assert result is None
    assert list(follow_up) == []
    assert stats.get_value("day_archive/empty_days") == 1


def test_a_page_that_is_not_an_archive_stops_the_walk_and_falls_back(
    archive: SiteContent,
) -> None:
    walker, stats, reported = make_walker()
    request = walker.start(TAG, TAG_URL)
    blocked = HtmlResponse(
        request.url, status=200, body=b"<html><title>Just a moment...</title></html>",
        request=request,
    )  # fmt: skip
    result, follow_up = walker.read(blocked)
    assert result is None
    (fallback,) = follow_up
    assert (fallback.url, fallback.meta["render_reason"]) == (TAG_URL, "history_fallback")
    assert stats.get_value("day_archive/failed/not_an_archive") == 1
    assert reported[0][:2] == (f"{TAG_URL}/archive", "not_an_archive")


# --- the GraphQL history hands over ------------------------------------------------------


def graphql_answer(content: SiteContent, request: Request) -> Response:
    status, body, headers = graphql_response(content, request.body)
    return HtmlResponse(request.url, status=status, body=body, headers=headers, request=request)


def test_graphql_errors_hand_the_tag_to_the_day_archive(archive: SiteContent) -> None:
    """An ``errors`` answer (here: the schema lost ``Tag.posts``) is drift: recorded, and
    the tag is listed again from the start through its day archive."""
    content = default_site().with_archive(TAG, 30)
    content.schema_drift = {"Tag.posts"}
    walker, history_stats, _ = make_walker()
    reported: list[Any] = []
    pager = HistoryPager(
        sort_order="NEWEST",
        ranges=[TimeRange.all_time()],
        callbacks=PAGES,
        fallback=TAG_PAGE,
        stats=history_stats,
        waiting=lambda: 0,
        logger=logging.getLogger("test_day_archive"),
        limit=None,
        page_size=20,
        max_pages=1000,
        stand_in=lambda listing, why: iter([walker.start(listing.tag, listing.tag_url, why)]),
        report=lambda *args: reported.append(args),
    )
    request = pager.start(TAG, TAG_URL)
    assert request.meta["handle_httpstatus_list"] == [400]
    response = graphql_answer(content, request)
    assert response.status == 400
    result, follow_up = pager.read(response)
    assert result is None
    (walk_request,) = follow_up
    assert walk_request.url == f"{TAG_URL}/archive"
    assert history_stats.get_value("history/failed/graphql_errors") == 1
    assert history_stats.get_value("history/switched_to_day_archive") == 1
    assert history_stats.get_value("graphql/drift/TagArchiveFeedQuery") == 1
    assert history_stats.get_value("graphql/drift/TagArchiveFeedQuery/message") == (
        "Cannot query field 'posts' on type 'Tag'."
    )
    assert reported == [
        (TAG_URL, "graphql_errors", "Medium refused the GraphQL operation TagArchiveFeedQuery: "
         "Cannot query field 'posts' on type 'Tag'.")
    ]  # fmt: skip
    assert "history/fallback" not in history_stats.get_stats()
    walked = list(walk_all(lambda: walker, content, walk_request))
    ids = {s.story_id for _, stories in walked for s in stories}
    assert ids == {s.id for s in tagged(content, TAG)}


def test_day_bounds_filter_the_graphql_months() -> None:
    """``since``/``until`` days inside a month: the month is asked, its other days dropped."""
    content = default_site().with_archive(TAG, 250)
    stats = MemoryStatsCollector(get_crawler())
    since, until = date(2024, 2, 3), date(2024, 2, 5)
    pager = HistoryPager(
        sort_order="NEWEST",
        ranges=[TimeRange.in_month(2024, 2)],
        callbacks=PAGES,
        fallback=TAG_PAGE,
        stats=stats,
        waiting=lambda: 0,
        logger=logging.getLogger("test_day_archive"),
        limit=None,
        page_size=20,
        max_pages=1000,
        days=(since, until),
    )
    request: Request | None = pager.start(TAG, TAG_URL)
    ids = []
    while request is not None and request.url == GRAPHQL_URL:
        result, follow_up = pager.read(graphql_answer(content, request))
        assert result is not None
        ids += [s.story_id for s in result.items if isinstance(s, Story)]
        request = next(iter(follow_up), None)
    expected = [s.id for s in tagged(content, TAG) if since <= s.published_at.date() <= until]
    assert sorted(ids) == sorted(expected)
    assert stats.get_value("history/out_of_range") > 0


def test_a_page_that_fails_for_good_is_reported_and_the_walk_goes_on(
    archive: SiteContent,
) -> None:
    """A day page whose retries are spent: its stories are missing, and said to be; every
    other day is still listed."""
    walker, stats, reported = make_walker()
    request: Request | None = walker.start(TAG, TAG_URL)
    ids: list[str] = []
    failed_day = None
    while request is not None:
        walk = walk_of(request.meta)
        assert walk is not None
        if failed_day is None and walk.current.level == "day":
            failed_day = walk.current
            follow_up: Iterator[Request] = walker.fail(walk, "http_500", "Internal error")
        else:
            result, follow_up = walker.read(answer(archive, request))
            ids += (
                [s.story_id or "" for s in result.items if isinstance(s, Story)] if result else []
            )
        request = next(iter(follow_up), None)
    assert failed_day is not None
    lost = {
        s.id for s in tagged(archive, TAG)
        if (s.published_at.year, s.published_at.month, s.published_at.day)
        == (failed_day.year, failed_day.month, failed_day.day)
    }  # fmt: skip
    assert lost
    assert set(ids) == {s.id for s in tagged(archive, TAG)} - lost
    assert stats.get_value("day_archive/failed/http_500") == 1
    assert reported == [(failed_day.url, "http_500", "Internal error")]
    assert stats.get_value("day_archive/done") == 1
    assert "history/fallback" not in stats.get_stats()


def test_a_redirect_of_a_page_that_is_not_a_day_is_a_failure() -> None:
    walker, stats, reported = make_walker()
    request = walker.start(TAG, TAG_URL)
    moved = HtmlResponse(
        request.url, status=302, headers={"Location": "/m/signin"}, body=b"", request=request
    )
    result, follow_up = walker.read(moved)
    assert result is None
    (fallback,) = follow_up  # nothing listed, nothing left: the browser's last resort
    assert fallback.url == TAG_URL
    assert stats.get_value("day_archive/failed/redirect") == 1
    assert "day_archive/empty_days" not in stats.get_stats()
    assert reported == [(f"{TAG_URL}/archive", "redirect", "redirected to /m/signin")]
