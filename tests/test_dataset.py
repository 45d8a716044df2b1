"""The dataset add-on: real in-process crawls over ``data:`` URLs into a DATASET_DIR.

Each crawl runs a tiny spider (no network) with the add-on enabled, through Scrapy's
stage and commit (topics_crawler.dataset.stage / .commit), on asyncio without a Twisted reactor.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.utils.test import get_crawler

from topics_crawler.dataset import SCHEMA_VERSION, DatasetError, read_manifest
from topics_crawler.dataset.extension import DatasetExtension
from topics_crawler.items import Author, Item, Publication, Story, TagPage
from topics_crawler.output.exporters import records_of

SETTINGS: dict[str, Any] = {
    "ADDONS": {"topics_crawler.dataset.DatasetAddon": 500},
    "FEED_EXPORTERS": {"parquet": "topics_crawler.output.exporters.ParquetItemExporter"},
    # data: URLs only; keeps Scrapy's experimental HTTP handler (and its warning) unloaded.
    "DOWNLOAD_HANDLERS": {"http": None, "https": None},
    "PARQUET_ROW_GROUP_SIZE": 2,
    "DATASET_MANIFEST_SETTINGS": ["BOT_NAME", "PARQUET_ROW_GROUP_SIZE"],
    "LOG_LEVEL": "WARNING",
}


class SyntheticSpider(Spider):
    """Yields the items it is given from one ``data:`` page."""

    name = "synthetic"
    start_urls: ClassVar[list[str]] = ["data:,page"]

    def __init__(self, items: list[Item], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.items = items

    def parse(self, response: Response) -> Iterator[Item]:
        yield from self.items


def crawl(dataset_dir: Path, items: list[Item], **arguments: str) -> dict[str, Any]:
    """Run one crawl into ``dataset_dir``; returns the crawl's stats."""
    crawler = get_crawler(SyntheticSpider, {**SETTINGS, "DATASET_DIR": str(dataset_dir)})
    asyncio.run(crawler.crawl_async(items=items, **arguments))
    assert crawler.stats is not None
    return crawler.stats.get_stats()


def rows(path: Path) -> list[dict[str, Any]]:
    """Item records of a Parquet file (ISO timestamps, dict maps), as items hold them."""
    return records_of(pq.read_table(path))


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def current(path: Path, key: str = "story_id") -> list[dict[str, Any]]:
    """The twin's current records as the card says to read them: the last line per entity."""
    return list({record[key]: record for record in jsonl(path)}.values())


FIRST_RUN: list[Item] = [
    Story(story_id="aaaaaaaaaaaa", title="One", claps=1, tags=["ai"]),
    Story(story_id="bbbbbbbbbbbb", title="Two", claps=2, tags=["ai", "ml"]),
    Story(story_id="cccccccccccc", title="Three", claps=3),
    Author(author_id="a1", username="ada", followers=10),
    Author(username="bob"),
    Publication(slug="towards-ai", name="Towards AI"),
    TagPage(tag="ai", followers=5, sections={"latest_stories": ["aaaaaaaaaaaa"]}),
]
SECOND_RUN: list[Item] = [
    Story(story_id="bbbbbbbbbbbb", title="Two, edited", claps=20, tags=["ml"]),
    Story(story_id="dddddddddddd", title="Four", claps=4),
    Author(author_id="b2", username="bob", name="Bob"),
    Publication(publication_id="p1", slug="towards-ai", name="Towards AI!"),
    TagPage(tag="ml", followers=7),
]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return tmp_path / "data" / "ai"


def test_a_crawl_writes_every_file_of_the_dataset(dataset: Path) -> None:
    stats = crawl(dataset, FIRST_RUN, tags="ai,ml")
    names = {p.name for p in dataset.iterdir() if not p.name.startswith(".")}
    assert names == {
        "manifest.json",
        "README.md",
        "runs.jsonl",
        *(
            f"{stem}_stats.parquet"
            for stem in ("story", "author", "publication", "tag", "response")
        ),
        *(
            f"{stem}.{ext}"
            for stem in (
                "stories",
                "authors",
                "publications",
                "tag_pages",
                "responses",
                "tag_edges",
                "tag_stories",
            )
            for ext in ("parquet", "jsonl")
        ),
    }
    assert not (dataset / ".staging").exists()
    assert [r["title"] for r in rows(dataset / "stories.parquet")] == ["One", "Two", "Three"]
    assert [r["title"] for r in jsonl(dataset / "stories.jsonl")] == ["One", "Two", "Three"]
    assert rows(dataset / "tag_pages.parquet")[0]["sections"] == {
        "latest_stories": ["aaaaaaaaaaaa"]
    }
    assert jsonl(dataset / "tag_pages.jsonl")[0]["sections"] == {"latest_stories": ["aaaaaaaaaaaa"]}
    assert stats["dataset/rows/story"] == 3
    assert stats["dataset/added/author"] == 2


