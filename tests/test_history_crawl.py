"""End to end (in-process): ``scrapy crawl topics -a history=…`` pages a 1,000-story tag
archive over the local site's GraphQL endpoint (20 stories a page, as Medium answers), with no
browser, and lists the tag through its day archive when the endpoint fails."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.crawl_helpers import CrawlRun, crawl_in_process
from tests.services import RedisServer
from topics_crawler.graphql import TimeRange
from topics_crawler.settings import CONCURRENT_REQUESTS
from topics_crawler.site.content import default_site
from topics_crawler.site.graphql import archive_stories
from topics_crawler.site.model import SiteContent
from topics_crawler.site.server import SiteServer
from topics_crawler.spiders._history_span import history_ranges
from topics_crawler.spiders._listing_requests import QUEUE_AHEAD_PAGES

pytestmark = pytest.mark.integration

TAG = "distributed-training"
ARCHIVE = 1000
ALL_TIME = {"kind": "ALL_TIME"}


@pytest.fixture(scope="module")
def content() -> SiteContent:
    return default_site().with_archive(TAG, ARCHIVE, seed=0)


@pytest.fixture(scope="module")
def site(content: SiteContent) -> Iterator[SiteServer]:
    with SiteServer(content) as server:
        yield server


def crawl(
    site: SiteServer, out: Path, *arguments: str, settings: dict[str, Any] | None = None
) -> CrawlRun:
    site.clear_log()
    run = crawl_in_process(site.base_url, out, f"tags={TAG}", *arguments, settings=settings)
    assert run.returncode == 0, run.log[-3000:]
    return run


def posts(site: SiteServer) -> int:
    return site.count("/_/graphql", method="POST")


def story_ids(run: CrawlRun) -> list[str]:
    return [item["story_id"] for item in run.of_type("story")]


def assert_no_render_but_tag_pages(run: CrawlRun) -> None:
    """Listing and story requests never go through the browser (render policy stats)."""
    stats = run.stats
    assert stats.get("render/requests/history", 0) == 0
    assert stats.get("render/requests/story", 0) == 0
    assert stats.get("render/requests", 0) == stats.get("render/requests/tag", 0) <= 1


@pytest.fixture(scope="module")
def newest(site: SiteServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[CrawlRun, int]:
    run = crawl(site, tmp_path_factory.mktemp("newest"), "history=newest", "follow=stories")
    return run, posts(site)


def test_newest_gets_every_archive_story_once_over_plain_http(
    newest: tuple[CrawlRun, int], content: SiteContent
) -> None:
    run, listing_requests = newest
    expected = [s.id for s in archive_stories(content, TAG, ALL_TIME, "NEWEST")]
    assert len(expected) >= ARCHIVE
    ids = story_ids(run)
    assert [i for i, n in Counter(ids).items() if n > 1] == []
    assert set(ids) == set(expected)
    assert listing_requests == math.ceil(len(expected) / 20)
    assert run.stats["history/requests"] == run.stats["history/pages"] == listing_requests
    assert run.stats["history/stories"] == len(expected)
    assert run.stats["history/done"] == 1
    assert not [key for key in run.stats if key.startswith("history/failed")]
    assert listing_requests / len(expected) <= 0.051
    assert_no_render_but_tag_pages(run)


def test_story_pages_complete_the_listing_values(
    newest: tuple[CrawlRun, int], content: SiteContent
) -> None:
    run, _ = newest
    for item in run.of_type("story"):
        model = content.stories[item["story_id"]]
        assert item["url"] == content.story_url(model)
        assert item["title"] == model.title
        assert item["claps"] == model.claps
        assert item["tags"] == [t.slug for t in model.tags]  # from the story page
        assert item["text"]  # the listing has no body: the story page was fetched


def test_most_read_takes_the_most_clapped_stories_in_order(
    site: SiteServer, content: SiteContent, tmp_path: Path
) -> None:
    run = crawl(
        site, tmp_path, "history=most_read", "max_stories=50", "follow=none", "cards=stories"
    )
    expected = [s.id for s in archive_stories(content, TAG, ALL_TIME, "MOST_READ")[:50]]
    assert story_ids(run) == expected
    claps = [item["claps"] for item in run.of_type("story")]
    assert claps == sorted(claps, reverse=True)
    assert posts(site) == 3  # 20 a page
    assert_no_render_but_tag_pages(run)


def test_since_keeps_the_stories_published_from_that_month(
    site: SiteServer, content: SiteContent, tmp_path: Path
) -> None:
    run = crawl(site, tmp_path, "history=newest", "since=2024-06", "follow=none", "cards=stories")
    start = datetime(2024, 6, 1, tzinfo=UTC)
    expected = [
        s.id for s in archive_stories(content, TAG, ALL_TIME, "NEWEST") if s.published_at >= start
    ]
    assert 0 < len(expected) < ARCHIVE
    assert story_ids(run) == expected  # newest first across the ranges
    assert run.stats["history/done"] == 1
    ranges = history_ranges(date(2024, 6, 1), None, datetime.now(UTC).date())
    assert ranges[-1] == TimeRange.in_month(2024, 6)
    sizes = [len(archive_stories(content, TAG, r.variables(), "NEWEST")) for r in ranges]
    assert sum(sizes) == len(expected)
    assert posts(site) == sum(max(1, math.ceil(size / 20)) for size in sizes)


def test_max_stories_caps_the_history_across_pages(
    site: SiteServer, content: SiteContent, tmp_path: Path
) -> None:
    run = crawl(site, tmp_path, "history=newest", "max_stories=150", "follow=stories")
    expected = [s.id for s in archive_stories(content, TAG, ALL_TIME, "NEWEST")[:150]]
    assert sorted(story_ids(run)) == sorted(expected)
    assert posts(site) == 8  # 150 stories, 20 a page
    assert run.stats["history/stories"] == 150


def faulty_site(content: SiteContent, fault: str) -> SiteServer:
    content.graphql_fault = fault
    return SiteServer(content)


@pytest.mark.parametrize(
    ("fault", "reason", "listing_requests"),
    [
        ("errors", "graphql_errors", 1),
        ("repeat_cursor", "repeated_cursor", 2),
        ("http_500", "http_500", 1),  # through the spider's errback (no retries here)
    ],
)
def test_a_failing_endpoint_hands_the_tag_to_its_day_archive(
    tmp_path: Path, fault: str, reason: str, listing_requests: int
) -> None:
    content = default_site().with_archive(TAG, 60, seed=1)
    with faulty_site(content, fault) as site:
        run = crawl(
            site,
            tmp_path,
            "history=newest",
            "follow=none",
            "cards=stories",
            settings={"RETRY_TIMES": 0},
        )
        assert posts(site) == listing_requests
        assert site.count(f"/tag/{TAG}", method="GET") == 1  # no browser fallback
    assert run.stats[f"history/failed/{reason}"] == 1
    assert run.stats["history/switched_to_day_archive"] == 1
    assert "history/fallback" not in run.stats
    assert run.stats["day_archive/done"] == 1
    assert f"History of tag {TAG}: GraphQL TagArchiveFeedQuery failed" in run.log
    tagged = {s.id for s in content.stories.values() if any(t.slug == TAG for t in s.tags)}
    assert set(story_ids(run)) == tagged  # every story, from the day pages


def test_bad_history_argument_exits_2(site: SiteServer, tmp_path: Path) -> None:
    site.clear_log()
    run = crawl_in_process(site.base_url, tmp_path, f"tags={TAG}", "history=sideways")
    assert run.returncode == 2
    assert "history: unknown value 'sideways'" in run.log
    assert site.requests == []  # refused before the crawl started
    assert run.items == []


#: Small pages, so the walk's bound (QUEUE_AHEAD_PAGES pages) is passed within the archive.
QUEUE_PAGE = 20
QUEUE_ARCHIVE = 320


def listing_leads(site: SiteServer, content: SiteContent) -> list[int]:
    """At each listing POST the site received (in the order it received them): how many
    stories the listing had listed that were not fetched yet."""
    archive = archive_stories(content, TAG, ALL_TIME, "NEWEST")
    paths = {urlsplit(content.story_url(story)).path for story in archive}
    listed = fetched = 0
    leads = []
    for method, path, _status in site.requests:
        if method == "POST" and path == "/_/graphql":
            leads.append(listed - fetched)
            listed = min(listed + QUEUE_PAGE, len(archive))
        elif method == "GET" and path in paths:
            fetched += 1
    return leads


#: The most a listing may lead its stories by: the bound, read before the page's own
#: stories are scheduled, plus that page, plus requests being downloaded meanwhile.
MAX_LEAD = (QUEUE_AHEAD_PAGES + 1) * QUEUE_PAGE + CONCURRENT_REQUESTS


@pytest.mark.parametrize("scheduler", ["scrapy", "journal", "redis"])
def test_the_listing_waits_behind_its_stories_on_every_scheduler(
    tmp_path: Path, scheduler: str
) -> None:
    """Each listing page adds QUEUE_PAGE stories while fewer are fetched meanwhile: past
    QUEUE_AHEAD_PAGES pages of them waiting, the next listing request waits behind them.
    The walk asks the scheduler what waits, so this holds on the JOBDIR journal scheduler
    and on Redis as on Scrapy's own (it read Scrapy's stats, which the others lacked)."""
    content = default_site().with_archive(TAG, QUEUE_ARCHIVE, seed=2)
    settings: dict[str, Any] = {"HISTORY_PAGE_SIZE": QUEUE_PAGE}
    args = ("history=newest", "follow=stories")
    with SiteServer(content) as site:
        if scheduler == "redis":
            with RedisServer(tmp_path / "redis") as redis:
                settings |= {"REDIS_URL": redis.url, "DISTRIBUTED_IDLE_CLOSE": 1}
                run = crawl(site, tmp_path / "crawl", *args, settings=settings)
        else:
            if scheduler == "journal":
                settings["JOBDIR"] = str(tmp_path / "job")
            run = crawl(site, tmp_path / "crawl", *args, settings=settings)
        leads = listing_leads(site, content)
    stats = run.stats
    assert stats["history/stories"] == len(archive_stories(content, TAG, ALL_TIME, "NEWEST"))
    assert stats["history/waited_for_queue"] > 0
    assert "history/queue_unknown" not in stats
    assert max(leads) <= MAX_LEAD
    # Scrapy's standard counts, exact: every request once in, once out (and, here, each
    # twice: under its medium.com URL, then under the local site's, see middlewares/mirror)
    made = stats["downloader/request_count"] - stats["robotstxt/request_count"]
    assert stats["scheduler/enqueued"] == stats["scheduler/dequeued"] == 2 * made


def test_a_resumed_jobdir_crawl_counts_the_requests_the_first_run_left(tmp_path: Path) -> None:
    """The resumed run takes out requests the first one put in: Scrapy's enqueued −
    dequeued runs below what waits by that much (and lets the listing run ahead); what the
    scheduler says does not."""
    content = default_site().with_archive(TAG, QUEUE_ARCHIVE, seed=2)
    settings: dict[str, Any] = {"HISTORY_PAGE_SIZE": QUEUE_PAGE, "JOBDIR": str(tmp_path / "job")}
    args = (f"tags={TAG}", "history=newest", "follow=stories")
    with SiteServer(content) as site:
        stopped = {**settings, "CLOSESPIDER_PAGECOUNT": 40}  # a clean stop, requests left
        first = crawl_in_process(site.base_url, tmp_path, *args, settings=stopped, append=True)
        assert first.returncode == 0, first.log[-3000:]
        assert first.stats["finish_reason"] == "closespider_pagecount"
        resumed = crawl_in_process(site.base_url, tmp_path, *args, settings=settings, append=True)
        assert resumed.returncode == 0, resumed.log[-3000:]
        leads = listing_leads(site, content)  # both runs: the site's log spans them
    assert "Resuming the crawl" in resumed.log
    stats = resumed.stats
    assert stats["scheduler/dequeued"] > stats["scheduler/enqueued"]  # the first run's too
    expected = archive_stories(content, TAG, ALL_TIME, "NEWEST")
    assert {s.id for s in expected} <= set(story_ids(resumed))  # appended: both runs' items
    assert stats["history/waited_for_queue"] > 0
    assert max(leads) <= MAX_LEAD
