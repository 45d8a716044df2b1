"""Every write failure at start is one line, never a traceback (issue 21): a ``JOBDIR`` that
cannot be made, a journal, dataset, log, failures or stats file on a disk already full.
Real ``scrapy crawl`` against the local site; the full disk is a tmpfs."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.crawl_helpers import ROOT, crawl_env
from tests.small_disk import leave_free, mounted_tmpfs
from topics_crawler.site.content import default_site
from topics_crawler.site.server import SiteServer

pytestmark = pytest.mark.integration

FULL = "{full}"  # replaced by a folder on a full tmpfs


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    with SiteServer(default_site()) as server:
        yield server


TAG = "distributed-training"


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    with mounted_tmpfs(tmp_path / "full", "1m") as disk:
        leave_free(disk, 0)
        yield disk


@pytest.mark.parametrize(
    "case",
    [
        ("JOBDIR=/proc/x/job", 2, "error: JOBDIR: directory /proc/x/job is not writable"),
        (f"JOBDIR={FULL}/job", 1, "error: crawl not started: the crawl journal"),
        (f"DATASET_DIR={FULL}/data", 1, "error: crawl not started: No space left on device"),
        (f"LOG_FILE={FULL}/crawl.log", 1, "error: crawl not started: LOG_FILE"),
        (f"FAILURES_FILE={FULL}/failures.jsonl", 1, "ERROR: Cannot write"),
        (f"STATS_FILE={FULL}/stats.json", 0, "ERROR: Stats not written"),
    ],
    ids=["jobdir-in-proc", "jobdir", "dataset", "log", "failures", "stats"],
)
def test_a_write_failure_at_start_is_one_line(
    site: SiteServer, full_disk: Path, tmp_path: Path, case: tuple[str, int, str]
) -> None:
    setting, status, line = case
    # a tag that does not exist puts a line into failures.jsonl (and fails the run: the
    # other cases go without it)
    tags = "distributed-training,nope" if setting.startswith("FAILURES_FILE") else TAG
    command = [
        sys.executable, "-m", "scrapy", "crawl", "topics", "-a", f"tags={tags}",
        "-a", "follow=stories", "-o", str(tmp_path / "out.jsonl"),
        "-s", f"MEDIUM_BASE_URL={site.base_url}", "-s", "LOG_LEVEL=WARNING",
        "-s", setting.replace(FULL, str(full_disk)),
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == status, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    problems = [
        row
        for row in done.stderr.splitlines()
        if ("ERROR" in row or "error:" in row) and "Tag not found: nope" not in row
    ]
    assert len(problems) == 1, problems
    assert line in problems[0]
