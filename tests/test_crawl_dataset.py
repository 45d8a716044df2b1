"""End to end: crawls of the local site into a bulk dataset, run after run (in-process; the
holder of a dataset that gets killed is a process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.crawl_helpers import CrawlRun, crawl_in_process
from tests.services import ROOT, wait_until
from topics_crawler.site.content import default_site
from topics_crawler.site.server import SiteServer, SiteView

pytestmark = pytest.mark.integration

TAGS = "tags=distributed-training,machine-learning"


def crawl_into(site: SiteServer | SiteView, dataset: Path, run_dir: Path) -> CrawlRun:
    run = crawl_in_process(site.base_url, run_dir, TAGS, settings={"DATASET_DIR": str(dataset)})
    assert run.returncode == 0, run.log[-3000:]
    return run


def stories_in(dataset: Path) -> dict[str, dict[str, Any]]:
    rows = pq.read_table(dataset / "stories.parquet").to_pylist()
    assert len(rows) == len({row["story_id"] for row in rows}), "duplicate stories"
    return {row["story_id"]: row for row in rows}


def test_incremental_crawls_emit_only_what_changed(tmp_path: Path) -> None:
    content = default_site()
    dataset = tmp_path / "dataset"
    with SiteServer(content) as site:
        first = crawl_into(site, dataset, tmp_path / "run1")
        stories = stories_in(dataset)
        assert len(stories) == len(content.stories)
        assert first.stats["item_scraped_count/story"] == len(content.stories)

        second = crawl_into(site, dataset, tmp_path / "run2")
        assert second.stats.get("item_scraped_count/story", 0) == 0
        assert second.stats["dedupe/unchanged/story"] >= len(content.stories)
        assert stories_in(dataset) == stories

        changed_id = sorted(content.stories)[0]
        content.stories[changed_id].claps += 1000
        third = crawl_into(site, dataset, tmp_path / "run3")
        assert third.stats.get("item_scraped_count/story", 0) == 1
        assert [i["story_id"] for i in third.of_type("story")] == [changed_id]
        after = stories_in(dataset)
        assert after[changed_id]["claps"] == stories[changed_id]["claps"] + 1000
        assert {k: v for k, v in after.items() if k != changed_id} == {
            k: v for k, v in stories.items() if k != changed_id
        }

    manifest = json.loads((dataset / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest["runs"]) == 3
    assert manifest["counts"]["story"] == len(content.stories)


def test_emit_all_re_exports_unchanged_entities(site: SiteView, tmp_path: Path) -> None:
    content = site.content
    dataset = tmp_path / "dataset"
    crawl_into(site, dataset, tmp_path / "run1")
    again = crawl_in_process(
        site.base_url, tmp_path / "run2", TAGS,
        settings={"DATASET_DIR": str(dataset), "DEDUPE_EMIT_ALL": True},
    )  # fmt: skip
    assert again.returncode == 0, again.log[-3000:]
    assert again.stats["item_scraped_count/story"] == len(content.stories)
    assert len(stories_in(dataset)) == len(content.stories)


def test_unwritable_dataset_dir_fails_at_start_with_one_clear_line(
    site: SiteView, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    run = crawl_in_process(
        site.base_url, tmp_path / "run", TAGS, settings={"DATASET_DIR": str(blocker / "x")}
    )
    assert run.returncode != 0
    assert site.requests == [], "nothing may be fetched"
    assert "is not writable" in run.log


def test_a_second_crawl_into_a_held_dataset_is_refused_and_a_killed_holder_is_stale(
    tmp_path: Path,
) -> None:
    dataset = tmp_path / "dataset"
    with SiteServer(default_site(), latency=0.2) as site:
        settings = {"MEDIUM_BASE_URL": site.base_url, "DATASET_DIR": dataset}
        holder = start_crawl(settings | {"LOG_FILE": tmp_path / "holder.log"})
        try:
            wait_until(lambda: f'"pid": {holder.pid}' in lock_text(dataset), 60, "the lock")
            second = crawl_in_process(site.base_url, tmp_path / "second", TAGS, settings=settings)
        finally:
            holder.kill()
        holder.wait(10)
        assert second.returncode == 1
        logged, line = [row for row in second.log.splitlines() if row.strip()]
        assert logged.endswith(f"ERROR: {line}")  # LOG_FILE has the line stderr has
        assert f"{dataset} is being written by another crawl: pid {holder.pid} on " in line
        assert " since 20" in line
        assert "scrapy crawl topics" in line

        after = crawl_into(site, dataset, tmp_path / "after")  # the killed holder's lock is stale
    assert "the crawl that held it ended without releasing it" in after.log
    assert f"pid {holder.pid}" in after.log


def lock_text(dataset: Path) -> str:
    lock = dataset / ".lock"
    return lock.read_text("utf-8") if lock.exists() else ""


def start_crawl(settings: dict[str, Any]) -> subprocess.Popen[bytes]:
    line = [sys.executable, "-m", "scrapy", "crawl", "topics", "-a", TAGS]
    for name, value in settings.items():
        line += ["-s", f"{name}={value}"]
    env = {k: v for k, v in os.environ.items() if k != "MEDIUM_BASE_URL"}
    return subprocess.Popen(line, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
