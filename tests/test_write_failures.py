"""Failures to write are failures: a full disk under a feed, a dataset or a JOBDIR journal
stops the crawl with one line naming the file and the cause and exits non-zero; the
same command on a disk with room then finishes the job (real ``scrapy crawl`` on a tiny
tmpfs; needs root to mount it, skipped otherwise)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.services import ROOT
from tests.small_disk import leave_free, mounted_tmpfs
from topics_crawler.site.content import default_site
from topics_crawler.site.scale import scale_tag_slugs, with_scale_tags
from topics_crawler.site.server import SiteServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

N_TAGS = 10
TAGS = "tags=" + ",".join(scale_tag_slugs(N_TAGS))


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    with SiteServer(with_scale_tags(default_site(), N_TAGS)) as server:
        yield server


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs; tests fill it to leave what they need with :func:`leave_free`."""
    with mounted_tmpfs(tmp_path / "small") as disk:
        yield disk


def crawl(site: SiteServer, log: Path, *extra: str, **settings: Any) -> tuple[int, list[str]]:
    """Run ``scrapy crawl topics``; (exit status, ERROR lines of its log)."""
    line = [sys.executable, "-m", "scrapy", "crawl", "topics", "-a", TAGS, *extra]
    all_settings = {"MEDIUM_BASE_URL": site.base_url, "LOG_FILE": log, **settings}
    for name, value in all_settings.items():
        line += ["-s", f"{name}={value}"]
    env = {k: v for k, v in os.environ.items() if k != "MEDIUM_BASE_URL"}
    done = subprocess.run(line, cwd=ROOT, env=env, capture_output=True, timeout=300, check=False)
    errors = [row for row in log.read_text("utf-8").splitlines() if "] ERROR: " in row]
    return done.returncode, errors


def test_a_full_disk_under_a_feed_is_one_line_and_a_non_zero_exit(
    site: SiteServer, small_disk: Path, tmp_path: Path
) -> None:
    leave_free(small_disk, 16)
    out = small_disk / "items.jsonl"
    status, errors = crawl(site, tmp_path / "crawl.log", "-O", str(out))
    assert status == 1
    assert len(errors) == 1, errors
    assert f"Cannot write feed {out}: No space left on device" in errors[0]


def test_a_full_disk_under_a_dataset_keeps_it_and_the_same_command_finishes_it(
    site: SiteServer, small_disk: Path, tmp_path: Path
) -> None:
    leave_free(small_disk, 96)
    dataset = small_disk / "dataset"
    status, errors = crawl(site, tmp_path / "crawl.log", DATASET_DIR=dataset)
    assert status == 1
    assert errors, "the failure is logged"
    assert f"Dataset {dataset} not updated: cannot write" in errors[0]
    assert "full" in errors[0] or "No space left" in errors[0]
    assert not (dataset / "manifest.json").exists(), "nothing looks done"
    assert not (dataset / ".state").exists(), "no entity remembered as exported"

    room = tmp_path / "room"
    shutil.copytree(dataset, room / "dataset")  # the same dataset on a disk with room
    status, errors = crawl(site, tmp_path / "again.log", DATASET_DIR=room / "dataset")
    assert (status, errors) == (0, [])
    stories = pq.read_table(room / "dataset" / "stories.parquet").column("story_id").to_pylist()
    assert len(set(stories)) == len(stories) >= N_TAGS * 20


def test_a_full_disk_under_the_journal_stops_the_job_and_it_resumes(
    site: SiteServer, small_disk: Path, tmp_path: Path
) -> None:
    filler = leave_free(small_disk, 100)  # the journal's first commits fit, later ones not
    out = tmp_path / "items.jsonl"
    status, errors = crawl(site, tmp_path / "crawl.log", "-o", str(out), JOBDIR=small_disk / "job")
    assert status == 1
    assert len(errors) == 1, errors
    assert f"Crawl journal {small_disk / 'job' / 'journal.sqlite'} not saved" in errors[0]

    filler.unlink()
    status, errors = crawl(site, tmp_path / "again.log", "-o", str(out), JOBDIR=small_disk / "job")
    assert (status, errors) == (0, [])
    items = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    stories = {item["story_id"] for item in items if item["item_type"] == "story"}
    assert len(stories) == N_TAGS * 20
