"""Pages that failed for good go to failures.jsonl and the stats; crawl health checks at close."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from scrapy import Spider, signals
from scrapy.utils.test import get_crawler

from tests.crawl_helpers import ROOT
from tests.services import serving
from topics_crawler.extensions.failures import FailureLog, failure_reason, failures_path
from topics_crawler.extensions.health import (
    HEALTH_FAILED_STAT,
    CrawlHealth,
    HealthConfig,
    evaluate,
    ratio,
)
from topics_crawler.items import Story
from topics_crawler.signals import page_failed


def path_for(**settings: Any) -> Path | None:
    return failures_path(get_crawler(Spider, settings).settings)


def test_failures_file_location_precedence(tmp_path: Path) -> None:
    explicit = tmp_path / "f.jsonl"
    feeds = {str(tmp_path / "out" / "items.jsonl"): {"format": "jsonl"}}
    assert path_for(FAILURES_FILE=str(explicit), DATASET_DIR="data/x", FEEDS=feeds) == explicit
    assert path_for(DATASET_DIR="data/x", FEEDS=feeds) == Path("data/x/failures.jsonl")
    assert path_for(FEEDS=feeds) == tmp_path / "out" / "items.failures.jsonl"  # named after it
    assert path_for(FEEDS={"file:///srv/crawl/out.csv": {"format": "csv"}}) == Path(
        "/srv/crawl/out.failures.jsonl"
    )
    remote_then_local = {"s3://bucket/items.jsonl": {}, "local/stories.jsonl": {}}
    assert path_for(FEEDS=remote_then_local) == Path("local/stories.failures.jsonl")
    assert path_for(FEEDS={"stdout:": {"format": "jsonl"}}) is None
    assert path_for(FEEDS={"out/%(name)s/%(time)s.jsonl": {}}) is None
    assert path_for(FEEDS={"out/%(time)s.jsonl": {}}) == Path("out/failures.jsonl")
    assert path_for() is None


@pytest.mark.parametrize(
    ("kind", "status", "reason", "recorded"),
    [
        ("story", 404, "http_404", "gone"),
        ("author", 410, "http_410", "gone"),
        ("tag", 404, "http_404", "http_404"),  # a missing tag page is a real error
        ("story", 500, "http_500", "http_500"),
        ("story", None, "", "unknown"),
    ],
)
def test_failure_reason(kind: str, status: int | None, reason: str, recorded: str) -> None:
    assert failure_reason(kind, status, reason) == recorded


def send_failure(crawler: Any, url: str, kind: str, status: int | None, reason: str) -> None:
    crawler.signals.send_catch_log(
        signal=page_failed, url=url, kind=kind, status=status, reason=reason, attempts=3
    )


def test_failures_are_written_flushed_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "run" / "failures.jsonl"
    path.parent.mkdir()
    path.write_text('{"stale": true}\n', encoding="utf-8")
    crawler = get_crawler(Spider, {"FAILURES_FILE": str(path)})
    extension = FailureLog.from_crawler(crawler)
    spider = crawler._create_spider("test")
    extension.spider_opened(spider)
    send_failure(crawler, "https://medium.com/p/0123456789ab", "story", 404, "http_404")
    send_failure(crawler, "https://medium.com/tag/llm", "tag", 503, "http_503")
    lines = path.read_text("utf-8").splitlines()  # readable before the crawl ends
    assert len(lines) == 2
    extension.spider_closed(spider)
    gone, error = (json.loads(line) for line in path.read_text("utf-8").splitlines())
    assert gone["reason"] == "gone"
    assert gone["status"] == 404
    assert error == {
        "url": "https://medium.com/tag/llm",
        "kind": "tag",
        "status": 503,
        "reason": "http_503",
        "attempts": 3,
        "time": error["time"],
    }
    assert error["time"].endswith("Z")
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    assert stats["failures/gone"] == 1
    assert stats["failures/total"] == 1
    assert stats["failures/http_503"] == 1
    assert "failures/http_404" not in stats
    assert [json.loads(line) for line in kept_files(path)[0].read_text("utf-8").splitlines()] == [
        {"stale": True}  # the earlier run's failures, kept under another name
    ]


def kept_files(path: Path) -> list[Path]:
    """Earlier runs' failures files beside ``path`` (``<stem>.<time>.jsonl``)."""
    return sorted(p for p in path.parent.glob(f"{path.stem}.*{path.suffix}") if p != path)


def test_each_run_has_its_own_failures_file(tmp_path: Path) -> None:
    """Three runs into the same place: the file holds the last run's failures, each earlier
    run's that had some is kept under the time it was written, an empty one is not kept."""
    path = tmp_path / "out.failures.jsonl"
    feeds = {str(tmp_path / "out.jsonl"): {"format": "jsonl"}}
    for run, failed in enumerate([["a", "b"], [], ["c"], ["d"]]):
        crawler = get_crawler(Spider, {"FEEDS": feeds})
        extension = FailureLog.from_crawler(crawler)
        spider = crawler._create_spider("test")
        extension.spider_opened(spider)
        for tag in failed:
            send_failure(crawler, f"https://medium.com/tag/{tag}", "tag", 503, "http_503")
        extension.spider_closed(spider)
        assert crawler.stats is not None
        if not failed:  # a run with no failure leaves no file, and names none
            assert not path.exists()
            assert crawler.stats.get_value("failures/file") is None
            continue
        assert crawler.stats.get_value("failures/file") == str(path)
        os.utime(path, (1_800_000_000 + run, 1_800_000_000 + run))  # written at another time
    urls = [[json.loads(line)["url"][-1] for line in p.read_text().splitlines()] for p in
            [*kept_files(path), path]]  # fmt: skip
    assert urls == [["a", "b"], ["c"], ["d"]]
    assert [p.name for p in kept_files(path)] == [
        "out.failures.20270115T080000Z.jsonl",
        "out.failures.20270115T080002Z.jsonl",
    ]