def test_the_manifest_describes_the_dataset_and_the_run(dataset: Path) -> None:
    crawl(dataset, FIRST_RUN, tags="ai,ml", max_pages="5")
    manifest = read_manifest(dataset)
    assert manifest is not None
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["project_version"] == "0.1.0"
    assert manifest["counts"] == {
        "story": 3,
        "author": 2,
        "publication": 1,
        "tag_page": 1,
        "response": 0,
        "tag_edge": 0,
        "tag_story": 0,
    }
    assert manifest["files"]["story"] == {
        "parquet": "stories.parquet",
        "jsonl": "stories.jsonl",
        "stats": "story_stats.parquet",
    }
    (part,) = manifest["tables"]["stories.parquet"]
    assert (part["name"], part["rows"]) == ("part-000001-000.parquet", 3)
    assert manifest["tags"] == ["ai", "ml"]
    run = manifest["last_run"]
    assert run["spider"] == "synthetic"
    assert run["arguments"] == {"tags": "ai,ml", "max_pages": "5"}
    assert run["tags"] == ["ai", "ml"]
    assert run["finish_reason"] == "finished"
    assert run["settings"] == {"BOT_NAME": "scrapybot", "PARQUET_ROW_GROUP_SIZE": 2}
    assert run["items"] == {"story": 3, "author": 2, "publication": 1, "tag_page": 1, "response": 0,
                            "tag_edge": 0, "tag_story": 0}  # fmt: skip
    assert run["started_at"] <= run["finished_at"]
    assert manifest["created_at"] == run["started_at"]
    assert manifest["runs"] == [run]


def test_a_second_crawl_merges_by_entity_key_and_the_later_row_wins(dataset: Path) -> None:
    crawl(dataset, FIRST_RUN, tags="ai")
    crawl(dataset, SECOND_RUN, tags="ml")
    expected = [
        ("aaaaaaaaaaaa", "One", 1),
        ("cccccccccccc", "Three", 3),
        ("bbbbbbbbbbbb", "Two, edited", 20),
        ("dddddddddddd", "Four", 4),
    ]
    stories = rows(dataset / "stories.parquet")
    assert [(s["story_id"], s["title"], s["claps"]) for s in stories] == expected
    twin = current(dataset / "stories.jsonl")
    assert sorted((s["story_id"], s["title"], s["claps"]) for s in twin) == sorted(expected)
    assert len(jsonl(dataset / "stories.jsonl")) == 5, "the second run appended 2 lines"
    authors = rows(dataset / "authors.parquet")
    assert [(a["author_id"], a["username"], a["name"]) for a in authors] == [
        ("a1", "ada", None),
        ("b2", "bob", "Bob"),
    ]
    publications = rows(dataset / "publications.parquet")
    assert [(p["publication_id"], p["name"]) for p in publications] == [("p1", "Towards AI!")]
    assert [t["tag"] for t in rows(dataset / "tag_pages.parquet")] == ["ai", "ml"]
    manifest = read_manifest(dataset)
    assert manifest is not None
    assert manifest["counts"] == {
        "story": 4,
        "author": 2,
        "publication": 1,
        "tag_page": 2,
        "response": 0,
        "tag_edge": 0,
        "tag_story": 0,
    }
    assert manifest["tags"] == ["ai", "ml"]
    assert [run["items"]["story"] for run in manifest["runs"]] == [3, 2]
    assert manifest["created_at"] == manifest["runs"][0]["started_at"]


def test_duplicates_within_one_crawl_keep_the_last(dataset: Path) -> None:
    crawl(
        dataset, [Story(story_id="aaaaaaaaaaaa", claps=1), Story(story_id="aaaaaaaaaaaa", claps=9)]
    )
    assert [s["claps"] for s in rows(dataset / "stories.parquet")] == [9]
    assert [s["claps"] for s in jsonl(dataset / "stories.jsonl")] == [9]


