"""One feed per item type (``%(item_type)s``), and CSV or Parquet feeds of mixed types refused."""

from __future__ import annotations

import csv
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from scrapy.settings import SETTINGS_PRIORITIES, Settings

from tests.in_process import scrapy_crawl
from topics_crawler.items import ITEM_CLASSES
from topics_crawler.output.per_type import (
    PerTypeFeeds,
    expand_feeds,
    feed_exporters,
    mixed_feed_error,
    per_type_form,
)
from topics_crawler.site.server import SiteView

STORY = "topics_crawler.items.stories.Story"
AUTHOR = "topics_crawler.items.accounts.Author"


def project_settings(feeds: dict[str, dict[str, object]]) -> Settings:
    settings = Settings()
    settings.setmodule("topics_crawler.settings")
    settings.set("FEEDS", feeds, priority="cmdline")
    return settings


def expand(feeds: dict[str, dict[str, object]]) -> dict[str, dict[str, object]]:
    return expand_feeds(feeds, feed_exporters(project_settings({})))


def test_a_template_becomes_one_feed_per_item_type() -> None:
    feeds = expand({"out/%(item_type)s.csv": {"format": "csv", "overwrite": True}})
    assert list(feeds) == [f"out/{item_type}.csv" for item_type in ITEM_CLASSES]
    assert feeds["out/story.csv"] == {"format": "csv", "overwrite": True, "item_classes": [STORY]}
    assert expand(feeds) == feeds, "applying it twice changes nothing"


def test_a_template_keeps_its_item_classes_and_other_placeholders() -> None:
    feeds = expand(
        {"s3://b/%(name)s/%(item_type)s-%(time)s.jsonl": {"format": "jsonlines",
                                                          "item_classes": [STORY, AUTHOR]}}
    )  # fmt: skip
    assert list(feeds) == [
        "s3://b/%(name)s/story-%(time)s.jsonl",
        "s3://b/%(name)s/author-%(time)s.jsonl",
    ]


def test_a_parquet_feed_of_one_type_gets_that_types_schema() -> None:
    feeds = expand({"stories.parquet": {"format": "parquet", "item_classes": [STORY]}})
    assert feeds["stories.parquet"]["item_export_kwargs"] == {"item_class": STORY}
    per_type = expand({"%(item_type)s.parquet": {"format": "parquet"}})
    assert per_type["author.parquet"]["item_export_kwargs"] == {"item_class": AUTHOR}
    assert expand({"all.jsonl": {"format": "jsonlines"}}) == {"all.jsonl": {"format": "jsonlines"}}


@pytest.mark.parametrize(
    ("feeds", "refused"),
    [
        ({"stories.csv": {"format": "csv"}}, True),
        ({"out/stories.parquet": {"format": "parquet", "overwrite": True}}, True),
        ({"two.csv": {"format": "csv", "item_classes": [STORY, AUTHOR]}}, True),
        ({"stories.csv": {"format": "csv", "item_classes": [STORY]}}, False),
        ({"out/%(item_type)s.csv": {"format": "csv"}}, False),
        ({"chosen.csv": {"format": "csv", "fields": ["item_type", "url"]}}, False),
        ({"all.jsonl": {"format": "jsonlines"}, "all.json": {"format": "json"}}, False),
    ],
)
def test_only_a_table_of_mixed_types_is_refused(
    feeds: dict[str, dict[str, object]], refused: bool
) -> None:
    assert (mixed_feed_error(project_settings(feeds)) is not None) == refused


def test_the_refusal_names_the_per_type_form() -> None:
    error = mixed_feed_error(project_settings({"out/stories.csv": {"format": "csv"}}))
    assert error == (
        "out/stories.csv would hold every item type (tag pages, stories, authors…) in one csv "
        "table, whose columns fit one type: write one file per type with "
        "-o 'out/%(item_type)s.csv:csv' (or limit the feed to one type with item_classes in FEEDS)"
    )
    assert per_type_form("s.parquet", {"format": "parquet", "overwrite": True}) == (
        "-O '%(item_type)s.parquet:parquet'"
    )


def test_the_addon_expands_the_feeds_of_a_crawl_started_without_the_command() -> None:
    settings = project_settings({"%(item_type)s.csv": {"format": "csv"}})
    PerTypeFeeds().update_settings(settings)
    assert "story.csv" in settings.getdict("FEEDS")
    assert settings.getpriority("FEEDS") == SETTINGS_PRIORITIES["cmdline"]  # kept


@pytest.mark.parametrize(
    "output",
    [("-o", "stories.csv:csv"), ("-O", "out/stories.parquet:parquet")],
)
def test_scrapy_crawl_refuses_a_mixed_table_with_one_line(output: tuple[str, str]) -> None:
    process = scrapy_crawl("topics", "-a", "tags=machine-learning", *output, start=False)
    assert process.returncode == 2
    errors = process.stderr.splitlines()
    assert len(errors) == 1, process.stderr
    assert errors[0].startswith("scrapy crawl topics: error: ")
    assert "%(item_type)s" in errors[0]


@pytest.mark.integration
def test_per_type_csv_and_parquet_feeds_hold_each_types_columns(
    site: SiteView, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    process = scrapy_crawl(
        "topics", "-a", "tags=machine-learning", "-a", "max_stories=3",
        "-s", f"MEDIUM_BASE_URL={site.base_url}", "-s", "RENDER_MODE=never",
        "-O", f"{out}/%(item_type)s.csv:csv", "-O", f"{out}/%(item_type)s.parquet:parquet",
    )  # fmt: skip
    assert process.returncode == 0, process.stderr[-3000:]
    written = {path.name for path in out.iterdir() if path.suffix in (".csv", ".parquet")}
    types = ("story", "author", "publication", "tag_page", "tag_edge", "tag_story")
    assert written == {f"{t}{suffix}" for t in types for suffix in (".csv", ".parquet")}
    with (out / "story.csv").open(newline="", encoding="utf-8") as file:
        stories = list(csv.DictReader(file))
    assert len(stories) == 3
    for row in stories:
        assert row["item_type"] == "story"
        assert all(row[name] for name in ("story_id", "title", "author_username", "text")), row
    table = pq.read_table(out / "story.parquet")
    assert table.num_rows == 3
    assert "username" not in table.column_names, "the story schema, not every type's columns"
    assert set(table.column("item_type").to_pylist()) == {"story"}
    authors = pq.read_table(out / "author.parquet")
    assert set(authors.column("item_type").to_pylist()) == {"author"}
    assert all(authors.column("username").to_pylist())
