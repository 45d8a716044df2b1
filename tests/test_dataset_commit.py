"""Commits priced by the run, history kept, and commits that fail cleanly (issues 21, 23):
in-process crawls of the synthetic spider into a DATASET_DIR."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from scrapy.http import Response
from scrapy.utils.test import get_crawler

from tests.test_dataset import SETTINGS, SyntheticSpider, crawl, current, jsonl, rows
from topics_crawler.dataset import commit as commit_module
from topics_crawler.dataset.manifest import read_manifest
from topics_crawler.errors import WRITE_FAILED_STAT
from topics_crawler.items import Author, Item, Story
from topics_crawler.signals import page_failed

DEDUPE = {"ITEM_PIPELINES": {"topics_crawler.pipelines.dedupe.DedupePipeline": 300}}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return tmp_path / "data"


def story(index: int, claps: int = 1, **fields: Any) -> Story:
    return Story(story_id=f"{index:012x}", title=f"Story {index}", claps=claps, **fields)


def files_of(directory: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``directory``: (inode, mtime in ns), to see what a commit touched."""
    return {
        str(path.relative_to(directory)): (path.stat().st_ino, path.stat().st_mtime_ns)
        for path in sorted(directory.rglob("*"))
        if path.is_file() and not path.name.startswith(".lock")
    }


