"""End to end: ``scrapy crawl topics -a responses=N`` fetches each story's responses with
their threads from the local site's GraphQL endpoint, and a failing endpoint costs the
stories nothing. Crawls run in-process; those whose failed exit status is checked run as a
process."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.crawl_helpers import CrawlRun, crawl_in_process, run_crawl
from topics_crawler.site.content import default_site
from topics_crawler.site.model import SiteContent
from topics_crawler.site.server import SiteServer, SiteView

pytestmark = pytest.mark.integration

TAG = "distributed-training"
HANDS_ON = "hands-on-distributed-training-from-single-gpu-to-multi-gpu-with-lightning-ai"
PARALLELISM = "distributed-training-data-tensor-and-pipeline-parallelism"


def story_id(content: SiteContent, slug: str) -> str:
    return next(story.id for story in content.stories.values() if story.slug == slug)


def crawl(
    site: SiteServer | SiteView, out: Path, *arguments: str, exit_status: int = 0, **settings: Any
) -> CrawlRun:
    site.clear_log()
    run = (crawl_in_process if exit_status == 0 else run_crawl)(
        site.base_url, out, f"tags={TAG}", "follow=stories", *arguments,
        settings={"FAILURES_FILE": str(out / "failures.jsonl"), **settings},
    )  # fmt: skip
    assert run.returncode == exit_status, run.log[-3000:]
    return run


def failures(run: CrawlRun) -> list[dict[str, Any]]:
    path = run.out_dir / "failures.jsonl"
    lines = path.read_text("utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def site(session_site: SiteServer) -> SiteView:
    return session_site.view()


@pytest.fixture(scope="module")
def content(site: SiteView) -> SiteContent:
    return site.content


def stories_with_responses(run: CrawlRun) -> set[str]:
    return {s["story_id"] for s in run.of_type("story") if s.get("responses") != 0}


def test_threads_arrive_with_parents_depths_and_no_more_than_n(
    site: SiteView, content: SiteContent, tmp_path: Path
) -> None:
    run = crawl(site, tmp_path, "responses=10")
    rows = run.of_type("response")
    by_story = Counter(row["story_id"] for row in rows)
    hands_on, parallelism = story_id(content, HANDS_ON), story_id(content, PARALLELISM)
    assert by_story == {hands_on: 5, parallelism: 10}
    thread = [row for row in rows if row["story_id"] == hands_on]
    assert [row["depth"] for row in thread] == [1, 2, 3, 2, 1]
    ids = {row["response_id"] for row in thread}
    assert [row["parent_id"] in ids | {hands_on} for row in thread] == [
        True, True, True, False, True,  # the fourth answers the deleted response
    ]  # fmt: skip
    member = thread[-1]
    assert (member["is_member_only"], member["text_is_preview"]) == (True, True)
    assert all(row["author_username"] and row["text"] and row["published_at"] for row in rows)
    stats = run.stats
    # One request per story that has responses (stories saying 0 cost none), one page each.
    asked = stories_with_responses(run)
    assert stats["responses/requests"] == stats["responses/pages"] == len(asked)
    assert stats["responses/rows"] == 15
    assert stats["responses/deleted"] == 1
    assert stats["item_scraped_count/response"] == 15
    assert site.count("/_/graphql", method="POST") == len(asked)
    assert len(run.of_type("story")) == len({s["story_id"] for s in run.of_type("story")})


def test_more_than_a_page_follows_the_cursor(
    site: SiteView, content: SiteContent, tmp_path: Path
) -> None:
    run = crawl(site, tmp_path, "responses=40")
    parallelism = story_id(content, PARALLELISM)
    rows = [row for row in run.of_type("response") if row["story_id"] == parallelism]
    assert len(rows) == 30
    assert len({row["response_id"] for row in rows}) == 30
    assert run.stats["responses/pages"] == len(stories_with_responses(run)) + 1


def test_no_responses_argument_no_responses_requests(site: SiteView, tmp_path: Path) -> None:
    run = crawl(site, tmp_path)
    assert run.of_type("response") == []
    assert "responses/requests" not in run.stats
    assert site.count("/_/graphql", method="POST") == 0


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("errors", "graphql_errors"),
        ("wrong_post", "wrong_post"),
        ("repeat_cursor", "repeated_cursor"),
    ],
)
def test_a_failing_endpoint_never_costs_the_stories(
    tmp_path: Path, fault: str, reason: str
) -> None:
    """Every story is still there; each story's responses stop with the reason, in the
    stats, the log and failures.jsonl; so much failing fails the crawl health (exit 1)."""
    content = default_site()
    content.responses_fault = fault
    with SiteServer(content) as site:
        run = crawl(site, tmp_path, "responses=40", exit_status=1, RETRY_TIMES=0)
        asked = stories_with_responses(run)
    listed = {s for ids in content.tags[TAG].sections.values() for s in ids}
    assert {s["story_id"] for s in run.of_type("story")} == listed
    assert run.stats[f"responses/failed/{reason}"] == len(asked)
    lines = [line for line in failures(run) if line["kind"] == "responses"]
    assert len(lines) == len(asked)
    assert {line["reason"] for line in lines} == {reason}
    assert f"stopped: {reason}:" in run.log
    assert "Health check max_failure_ratio failed" in run.log


def test_bad_entries_are_skipped_and_counted(tmp_path: Path) -> None:
    content = default_site()
    content.responses_fault = "bad_entries"
    with SiteServer(content) as site:
        run = crawl(site, tmp_path, "responses=40")
    assert run.stats["responses/skipped/wrong_parent"] >= 1
    assert run.stats["responses/skipped/null_entry"] >= 1
    assert run.stats["responses/skipped/wrong_type"] >= 1
    assert "skipped 1 response(s): null_entry" in run.log
    assert run.of_type("response")
    assert [line for line in failures(run) if line["kind"] == "responses"] == []


def test_bad_responses_argument_exits_2(site: SiteView, tmp_path: Path) -> None:
    site.clear_log()
    run = crawl_in_process(site.base_url, tmp_path, f"tags={TAG}", "responses=-2")
    assert run.returncode == 2
    assert "responses: must be 0 to 1000, got -2" in run.log
    assert site.requests == []


def test_the_dataset_gets_a_responses_table(site: SiteView, tmp_path: Path) -> None:
    dataset = tmp_path / "data"
    crawl(site, tmp_path, "responses=10", DATASET_DIR=str(dataset))
    rows = pq.read_table(dataset / "responses.parquet").to_pylist()
    lines = (dataset / "responses.jsonl").read_text("utf-8").splitlines()
    assert len(rows) == len(lines) == 15
    assert {row["response_id"] for row in rows} == {
        json.loads(line)["response_id"] for line in lines
    }
    assert {row["depth"] for row in rows} == {1, 2, 3}
    manifest = json.loads((dataset / "manifest.json").read_text("utf-8"))
    assert manifest["counts"]["response"] == 15
