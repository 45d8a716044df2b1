"""The exit-code contract (README "Exit codes"): a test per row, and the run summary line.

Rows that other modules already hold to it with a real ``scrapy crawl`` are named in the
README table next to their test (a full disk: ``test_write_failures``; a health check:
``test_reliability_failures``; drift: ``test_crawl_tag_generations``; bad usage:
``test_settings_check``); this module has the others, and the verdict function itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.crawl_helpers import CrawlRun, run_crawl
from topics_crawler import settings
from topics_crawler.errors import (
    HEALTH_FAILED_STAT,
    REFUSED_STAT,
    TAG_NOT_FOUND_STAT,
    WRITE_FAILED_STAT,
    ExitCode,
    exit_code,
)
from topics_crawler.site.content import default_site
from topics_crawler.site.server import SiteServer

TAG = "distributed-training"


@pytest.mark.parametrize(
    ("stats", "code"),
    [
        ({"finish_reason": "finished"}, ExitCode.DONE),
        ({"finish_reason": "closespider_itemcount"}, ExitCode.DONE),
        ({"finish_reason": "finished", "dedupe/unchanged/story": 40}, ExitCode.DONE),
        ({"finish_reason": "finished", WRITE_FAILED_STAT: 1}, ExitCode.FAILED),
        ({"finish_reason": "write_failed", WRITE_FAILED_STAT: 1}, ExitCode.FAILED),
        ({"finish_reason": "finished", HEALTH_FAILED_STAT: True}, ExitCode.FAILED),
        ({"finish_reason": "finished", HEALTH_FAILED_STAT: False}, ExitCode.DONE),
        ({"finish_reason": "finished", TAG_NOT_FOUND_STAT: ["no-such-tag"]}, ExitCode.FAILED),
        ({"finish_reason": "finished", TAG_NOT_FOUND_STAT: []}, ExitCode.DONE),
        ({"finish_reason": "redis_lost"}, ExitCode.FAILED),
        ({"finish_reason": "shutdown"}, ExitCode.FAILED),
        ({"finish_reason": "finished", REFUSED_STAT: "challenge"}, ExitCode.REFUSED),
        ({REFUSED_STAT: "challenge", HEALTH_FAILED_STAT: True}, ExitCode.REFUSED),
        ({REFUSED_STAT: "challenge", WRITE_FAILED_STAT: 1}, ExitCode.FAILED),
    ],
)
def test_the_verdict_of_final_stats(stats: dict[str, Any], code: ExitCode) -> None:
    assert exit_code(stats) is code


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    with SiteServer(default_site()) as server:
        yield server


def crawl(site: SiteServer, out: Path, *arguments: str, **settings: Any) -> CrawlRun:
    return run_crawl(site.base_url, out, f"tags={TAG}", "follow=stories", *arguments,
                     settings=settings, append=True)  # fmt: skip


def summary(run: CrawlRun) -> str:
    """The run's summary line (logged, and kept in the stats)."""
    line = str(run.stats["summary/line"])
    assert f"INFO: {line}" in run.log
    return line.removeprefix("Run summary: ")


@pytest.mark.integration
def test_0_a_crawl_that_did_its_job(site: SiteServer, tmp_path: Path) -> None:
    run = crawl(site, tmp_path)
    assert run.returncode == 0, run.log[-3000:]
    stories = len(run.of_type("story"))
    assert stories > 0
    assert summary(run).startswith(f"story {stories} new")
    assert summary(run).endswith(f"data in {tmp_path / 'items.jsonl'}; exit 0 (done)")


@pytest.mark.integration
def test_0_a_feed_run_that_finds_nothing_new(site: SiteServer, tmp_path: Path) -> None:
    dataset = tmp_path / "data"
    first = crawl(site, tmp_path / "first", "source=feed", DATASET_DIR=dataset)
    assert first.returncode == 0, first.log[-3000:]
    again = crawl(site, tmp_path / "again", "source=feed", DATASET_DIR=dataset)
    assert again.returncode == 0, again.log[-3000:]
    assert again.of_type("story") == []
    assert "health/failed/min_items/story" not in again.stats
    known = again.stats["feed/known"]
    assert known > 0
    assert summary(again) == (
        f"story {known} unchanged; tag_story {known} unchanged; data in {dataset}; exit 0 (done)"
    )


@pytest.mark.integration
def test_0_nothing_new_never_replaces_a_feed_with_an_empty_one(
    site: SiteServer, tmp_path: Path
) -> None:
    """``-O`` (replace) twice with the dedupe state of the first run: the second exports
    nothing, and the first one's file stays."""
    feed = tmp_path / "out.jsonl"
    state = {"DEDUPE_STATE": tmp_path / "dedupe.sqlite"}
    first = run_crawl(site.base_url, tmp_path / "first", f"tags={TAG}", settings=state)
    feed.write_bytes((tmp_path / "first" / "items.jsonl").read_bytes())
    assert first.returncode == 0
    again = run_crawl(site.base_url, tmp_path / "first", f"tags={TAG}", settings=state)
    assert again.returncode == 0, again.log[-3000:]
    assert again.items == [json.loads(line) for line in feed.read_text("utf-8").splitlines()]
    assert "unchanged" in summary(again)
    assert " new" not in summary(again)


@pytest.mark.integration
def test_0_a_resume_that_completes_the_job(site: SiteServer, tmp_path: Path) -> None:
    """The same ``JOBDIR`` command once more after its job is done: nothing is left to
    fetch, its output is complete, and that is success."""
    job = {"JOBDIR": tmp_path / "job"}
    first = crawl(site, tmp_path, **job)
    assert first.returncode == 0, first.log[-3000:]
    again = crawl(site, tmp_path, **job)
    assert again.returncode == 0, again.log[-3000:]
    assert len(again.items) == len(first.items)  # nothing exported twice
    stories = len(first.of_type("story"))
    assert again.stats["resume/exported_before/story"] == stories
    assert summary(again).startswith(f"story {stories} unchanged")


@pytest.mark.integration
def test_3_a_site_that_refused_the_crawl(site: SiteServer, tmp_path: Path) -> None:
    extensions = {**settings.EXTENSIONS, "tests.site_refusal.SiteRefused": 100}
    run = crawl(site, tmp_path, EXTENSIONS=json.dumps(extensions))
    assert run.returncode == 3, run.log[-3000:]
    assert summary(run).endswith("exit 3 (refused by the site)")