def test_a_later_card_only_row_fills_gaps_but_cannot_wipe_the_page_row(dataset: Path) -> None:
    page = Story(
        story_id="aaaaaaaaaaaa", title="One", text="Full body.\n\nSecond paragraph.",
        text_is_preview=False, claps=100, word_count=4, published_at="2025-01-02T03:04:05Z",
    )  # fmt: skip
    card = Story(
        story_id="aaaaaaaaaaaa", title="One", claps=90, claps_raw="90", image_url="https://x/i.png",
        published_at="2025-01-02T00:00:00Z", published_at_raw="Jan 2, 2025",
    )  # fmt: skip
    crawl(dataset, [page])
    crawl(dataset, [card])
    for stories in (rows(dataset / "stories.parquet"), current(dataset / "stories.jsonl")):
        (story,) = stories
        assert story["text"] == page.text
        assert story["word_count"] == 4
        assert (story["claps"], story.get("claps_raw")) == (100, None), "the page's exact count"
        assert (story["published_at"], story.get("published_at_raw")) == (page.published_at, None)
        assert story["image_url"] == "https://x/i.png", "the card fills what the page lacked"


def test_without_dataset_dir_nothing_is_configured(tmp_path: Path) -> None:
    crawler = get_crawler(SyntheticSpider, {k: v for k, v in SETTINGS.items()})
    assert crawler.settings.getdict("FEEDS") == {}
    assert crawler.settings.getdict("EXTENSIONS") == {}
    with pytest.raises(NotConfigured):
        DatasetExtension.from_crawler(crawler)


