"""End to end: ``scrapy crawl topics -a author_stories=N`` pages each followed author's stories
beyond the profile's first page on the local site (:mod:`topics_crawler.site.author_archive`): over
GraphQL from a state cursor, over ``?format=json`` from a stream cursor, each story once,
at most N per author, and a bad archive page stops that author's archive only. One worker
crawls in-process; two workers on Redis are two processes."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.crawl_helpers import CrawlRun, crawl_in_process, run_workers
from tests.services import RedisServer
from topics_crawler.site.author_archive import author_archive_site
from topics_crawler.site.markup import epoch_ms
from topics_crawler.site.model import SiteContent
from topics_crawler.site.server import SiteServer

pytestmark = pytest.mark.integration

TAG = "distributed-training"
FIRST_PAGE = 3


@pytest.fixture(scope="module")
def content() -> SiteContent:
    return author_archive_site()


@pytest.fixture(scope="module")
def site(content: SiteContent) -> Iterator[SiteServer]:
    with SiteServer(content) as server:
        yield server


def crawl(site: SiteServer, out: Path, *arguments: str) -> CrawlRun:
    site.clear_log()
    run = crawl_in_process(
        site.base_url, out, f"tags={TAG}", *arguments,
        settings={"FAILURES_FILE": str(out / "failures.jsonl")},
    )  # fmt: skip
    assert run.returncode == 0, run.log[-3000:]
    return run


def failures(run: CrawlRun) -> list[dict[str, Any]]:
    path = run.out_dir / "failures.jsonl"
    lines = path.read_text("utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


def stories_by(run: CrawlRun) -> Counter[str]:
    return Counter(story["author_username"] for story in run.of_type("story"))


def story_fetches(site: SiteServer, content: SiteContent) -> Counter[str]:
    """Story pages the site served, by path (each story's own path)."""
    own = {content.story_path(story) for story in content.stories.values()}
    return Counter(
        urlsplit(path).path for method, path, _ in site.requests if urlsplit(path).path in own
    )


def test_archives_page_both_forms_up_to_n_each_story_once(
    site: SiteServer, content: SiteContent, tmp_path: Path
) -> None:
    run = crawl(site, tmp_path, "author_stories=5")
    by_author = stories_by(run)
    assert by_author["meetvaddoriya"] == FIRST_PAGE + 5  # GraphQL paging: 3 + 2 stories
    assert by_author["varuntej"] == FIRST_PAGE + 3  # one good stream page, then a bad one
    assert by_author["pinterest_engineering"] == FIRST_PAGE  # its first archive page is bad
    assert max(story_fetches(site, content).values()) == 1  # each story once
    stats = run.stats
    assert stats["author_archive/stories"] == 5 + 3
    assert stats["author_archive/pages"] == 3
    assert stats["author_archive/requests"] == 5
    assert stats["author_archive/failed/wrong_type"] == 1
    assert stats["author_archive/failed/parse_errors"] == 1
    assert site.count("/_/graphql", "POST") == 3
    assert site.count("/@varuntej/latest", "GET") == 2
    sixth_newest = content.stories_by("varuntej")[FIRST_PAGE + 3 - 1]
    reported = {(f["url"], f["reason"]) for f in failures(run)}
    assert reported == {
        ("https://medium.com/@pinterest_engineering", "wrong_type"),
        ("https://medium.com/@varuntej/latest?limit=2&to="
         f"{epoch_ms(sixth_newest.published_at)}&page=3&format=json", "parse_errors"),
    }  # fmt: skip
    assert "Archive of @varuntej stopped after 1 page(s) at https://medium.com/@varuntej" in run.log


def test_no_archive_by_default_and_a_whole_archive_with_a_large_n(
    site: SiteServer, tmp_path: Path
) -> None:
    plain = crawl(site, tmp_path / "plain")
    assert not any(key.startswith("author_archive/") for key in plain.stats)
    assert site.count("/_/graphql", "POST") == 0
    whole = crawl(site, tmp_path / "whole", "author_stories=100")
    assert stories_by(whole)["meetvaddoriya"] == 12  # every story: 3 + three pages of 3
    assert whole.stats["author_archive/done"] == 1
    assert "Archive of @meetvaddoriya done (archive complete): 9 stories" in whole.log


@pytest.mark.slow
def test_two_workers_on_redis_take_n_per_author_each_story_once(tmp_path: Path) -> None:
    content = author_archive_site()
    args = (f"tags={TAG}", "author_stories=5")
    with RedisServer(tmp_path / "redis") as redis, SiteServer(content) as site:
        settings = {
            "REDIS_URL": redis.url,
            "DISTRIBUTED_IDLE_CLOSE": 1,
            "HEALTH_ENABLED": False,  # a worker that got few pages exports few items
        }
        runs = run_workers(site.base_url, tmp_path, *args, settings=settings)
        fetched = story_fetches(site, content)
    for run in runs:
        assert run.returncode == 0, run.log[-3000:]
    assert max(fetched.values()) == 1  # each story once across both workers
    authors = {s["story_id"]: s["author_username"] for run in runs for s in run.of_type("story")}
    by_author = Counter(authors.values())
    assert by_author["meetvaddoriya"] == FIRST_PAGE + 5
    assert by_author["varuntej"] == FIRST_PAGE + 3
    assert sum(run.stats.get("author_archive/stories", 0) for run in runs) == 5 + 3
