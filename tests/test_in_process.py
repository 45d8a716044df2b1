"""The in-process crawl gives what the ``scrapy crawl`` process gives: same items, stats,
log and exit status (tests/in_process.py, tests/crawl_helpers.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.crawl_helpers import CrawlRun, crawl_in_process, run_crawl, without_read_times
from topics_crawler.site.server import SiteView

pytestmark = pytest.mark.integration

ARGUMENTS = ("tags=distributed-training", "max_stories=3")
#: Stats that differ between any two runs (clock, memory, timing; the request bytes
#: count the Host header).
RUN_BOUND = ("time", "memusage", "elapsed", "per_minute", "rate/", "progress/", "request_bytes")


def comparable(run: CrawlRun) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
    items = sorted(
        (without_read_times(item) for item in run.items),
        key=lambda item: json.dumps(item, sort_keys=True),
    )
    stats = {
        k: v
        for k, v in run.stats.items()
        if not any(part in k for part in RUN_BOUND) and str(run.out_dir) not in str(v)
    }
    return run.returncode, items, stats


@pytest.mark.parametrize(
    ("settings", "returncode"),
    [({}, 0), ({"HEALTH_MIN_ITEMS": '{"story": 1000}'}, 1)],
    ids=["done", "health-failed"],
)
def test_in_process_crawl_matches_the_process(
    site: SiteView, tmp_path: Path, settings: dict[str, Any], returncode: int
) -> None:
    process = run_crawl(site.base_url, tmp_path / "process", *ARGUMENTS, settings=settings)
    process_requests = sorted(site.requests)
    site.clear_log()
    in_process = crawl_in_process(site.base_url, tmp_path / "in", *ARGUMENTS, settings=settings)
    assert process.returncode == returncode, process.log[-3000:]
    assert comparable(in_process) == comparable(process)
    assert sorted(site.requests) == process_requests
    failures = [(run.out_dir / "items.failures.jsonl").exists() for run in (process, in_process)]
    assert failures[0] == failures[1] == bool(process.stats.get("failures/listed"))
    for run in (process, in_process):
        assert "Scrapy 2." in run.log
        assert "Spider closed" in run.log


def test_a_refused_command_line_is_one_line_and_status_2(tmp_path: Path) -> None:
    run = crawl_in_process("http://127.0.0.1:9", tmp_path, "tags=ai", "max_stories=zero")
    assert run.returncode == 2
    line = "scrapy crawl topics: error: max_stories: 'zero' is not a whole number"
    logged, printed = run.log.splitlines()  # LOG_FILE, then stderr
    assert logged.endswith(f" [topics_crawler.commands.crawl] ERROR: {line}")
    assert printed == line
    assert run.items == []


def test_crawls_in_one_process_do_not_share_their_log_or_resolver(
    site: SiteView, tmp_path: Path
) -> None:
    port = site.base_url.rsplit(":", 1)[1]
    mapped = crawl_in_process(
        f"http://mirror.test:{port}",
        tmp_path / "mapped",
        "tags=machine-learning",
        settings={
            "TWISTED_DNS_RESOLVER": "tests.dns_map.MappedResolver",
            "TEST_DNS_MAP": '{"mirror.test": "127.0.0.1"}',
        },
    )
    # The test resolver knows mirror.test alone: localhost resolves only if the
    # project's resolver is back on the reactor.
    system = crawl_in_process(
        f"http://localhost:{port}", tmp_path / "system", "tags=machine-learning"
    )
    assert (mapped.returncode, system.returncode) == (0, 0), mapped.log[-2000:] + system.log[-2000:]
    assert comparable(mapped) == comparable(system)
    for run in (mapped, system):  # each log holds its own crawl alone
        assert run.log.count("Scrapy 2.") == run.log.count("Spider closed (finished)") == 1