def test_without_a_place_failures_are_still_counted() -> None:
    crawler = get_crawler(Spider)
    extension = FailureLog.from_crawler(crawler)
    extension.spider_opened(crawler._create_spider("test"))
    send_failure(crawler, "https://medium.com/@x", "author", None, "timeout_error")
    assert crawler.stats is not None
    assert crawler.stats.get_value("failures/timeout_error") == 1
    assert extension.file is None


# --- health ----------------------------------------------------------------------------


def test_ratio_edges() -> None:
    assert ratio(0, 0) == 0.0
    assert ratio(2, 0) == 1.0
    assert ratio(1, 4) == 0.25


def test_entities_unchanged_since_the_last_run_count_as_found() -> None:
    config = HealthConfig(min_items={"story": 5})
    stats = {"dedupe/unchanged/story": 13}
    (result,) = evaluate(config, stats, {})
    assert result.passed
    assert result.detail == "13 story items (0 exported, 13 unchanged), minimum 5"


def test_evaluate_passes_and_fails_with_figures() -> None:
    config = HealthConfig(
        min_items={"story": 10, "author": 1}, max_failure_ratio=0.1, max_reject_ratio=0.2
    )
    stats = {
        "parse/pages/tag": 2,
        "parse/pages/story": 16,
        "fetch/failed/story": 2,
        "failures/total": 3,
        "failures/gone": 5,  # deleted stories are not failures of the crawl
        "validate/valid/story": 9,
        "validate/rejected/story": 1,
        "validate/rejected/story/missing_title": 1,  # a sub-count, not counted twice
    }
    results = {r.name: r for r in evaluate(config, stats, {"story": 9, "author": 4})}
    assert not results["min_items/story"].passed
    assert results["min_items/story"].detail == (
        "9 story items (9 exported, 0 unchanged), minimum 10"
    )
    assert results["min_items/author"].passed
    assert not results["max_failure_ratio"].passed
    assert results["max_failure_ratio"].detail == ("3 of 20 pages failed (15.0%), maximum 10.0%")
    assert results["max_reject_ratio"].passed
    assert results["max_reject_ratio"].detail.startswith("1 of 10 items rejected")


def test_health_is_off_without_checks() -> None:
    from scrapy.exceptions import NotConfigured

    with pytest.raises(NotConfigured):
        CrawlHealth.from_crawler(get_crawler(Spider, {"HEALTH_MIN_ITEMS": {}}))


def test_health_extension_flags_a_failed_crawl(caplog: pytest.LogCaptureFixture) -> None:
    crawler = get_crawler(
        Spider,
        {
            "HEALTH_MIN_ITEMS": {"story": 2},
            "HEALTH_MAX_FAILURE_RATIO": None,
            "HEALTH_MAX_REJECT_RATIO": None,
        },
    )
    extension = CrawlHealth.from_crawler(crawler)
    spider = crawler._create_spider("test")
    crawler.signals.send_catch_log(signal=signals.item_scraped, item=Story(), spider=spider)
    with caplog.at_level(logging.ERROR, logger="topics_crawler.extensions.health"):
        extension.spider_closed(spider, "finished")
    assert crawler.stats is not None
    assert crawler.stats.get_value(HEALTH_FAILED_STAT) is True
    assert crawler.stats.get_value("health/failed/min_items/story") == (
        "1 story items (1 exported, 0 unchanged), minimum 2"
    )
    assert (
        "Health check min_items/story failed: 1 story items (1 exported, 0 unchanged), minimum 2"
        in caplog.text
    )


class Unavailable(BaseHTTPRequestHandler):
    """A mirror that answers every request with 503."""

    def do_GET(self) -> None:
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


def scrapy_crawl(tmp_path: Path, *settings: str) -> subprocess.CompletedProcess[str]:
    """A real ``scrapy crawl`` whose only page cannot be fetched (its mirror answers 503)."""
    with serving(Unavailable) as mirror:
        return _scrapy_crawl(tmp_path, f"MEDIUM_BASE_URL={mirror}", *settings)


def _scrapy_crawl(tmp_path: Path, *settings: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "scrapy", "crawl", "topics", "-a", "tags=llm"]
    command += ["-O", str(tmp_path / "items.jsonl")]
    for setting in (
        "RETRY_TIMES=0",
        "ROBOTSTXT_OBEY=False",
        "AUTOTHROTTLE_ENABLED=False",
        "TELNETCONSOLE_ENABLED=False",
        *settings,
    ):
        command += ["-s", setting]
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.integration
def test_scrapy_crawl_exits_1_when_a_health_check_fails(tmp_path: Path) -> None:
    failed = scrapy_crawl(tmp_path)
    assert failed.returncode == 1, failed.stderr[-2000:]
    assert (
        "Health check min_items/story failed: 0 story items (0 exported, 0 unchanged), minimum 1"
        in failed.stderr
    )
    assert "Health check max_failure_ratio failed: 1 of 1 pages failed" in failed.stderr
    record = json.loads((tmp_path / "items.failures.jsonl").read_text("utf-8"))
    assert record["url"] == "https://medium.com/tag/llm"
    assert record["kind"] == "tag"
    unchecked = scrapy_crawl(tmp_path, "HEALTH_ENABLED=False")
    assert unchecked.returncode == 0, unchecked.stderr[-2000:]
