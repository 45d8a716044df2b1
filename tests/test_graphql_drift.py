"""A GraphQL answer of ``errors`` is drift: recorded per operation, written to
``failures.jsonl`` with the operation and Medium's first message, and judged by the health
verdict (failed unless the tag day archive stood in)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.project import get_project_settings
from scrapy.utils.test import get_crawler

from tests.crawl_helpers import CrawlRun, run_crawl
from topics_crawler.extensions.health import HealthConfig, graphql_drift_checks
from topics_crawler.graphql.drift import drifted_operations, failure_detail, record_drift
from topics_crawler.graphql.post_responses import read_responses
from topics_crawler.graphql.strict import ReadFailure
from topics_crawler.site.author_archive import author_archive_site
from topics_crawler.site.server import SiteServer

TAG = "distributed-training"
LIMIT_MESSAGE = (
    "Variable '$limit' of type 'Int!' used in position expecting type 'PaginationLimit'."
)


def test_an_errors_answer_is_recorded_once_per_operation_with_its_first_message() -> None:
    stats = MemoryStatsCollector(get_crawler())
    answer = json.dumps([{"errors": [{"message": LIMIT_MESSAGE}, {"message": "second"}]}])
    failure = read_responses(answer, "c2a4db010fd3", "2026-09-16T00:00:00Z")
    assert isinstance(failure, ReadFailure)
    assert failure.messages == (LIMIT_MESSAGE, "second")
    line = failure_detail(stats, "UserArchivePostsQuery", failure)
    assert line == f"Medium refused the GraphQL operation UserArchivePostsQuery: {LIMIT_MESSAGE}"
    record_drift(stats, "UserArchivePostsQuery", ReadFailure("graphql_errors", "x", ("later",)))
    assert list(drifted_operations(stats.get_stats())) == [
        ("UserArchivePostsQuery", 2, LIMIT_MESSAGE)
    ]
    other = ReadFailure("missing_field", "data.post is missing")
    assert failure_detail(stats, "PostResponsesQuery", other) == "data.post is missing"
    assert "graphql/drift/PostResponsesQuery" not in stats.get_stats()


@pytest.mark.parametrize(
    ("walks", "failed", "passed"),
    [(0, 0, False), (2, 0, True), (2, 1, False)],
)
def test_tag_archive_drift_passes_only_when_the_day_archive_stood_in(
    walks: int, failed: int, passed: bool
) -> None:
    stats = {
        "graphql/drift/TagArchiveFeedQuery": 1,
        "graphql/drift/TagArchiveFeedQuery/message": "Cannot query field 'posts' on type 'Tag'.",
        "graphql/drift/PostResponsesQuery": 3,
        "graphql/drift/PostResponsesQuery/message": "boom",
        "day_archive/walks": walks,
        "day_archive/failed/http_403": failed,
    }
    responses, tags = graphql_drift_checks(stats)
    assert (responses.name, responses.passed) == ("graphql_drift/PostResponsesQuery", False)
    assert responses.detail == (
        "Medium refused the GraphQL operation PostResponsesQuery: boom (3 answer(s)); "
        "its data is missing from this crawl: the operation needs updating"
    )
    assert (tags.name, tags.passed) == ("graphql_drift/TagArchiveFeedQuery", passed)
    assert tags.detail.startswith(
        "Medium refused the GraphQL operation TagArchiveFeedQuery: Cannot query field 'posts'"
    )


def test_the_drift_check_is_on_in_the_project_settings() -> None:
    assert HealthConfig.from_settings(get_project_settings()).graphql_drift is True
    assert HealthConfig().graphql_drift is False


# --- end to end ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def drifted_site() -> Iterator[SiteServer]:
    """The author archive site whose GraphQL schema lost the fields the author archive and
    the responses select (as Medium's would after a rename)."""
    content = author_archive_site()
    content.schema_drift = {"User.homepagePostsConnection", "Post.threadedPostResponses"}
    with SiteServer(content) as server:
        yield server


@pytest.mark.integration
def test_a_crawl_whose_operations_drifted_fails_naming_them(
    drifted_site: SiteServer, tmp_path: Path
) -> None:
    failures_file = tmp_path / "failures.jsonl"
    run: CrawlRun = run_crawl(
        drifted_site.base_url, tmp_path, f"tags={TAG}", "author_stories=5", "responses=5",
        settings={"FAILURES_FILE": str(failures_file)},
    )  # fmt: skip
    assert run.returncode == 1, run.log[-3000:]
    assert run.of_type("story")  # the rest of the crawl went on
    archive_line = (
        "Medium refused the GraphQL operation UserArchivePostsQuery: Cannot query field "
        "'homepagePostsConnection' on type 'User'."
    )
    responses_line = (
        "Medium refused the GraphQL operation PostResponsesQuery: Cannot query field "
        "'threadedPostResponses' on type 'Post'. Did you mean 'postResponses'?"
    )
    recorded = [json.loads(line) for line in failures_file.read_text("utf-8").splitlines()]
    drift = {(r["kind"], r["detail"]) for r in recorded if r["reason"] == "graphql_errors"}
    assert drift == {("author_archive", archive_line), ("responses", responses_line)}
    assert run.stats["graphql/drift/UserArchivePostsQuery"] == 2  # the two state-cursor authors
    assert run.stats["graphql/drift/PostResponsesQuery"] >= 1
    assert run.stats["health/failed"] is True
    for line in (archive_line, responses_line):
        assert f"ERROR: {line} (" in run.log  # the health verdict's one line
