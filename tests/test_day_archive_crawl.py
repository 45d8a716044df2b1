"""End to end: a tag's history through its day archive on the local site, where Medium
refuses GraphQL (every ``POST /_/graphql`` 403 while pages are served) or answers it with
``errors``, or where the archive is asked for: every story of the archive, by id, each page
once — in one crawl, on two Redis workers, and across a SIGKILLed and resumed ``JOBDIR``."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.crawl_helpers import CrawlRun, crawl_command, crawl_in_process, run_workers, start_crawl
from tests.services import RedisServer, wait_until
from topics_crawler.site.content import default_site
from topics_crawler.site.day_archive import archive_paths, tagged
from topics_crawler.site.model import SiteContent
from topics_crawler.site.server import SiteServer

pytestmark = pytest.mark.integration

TAG = "distributed-training"
ARCHIVE = 300


def refused_site(archive: int = ARCHIVE, seed: int = 0) -> SiteContent:
    """An archive of ``archive`` stories (about 3 a day) whose GraphQL endpoint refuses
    every operation; days split in pages of 2 stories."""
    content = default_site().with_archive(TAG, archive, seed=seed)
    content.graphql_refused = True
    content.archive_page_size = 2
    return content


def every_story(content: SiteContent) -> set[str]:
    return {story.id for story in tagged(content, TAG)}


def story_ids(runs: list[CrawlRun]) -> Counter[str]:
    return Counter(item["story_id"] for run in runs for item in run.of_type("story"))


def archive_gets(site: SiteServer) -> Counter[str]:
    """Archive pages the site served, by path and query."""
    return Counter(path for method, path, _ in site.requests if "/archive" in path)


def story_gets(site: SiteServer, content: SiteContent) -> Counter[str]:
    own = {content.story_path(story) for story in tagged(content, TAG)}
    return Counter(urlsplit(p).path for _, p, _ in site.requests if urlsplit(p).path in own)


@pytest.fixture(scope="module")
def refused() -> Iterator[tuple[SiteServer, SiteContent]]:
    content = refused_site()
    with SiteServer(content) as server:
        yield server, content


def test_graphql_refused_lists_every_story_through_day_pages(
    refused: tuple[SiteServer, SiteContent], tmp_path: Path
) -> None:
    site, content = refused
    site.clear_log()
    run = crawl_in_process(
        site.base_url, tmp_path, f"tags={TAG}", "history=newest", "follow=stories",
        settings={"DATASET_DIR": str(tmp_path / "data")},
    )  # fmt: skip
    assert run.returncode == 0, run.log[-3000:]
    ids = story_ids([run])
    assert set(ids) == every_story(content)
    assert max(ids.values()) == 1
    served = archive_gets(site)
    assert max(served.values()) == 1  # each archive page once
    assert set(served) == set(archive_paths(content, TAG))  # and every one of them
    assert max(story_gets(site, content).values()) == 1
    assert site.count("/_/graphql", "POST") == 1
    stats = run.stats
    assert stats["history/failed/http_403"] == 1
    assert stats["history/source/day_archive"] == 1
    assert "history/source/graphql" not in stats
    assert stats["day_archive/stories"] == len(every_story(content))
    lines = (tmp_path / "data" / "failures.jsonl").read_text("utf-8").splitlines()
    failures = [json.loads(line) for line in lines]
    assert [(f["kind"], f["reason"]) for f in failures] == [("history", "http_403")]
    manifest = json.loads((tmp_path / "data" / "manifest.json").read_text())
    assert manifest["last_run"]["history_sources"] == {"day_archive": 1}
    assert "listing it through its day archive instead" in run.log


def test_the_archive_asked_for_lists_only_its_range(
    refused: tuple[SiteServer, SiteContent], tmp_path: Path
) -> None:
    site, content = refused
    site.clear_log()
    run = crawl_in_process(
        site.base_url, tmp_path, f"tags={TAG}", "history=archive", "since=2024-02-03",
        "until=2024-02-05", "follow=none", "cards=stories",
    )  # fmt: skip
    assert run.returncode == 0, run.log[-3000:]
    wanted = {
        s.id
        for s in tagged(content, TAG)
        if date(2024, 2, 3) <= s.published_at.date() <= date(2024, 2, 5)
    }
    assert set(story_ids([run])) == wanted
    assert site.count("/_/graphql", "POST") == 0
    served = archive_gets(site)
    days = {p for p in served if p.count("/") == 6}
    assert {urlsplit(p).path for p in days} == {
        f"/tag/{TAG}/archive/2024/02/{d:02d}" for d in (3, 4, 5)
    }
    assert sum(served.values()) == 1 + len(days)  # the month, then its days' pages


def test_graphql_errors_are_drift_the_day_archive_stands_in(tmp_path: Path) -> None:
    content = default_site().with_archive(TAG, 40)
    content.schema_drift = {"Tag.posts"}
    with SiteServer(content) as site:
        run = crawl_in_process(
            site.base_url, tmp_path, f"tags={TAG}", "history=newest", "follow=none", "cards=stories"
        )
    assert run.returncode == 0, run.log[-3000:]
    assert set(story_ids([run])) == every_story(content)
    line = (
        "Medium refused the GraphQL operation TagArchiveFeedQuery: Cannot query field 'posts' "
        "on type 'Tag'. (1 answer(s)); the tag day archive listed the history instead"
    )
    assert f"WARNING: {line}" in run.log  # the health verdict's line
    assert run.stats["graphql/drift/TagArchiveFeedQuery"] == 1
    assert run.stats["health/failed"] is False


@pytest.mark.slow
def test_two_redis_workers_list_every_story_each_page_once(tmp_path: Path) -> None:
    content = refused_site(seed=1)
    args = (f"tags={TAG}", "history=newest", "follow=stories")
    with RedisServer(tmp_path / "redis") as redis, SiteServer(content, latency=0.01) as site:
        settings: dict[str, Any] = {
            "REDIS_URL": redis.url,
            "DISTRIBUTED_IDLE_CLOSE": 1,
            "HEALTH_ENABLED": False,  # a worker whose partner drained the queue exports few
        }
        runs = run_workers(site.base_url, tmp_path, *args, settings=settings)
        served = archive_gets(site)
        stories = story_gets(site, content)
    for run in runs:
        assert run.returncode == 0, run.log[-3000:]
    assert set(story_ids(runs)) == every_story(content)
    assert max(served.values()) == 1
    assert set(served) == set(archive_paths(content, TAG))
    assert max(stories.values()) == 1
    assert sum(run.stats.get("day_archive/walks", 0) for run in runs) == 1
    assert sum(run.stats.get("day_archive/done", 0) for run in runs) == 1
    pages = sum(run.stats.get("day_archive/pages", 0) for run in runs)
    assert pages == len(served)  # read once, by whichever worker took each request


@pytest.mark.slow
def test_a_killed_and_resumed_jobdir_crawl_lists_every_story(tmp_path: Path) -> None:
    content = refused_site(seed=2)
    out = tmp_path / "job"
    out.mkdir()
    with SiteServer(content, latency=0.02) as site:
        settings = {
            "MEDIUM_BASE_URL": site.base_url,
            "JOBDIR": out / "job",
            "LOG_FILE": out / "crawl.log",
            "AUTOTHROTTLE_ENABLED": False,
            "RATE_START": 0,
        }
        args = (f"tags={TAG}", "history=newest", "follow=stories")
        command = crawl_command(*args, settings=settings, output=out / "items.jsonl")
        first = start_crawl(command)
        try:
            wait_until(lambda: len(archive_gets(site)) >= 60, 120, "a third of the archive")
        finally:
            first.kill()  # SIGKILL: no clean shutdown of anything
        first.wait(10)
        assert first.returncode == -9
        walked_before = len(archive_gets(site))
        assert walked_before < len(list(archive_paths(content, TAG)))
        second = start_crawl(command)
        assert second.wait(300) == 0, (out / "crawl.log").read_text("utf-8")[-3000:]
        served = archive_gets(site)
    log = (out / "crawl.log").read_text("utf-8")
    assert "Resuming the crawl" in log
    items = [json.loads(line) for line in (out / "items.jsonl").read_text("utf-8").splitlines()]
    stories = Counter(i["story_id"] for i in items if i["item_type"] == "story")
    assert set(stories) == every_story(content)
    assert max(stories.values()) == 1
    assert set(served) == set(archive_paths(content, TAG))
    # Only pages the kill interrupted (in flight, or read within the journal's last
    # checkpoint interval: RESUME_CHECKPOINT_INTERVAL) are asked again, once each; the walk
    # goes on from the state their requests carry.
    assert max(served.values()) <= 2