def test_a_commit_rewrites_only_the_part_holding_a_changed_row(
    dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("topics_crawler.dataset.parts.PART_MAX_ROWS", 4)
    crawl(dataset, [story(i) for i in range(12)])  # three full parts of 4 rows
    parts = sorted((dataset / "stories.parquet").glob("*.parquet"))
    assert [pq.ParquetFile(p).metadata.num_rows for p in parts] == [4, 4, 4]
    before = files_of(dataset / "stories.parquet")
    crawl(dataset, [story(5, claps=50), story(100)])  # one change in the second part, one new
    after = files_of(dataset / "stories.parquet")
    first, second, third = (p.name for p in parts)
    assert after[first] == before[first], "untouched"
    assert after[third] == before[third], "untouched"
    assert after[second] != before[second], "the part that held story 5 is rewritten"
    assert pq.ParquetFile(dataset / "stories.parquet" / second).metadata.num_rows == 3
    claps = {r["story_id"]: r["claps"] for r in rows(dataset / "stories.parquet")}
    assert len(claps) == 13
    assert claps[f"{5:012x}"] == 50
    lines = jsonl(dataset / "stories.jsonl")
    assert len(lines) == 14, "the twin is appended: the changed and the new story"
    assert all(None not in line.values() for line in lines), "no explicit nulls"
    assert {r["story_id"]: r["claps"] for r in current(dataset / "stories.jsonl")} == claps


def test_a_run_that_finds_nothing_writes_nothing(dataset: Path) -> None:
    crawl(dataset, [])
    assert not (dataset / "manifest.json").exists(), "no dataset made of nothing"
    assert not (dataset / "stories.parquet").exists()
    crawl(dataset, [story(1)])
    before = files_of(dataset)
    stats = crawl(dataset, [])
    assert files_of(dataset) == before, "a good dataset is never replaced by an empty one"
    assert not stats.get(WRITE_FAILED_STAT)
    assert read_manifest(dataset)["counts"]["story"] == 1  # type: ignore[index]


def test_snapshots_accumulate_every_sighting_even_unchanged(dataset: Path) -> None:
    settings = {**DEDUPE}
    crawl_with(dataset, [story(1, claps=10), Author(username="ada", followers=3)], settings)
    crawl_with(dataset, [story(1, claps=10), Author(username="ada", followers=3)], settings)
    crawl_with(dataset, [story(1, claps=25)], settings)
    stats = rows(dataset / "story_stats.parquet")
    assert [(r["story_id"], r["claps"], r["gone"]) for r in stats] == [
        (f"{1:012x}", 10, False),
        (f"{1:012x}", 10, False),
        (f"{1:012x}", 25, False),
    ]
    assert len(rows(dataset / "author_stats.parquet")) == 2
    assert len(jsonl(dataset / "stories.jsonl")) == 2, "the unchanged run appended nothing"
    (row,) = rows(dataset / "stories.parquet")
    assert row["claps"] == 25


class GoneSpider(SyntheticSpider):
    """Yields nothing; reports one story page as gone (404)."""

    def parse(self, response: Response) -> Iterator[Item]:
        assert self.crawler.stats is not None
        self.crawler.signals.send_catch_log(
            page_failed, url=f"https://medium.com/p/{1:012x}", kind="story", status=404,
            reason="http_404", attempts=1, spider=self,
        )  # fmt: skip
        yield from ()


def crawl_with(
    dataset: Path, items: list[Item], settings: dict[str, Any], spider: type = SyntheticSpider
) -> dict[str, Any]:
    crawler = get_crawler(spider, {**SETTINGS, **settings, "DATASET_DIR": str(dataset)})
    asyncio.run(crawler.crawl_async(items=items))
    assert crawler.stats is not None
    return crawler.stats.get_stats()


def test_a_story_that_disappears_is_marked_gone_and_kept(dataset: Path) -> None:
    crawl(dataset, [story(1, claps=10, scraped_at="2026-01-01T00:00:00Z")])
    crawl_with(dataset, [], {}, GoneSpider)
    (kept,) = rows(dataset / "stories.parquet")
    assert kept["claps"] == 10, "never deleted"
    seen, gone = rows(dataset / "story_stats.parquet")
    assert (seen["scraped_at"], seen["gone"]) == ("2026-01-01T00:00:00Z", False)
    assert gone["gone"] is True
    assert gone["claps"] is None
    assert gone["scraped_at"] > seen["scraped_at"], "when it was found gone; last seen above"


def test_a_row_no_column_can_hold_is_rejected_and_the_rest_is_written(dataset: Path) -> None:
    crawl(dataset, [story(1)])
    stats = crawl(dataset, [story(2, claps=10**30), story(3), story(1, claps=10**30)])
    assert not stats.get(WRITE_FAILED_STAT)
    assert stats["dataset/rejected/story"] == 2
    claps = {r["story_id"]: r["claps"] for r in rows(dataset / "stories.parquet")}
    assert claps == {f"{1:012x}": 1, f"{3:012x}": 1}, "the stored row of story 1 stays"
    rejects = jsonl(dataset / "rejects.jsonl")
    assert len(rejects) == 2
    assert all("dataset:" in r["reasons"][0] for r in rejects)
    assert crawl(dataset, [story(4)])["dataset/rows/story"] == 3, "the next run is not poisoned"


def test_a_commit_that_fails_leaves_the_dataset_and_fails_again_until_it_commits(
    dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crawl(dataset, [story(1)])
    before = files_of(dataset)

    def broken(manifest: dict[str, Any]) -> str:
        raise RuntimeError("no card today")

    monkeypatch.setattr(commit_module, "render_card", broken)
    failed = crawl(dataset, [story(2)])
    assert failed[f"{WRITE_FAILED_STAT}/dataset"] == 1, "the crawl exits non-zero"
    assert {k: v for k, v in files_of(dataset).items() if not k.startswith(".")} == {
        k: v for k, v in before.items() if not k.startswith(".")
    }, "the dataset is as it was"
    again = crawl(dataset, [])  # the failed run's rows are committed with this one: fails again
    assert again[f"{WRITE_FAILED_STAT}/dataset"] == 1, "never a silent success"
    monkeypatch.undo()
    done = crawl(dataset, [])
    assert not done.get(WRITE_FAILED_STAT)
    assert sorted(r["story_id"] for r in rows(dataset / "stories.parquet")) == [
        f"{1:012x}",
        f"{2:012x}",
    ]
    assert not (dataset / ".staging").exists()


NO_PANDAS = """
import sys
from pathlib import Path
from tests.test_dataset import crawl
from topics_crawler.items import Story
sys.modules["pandas"] = None  # an import of pandas now raises
crawl(Path(sys.argv[1]), [Story(story_id="aaaaaaaaaaaa", claps=1)])
crawl(Path(sys.argv[1]), [Story(story_id="aaaaaaaaaaaa", claps=2), Story(story_id="bbbbbbbbbbbb")])
print("ok")
"""


def test_a_commit_never_imports_pandas(dataset: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", NO_PANDAS, str(dataset)],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok"
    assert {r["story_id"]: r["claps"] for r in rows(dataset / "stories.parquet")} == {
        "aaaaaaaaaaaa": 2,
        "bbbbbbbbbbbb": None,
    }
    assert json.loads((dataset / "runs.jsonl").read_text().splitlines()[-1])["changed"]["story"]