def test_an_unwritable_dataset_dir_stops_the_crawl_before_it_starts(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(
        DatasetError, match=r"DATASET_DIR .*a-file/ds is not writable: Not a directory"
    ):
        get_crawler(SyntheticSpider, {**SETTINGS, "DATASET_DIR": str(blocker / "ds")})


def test_a_dataset_of_another_schema_version_is_refused(dataset: Path) -> None:
    crawl(dataset, FIRST_RUN)
    manifest = json.loads((dataset / "manifest.json").read_text("utf-8"))
    for version, advice in ((0, "choose a new DATASET_DIR"), (SCHEMA_VERSION + 1, "upgrade")):
        manifest["schema_version"] = version
        (dataset / "manifest.json").write_text(json.dumps(manifest), "utf-8")
        with pytest.raises(DatasetError, match=f"schema version {version}; .*{advice}"):
            get_crawler(SyntheticSpider, {**SETTINGS, "DATASET_DIR": str(dataset)})


def test_data_files_without_a_manifest_are_refused(dataset: Path) -> None:
    dataset.mkdir(parents=True)
    (dataset / "stories.jsonl").write_text("{}\n", "utf-8")
    with pytest.raises(DatasetError, match=r"no manifest\.json: it was not written by topics"):
        get_crawler(SyntheticSpider, {**SETTINGS, "DATASET_DIR": str(dataset)})


SPIDER_SCRIPT = """
from scrapy import Spider

class Nothing(Spider):
    name = "nothing"
    start_urls = ["data:,"]

    def parse(self, response):
        return []
"""


@pytest.mark.integration
def test_scrapy_crawl_exits_non_zero_with_the_reason(tmp_path: Path) -> None:
    spider = tmp_path / "nothing.py"
    spider.write_text(SPIDER_SCRIPT, "utf-8")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    settings = [
        "-s",
        'ADDONS={"topics_crawler.dataset.DatasetAddon": 500}',
        "-s",
        f"DATASET_DIR={blocker / 'ds'}",
    ]
    result = subprocess.run(
        [sys.executable, "-m", "scrapy", "runspider", str(spider), *settings],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        check=False,
    )
    assert result.returncode != 0
    message = f"DATASET_DIR {blocker / 'ds'} is not writable: Not a directory"
    assert f"ERROR: Crawl not started: {message}" in result.stderr


def test_identity_matches_the_dedupe_pipeline_case_and_spaces_aside(dataset: Path) -> None:
    crawl(dataset, [Author(username="RisingSkylar", name="Skylar")])
    crawl(dataset, [Author(username="risingskylar ", followers=12)])
    (author,) = rows(dataset / "authors.parquet")
    assert (author["name"], author["followers"]) == ("Skylar", 12)
    (author,) = {
        line["username"].strip().lower(): line for line in jsonl(dataset / "authors.jsonl")
    }.values()
    assert (author["name"], author["followers"]) == ("Skylar", 12)


def test_columns_are_typed_timestamps_lists_structs_and_maps(dataset: Path) -> None:
    crawl(
        dataset,
        [
            Story(story_id="aaaaaaaaaaaa", published_at="2025-01-02T03:04:05Z", tags=["ai"]),
            TagPage(
                tag="ai",
                sections={"latest_stories": ["aaaaaaaaaaaa"]},
                subtopics=[{"name": "LLM", "description": None}],
                who_to_follow=[{"kind": "author", "id": "a1", "username": "ada", "name": "Ada"}],
            ),
        ],
    )
    (stories_part,) = (dataset / "stories.parquet").glob("*.parquet")
    stories = pq.read_schema(stories_part)
    assert str(stories.field("published_at").type) == "timestamp[ms, tz=UTC]"
    assert str(stories.field("scraped_at").type) == "timestamp[ms, tz=UTC]"
    assert str(stories.field("tags").type) == "list<element: string>"
    (tags_part,) = (dataset / "tag_pages.parquet").glob("*.parquet")
    tags = pq.read_schema(tags_part)
    assert str(tags.field("sections").type) == (
        "list<element: struct<section: string, story_ids: list<element: string>>>"
    )
    assert str(tags.field("subtopics").type) == (
        "list<element: struct<name: string, description: string, section: string>>"
    )
    assert "struct<kind: string, id: string, username: string" in str(
        tags.field("who_to_follow").type
    )
    (story,) = pq.read_table(stories_part).to_pylist()
    assert story["published_at"].isoformat() == "2025-01-02T03:04:05+00:00"
    (line,) = jsonl(dataset / "stories.jsonl")
    assert line["published_at"] == "2025-01-02T03:04:05Z", "JSONL keeps ISO text"
    (tag_line,) = jsonl(dataset / "tag_pages.jsonl")
    assert tag_line["who_to_follow"][0]["username"] == "ada"


def test_a_schema_1_dataset_is_upgraded_whole_by_the_next_commit(
    dataset: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dataset.mkdir(parents=True)
    v1_story = {"item_type": "story", "story_id": "eeeeeeeeeeee", "title": "Old"}
    v1_story["published_at"] = "2024-05-06T07:08:09Z"
    v1_tag = {"item_type": "tag_page", "tag": "old", "sections": '{"latest_stories": ["x"]}'}
    json_field = pa.field("sections", pa.string(), metadata={b"topics_crawler.encoding": b"json"})
    pq.write_table(pa.Table.from_pylist([v1_story]), dataset / "stories.parquet")
    pq.write_table(
        pa.Table.from_pylist(
            [v1_tag],
            schema=pa.schema([("item_type", pa.string()), ("tag", pa.string()), json_field]),
        ),
        dataset / "tag_pages.parquet",
    )
    (dataset / "stories.jsonl").write_text(json.dumps(v1_story) + "\n", "utf-8")
    (dataset / "tag_pages.jsonl").write_text(json.dumps(v1_tag) + "\n", "utf-8")
    manifest = {"schema_version": 1, "runs": [], "created_at": "2024-05-06T00:00:00Z"}
    (dataset / "manifest.json").write_text(json.dumps(manifest), "utf-8")

    with caplog.at_level("WARNING"):
        crawl(dataset, [Author(username="ada")])
    assert f"upgrading from schema version 1 to {SCHEMA_VERSION}" in caplog.text
    assert read_manifest(dataset)["schema_version"] == SCHEMA_VERSION
    schema = pq.read_schema(dataset / "stories.parquet" / "part-000000-000.parquet")
    assert str(schema.field("published_at").type) == "timestamp[ms, tz=UTC]"
    assert rows(dataset / "stories.parquet")[0]["published_at"] == "2024-05-06T07:08:09Z"
    assert rows(dataset / "tag_pages.parquet")[0]["sections"] == {"latest_stories": ["x"]}
    assert jsonl(dataset / "tag_pages.jsonl")[0]["sections"] == {"latest_stories": ["x"]}
    assert [a["username"] for a in rows(dataset / "authors.parquet")] == ["ada"]
