"""The ``JOBDIR`` journal and the ``-o`` feed agree after any failure, the first checkpoint
included (issue 21): a job stopped by a full disk at any point of its start, or SIGKILLed
before and after its first checkpoint, ends — with the same command — holding every item
once. Real ``scrapy crawl`` processes against the local site; full disks are a tmpfs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.crawl_helpers import ROOT, crawl_env
from tests.small_disk import leave_free, mounted_tmpfs
from topics_crawler.site.content import default_site
from topics_crawler.site.scale import scale_tag_slugs, with_scale_tags
from topics_crawler.site.server import SiteServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

N_TAGS = 4
TAGS = "tags=" + ",".join(scale_tag_slugs(N_TAGS))


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    """Scale tags answering after 20 ms: a crawl lasts long enough to be stopped in."""
    with SiteServer(with_scale_tags(default_site(), N_TAGS), latency=0.02) as server:
        yield server


def command(site: SiteServer, feed: Path, jobdir: Path, log: Path, **settings: Any) -> list[str]:
    line = [sys.executable, "-m", "scrapy", "crawl", "topics", "-a", TAGS, "-o", str(feed)]
    every = {
        "MEDIUM_BASE_URL": site.base_url,
        "JOBDIR": jobdir,
        "LOG_FILE": log,
        "RATE_START": 0,
        **settings,
    }
    for name, value in every.items():
        line += ["-s", f"{name}={value}"]
    return line


def run(line: list[str]) -> tuple[int, list[str], str]:
    """(exit status, ERROR lines of the log, stderr and the log: where a traceback would be)."""
    done = subprocess.run(
        line, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=300, check=False
    )
    log_file = next(Path(v.split("=", 1)[1]) for v in line if v.startswith("LOG_FILE="))
    text = log_file.read_text("utf-8") if log_file.exists() else ""
    errors = [row for row in text.splitlines() if "] ERROR: " in row]
    return done.returncode, errors, done.stderr + text


def item_keys(feed: Path) -> Counter[str]:
    """How often each entity is in the feed."""
    keys: Counter[str] = Counter()
    for line in feed.read_text("utf-8").splitlines():
        item = json.loads(line)
        ident = item.get("story_id") or item.get("username") or item.get("tag") or item["url"]
        keys[f"{item['item_type']}:{ident}"] += 1
    return keys


def assert_each_item_once(feed: Path, reference: Counter[str]) -> None:
    keys = item_keys(feed)
    doubled = {key: n for key, n in keys.items() if n > 1}
    assert not doubled, f"{len(doubled)} entities twice or more: {sorted(doubled)[:5]}"
    assert set(keys) == set(reference)


@pytest.fixture(scope="module")
def reference(site: SiteServer, tmp_path_factory: pytest.TempPathFactory) -> Counter[str]:
    """What an uninterrupted job exports."""
    folder = tmp_path_factory.mktemp("reference")
    feed = folder / "items.jsonl"
    status, errors, _ = run(command(site, feed, folder / "job", folder / "crawl.log"))
    assert (status, errors) == (0, [])
    keys = item_keys(feed)
    assert len(keys) > N_TAGS * 20
    return keys


@pytest.mark.parametrize("free_kib", [0, 72, 80, 96, 160])
def test_a_jobdir_on_a_full_disk_at_start_then_the_same_command_exports_each_item_once(
    site: SiteServer, reference: Counter[str], tmp_path: Path, free_kib: int
) -> None:
    feed = tmp_path / "items.jsonl"
    feed.write_text('{"item_type": "note", "url": "kept from an earlier job"}\n', "utf-8")
    before = feed.read_text("utf-8")
    with mounted_tmpfs(tmp_path / "small", "1m") as disk:
        filler = leave_free(disk, free_kib)
        line = command(site, feed, disk / "job", tmp_path / "first.log")
        status, errors, output = run(line)
        assert status == 1
        assert "Traceback" not in output
        refusals = [row for row in output.splitlines() if row.startswith("scrapy crawl")]
        # one line: on stderr, and the same line as the log file's one error record
        said = {error.partition("] ERROR: ")[2] for error in errors} | set(refusals)
        assert len(said) == 1, errors + refusals
        assert len(errors) <= 1, errors
        assert len(refusals) <= 1, refusals
        filler.unlink()
        status, errors, _ = run(command(site, feed, disk / "job", tmp_path / "again.log"))
        assert (status, errors) == (0, [])
    text = feed.read_text("utf-8")
    assert text.startswith(before), "what the feed held before the job stays"
    feed.write_text(text[len(before) :], "utf-8")
    assert_each_item_once(feed, reference)


@pytest.mark.parametrize(
    ("interval", "after_items"),
    [(60.0, 1), (60.0, 30), (0.5, 1), (0.5, 50)],
    ids=[
        "before-first-checkpoint-1",
        "before-first-checkpoint-30",
        "checkpoints-1",
        "checkpoints-50",
    ],
)
def test_a_job_killed_at_any_moment_ends_with_each_item_once(
    site: SiteServer, reference: Counter[str], tmp_path: Path, interval: float, after_items: int
) -> None:
    feed = tmp_path / "items.jsonl"
    line = command(
        site, feed, tmp_path / "job", tmp_path / "first.log", RESUME_CHECKPOINT_INTERVAL=interval
    )
    process = subprocess.Popen(line, cwd=ROOT, env=crawl_env(), stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            if feed.exists() and feed.read_bytes().count(b"\n") >= after_items:
                break
            time.sleep(0.02)
        assert process.poll() is None, "the crawl ended before the kill"
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    status, errors, _ = run(command(site, feed, tmp_path / "job", tmp_path / "again.log"))
    assert (status, errors) == (0, [])
    assert_each_item_once(feed, reference)
