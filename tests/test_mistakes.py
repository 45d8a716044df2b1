"""A user's mistakes at crawl level get one clear line and an exit status that says so (issue
22): a tag that does not exist, a mirror that is down, a crawl with nowhere to put its items.
(Bad ``-a`` arguments are refused before a crawl starts: ``test_spider_arguments.py``,
``test_cli_errors.py``.) Each crawl runs in this process; its output is checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scrapy.settings import Settings

from tests.crawl_helpers import crawl_in_process
from tests.services import free_port
from topics_crawler.middlewares.mirror import mirror_not_answering
from topics_crawler.site.server import SiteView

pytestmark = pytest.mark.integration

TAG = "distributed-training"
MISSING = "no-such-tag"


def failures_of(run_stats: dict[str, object]) -> list[dict[str, object]]:
    path = Path(str(run_stats["failures/file"]))
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


@pytest.mark.parametrize(
    "arguments",
    [(), ("history=newest",), ("history=archive",), ("source=feed",)],
    ids=["tag page", "graphql history", "day archive", "feed"],
)
def test_a_tag_that_does_not_exist_is_one_line_and_exit_1(
    site: SiteView, tmp_path: Path, arguments: tuple[str, ...]
) -> None:
    run = crawl_in_process(site.base_url, tmp_path, f"tags={MISSING}", *arguments)
    assert run.returncode == 1, run.log[-3000:]
    errors = [line.partition("] ")[2] for line in run.log.splitlines() if " ERROR: " in line]
    asked = "feed/tag" if arguments == ("source=feed",) else "tag"
    # the address asked (the mirror's), whichever of the tag's requests answered first
    assert errors in (
        [f"ERROR: Tag not found: {MISSING} ({site.base_url}/{asked}/{MISSING})"],
        [f"ERROR: Tag not found: {MISSING} ({site.base_url}/{asked}/{MISSING}/archive)"],
    )
    assert "Ignoring non-200" not in run.log
    assert "Health checks skipped: no tag given exists" in run.log
    assert run.stats["tags/not_found"] == [MISSING]
    assert run.stats["failures/tag_not_found"] == 1
    assert "failures/total" not in run.stats
    [failure] = failures_of(run.stats)
    assert (failure["reason"], failure["status"]) == ("tag_not_found", 404)
    assert run.stats["summary/line"] == (
        f"Run summary: nothing found; tag not found: {MISSING}; "
        f"data in {tmp_path / 'items.jsonl'}; exit 1 (failed)"
    )
    assert run.items == []


def test_a_missing_tag_beside_a_real_one_keeps_the_real_ones_data_and_fails_the_run(
    site: SiteView, tmp_path: Path
) -> None:
    run = crawl_in_process(
        site.base_url, tmp_path, f"tags={MISSING},{TAG}", "follow=stories", "max_stories=3"
    )
    assert run.returncode == 1, run.log[-3000:]
    assert run.log.count("Tag not found:") == 1
    assert len(run.of_type("story")) == 3
    assert [page["tag"] for page in run.of_type("tag_page")] == [TAG]
    assert "Health checks passed" in run.log
    assert "tag not found: no-such-tag;" in str(run.stats["summary/line"])


def test_a_mirror_that_is_down_is_one_line_and_exit_1_at_once(tmp_path: Path) -> None:
    mirror = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    run = crawl_in_process(mirror, tmp_path, f"tags={TAG}")
    assert run.returncode == 1
    line = (
        f"scrapy crawl topics: error: crawl not started: MEDIUM_BASE_URL {mirror} is not "
        "answering: connection refused"
    )
    # the line on stderr, and the same line as a record in LOG_FILE (a Scrapyd job's log)
    assert {text.partition("ERROR: ")[2] or text for text in run.log.splitlines()} == {line}
    # before anything starts (was 13 s of retries and two tracebacks): no request, no stats
    assert not run.stats.get("downloader/request_count")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["crawl.log"]  # nothing else


def test_a_replay_needs_no_mirror(tmp_path: Path) -> None:
    """``REPLAY_MODE=replay`` fetches nothing: a mirror that is down is no reason to stop."""
    settings = {"MEDIUM_BASE_URL": f"http://127.0.0.1:{free_port()}", "REPLAY_MODE": "replay"}
    assert mirror_not_answering(Settings(settings)) is None
    assert mirror_not_answering(Settings({"MEDIUM_BASE_URL": "https://medium.com/"})) is None
