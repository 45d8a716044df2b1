"""``-o out/%(item_type)s.parquet`` twice: the second run is refused up front with a line
suggesting -O."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from scrapy.settings import Settings

from tests.in_process import Completed, scrapy_crawl
from topics_crawler.commands.crawl import feed_append_error, local_feed_path
from topics_crawler.site.server import SiteView


def settings_with_feeds(feeds: dict[str, dict[str, object]]) -> Settings:
    settings = Settings()
    settings.setmodule("topics_crawler.settings")
    settings.set("FEEDS", feeds, priority="cmdline")
    return settings


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("out/s.parquet", Path("out/s.parquet")),
        ("file:///tmp/s.parquet", Path("/tmp/s.parquet")),
        ("s3://bucket/s.parquet", None),
        ("data/%(name)s-%(time)s.parquet", None),
    ],
)
def test_local_feed_path(uri: str, path: Path | None) -> None:
    assert local_feed_path(uri) == path


def test_only_an_appending_non_empty_parquet_feed_is_refused(tmp_path: Path) -> None:
    full, empty, jsonl = tmp_path / "full.parquet", tmp_path / "empty.parquet", tmp_path / "a.jsonl"
    full.write_bytes(b"PAR1...")
    empty.touch()
    jsonl.write_text("{}\n")
    assert feed_append_error(settings_with_feeds({str(empty): {"format": "parquet"}})) is None
    assert feed_append_error(settings_with_feeds({str(jsonl): {"format": "jsonlines"}})) is None
    assert feed_append_error(
        settings_with_feeds({str(full): {"format": "parquet", "overwrite": True}})
    ) is None  # fmt: skip
    error = feed_append_error(settings_with_feeds({str(full): {"format": "parquet"}}))
    assert error is not None
    assert f"use -O {full}:parquet" in error


def crawl(site: SiteView, *output: str) -> Completed:
    return scrapy_crawl(
        "topics", "-a", "tags=distributed-training", "-a", "max_stories=2", "-a", "follow=none",
        "-s", "RENDER_MODE=never", "-s", f"MEDIUM_BASE_URL={site.base_url}", *output,
        timeout=120,
    )  # fmt: skip


@pytest.mark.integration
def test_the_readme_parquet_feed_twice(site: SiteView, tmp_path: Path) -> None:
    template = f"{tmp_path}/%(item_type)s.parquet"
    target = tmp_path / "tag_page.parquet"  # follow=none: tag pages and their edges
    first = crawl(site, "-o", f"{template}:parquet")
    assert first.returncode == 0, first.stderr[-2000:]
    written = target.read_bytes()
    rows = pq.read_table(target).num_rows
    assert rows > 0

    again = crawl(site, "-o", f"{template}:parquet")
    assert again.returncode == 2
    assert again.stderr.strip().splitlines() == [
        f"scrapy crawl topics: error: {target} already holds data and a Parquet file cannot be "
        f"appended to: use -O '{template}:parquet' to replace it, or another file name"
    ]
    assert target.read_bytes() == written, "the refused run must not touch the file"

    for _ in range(2):
        replaced = crawl(site, "-O", f"{template}:parquet")
        assert replaced.returncode == 0, replaced.stderr[-2000:]
        assert pq.read_table(target).num_rows == rows
