"""Tag membership as data (no network): the rows each listing gives
(:mod:`topics_crawler.spiders._memberships`), how sightings of one row merge (the one rule:
earliest ``first_seen``, latest ``last_seen``), validation, the dataset's ``tag_stories``
table across commits, and a per-type feed of ``tag_story`` items."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from scrapy.utils.test import get_crawler

from tests.test_dataset import SyntheticSpider, crawl, jsonl, rows
from topics_crawler.items import Story, TagPage, TagStory, entity_keys, item_to_dict
from topics_crawler.items.merge import merge_records
from topics_crawler.pages import PageResult
from topics_crawler.pipelines.validate import validate_record
from topics_crawler.spiders._memberships import listed_stories, section_stories
from topics_crawler.spiders._related import TAG_DEPTH_META, section_source

A, B, C = "aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"
NOON, EVENING = "2026-11-30T12:00:00Z", "2026-11-30T18:00:00Z"


def sighting(story_id: str = A, rank: int = 1, seen: str = NOON, **values: Any) -> TagStory:
    source = values.pop("source", "history")
    return TagStory(
        membership_id=f"ai>{source}>{story_id}", tag="ai", story_id=story_id, source=source,
        rank=rank, first_seen=seen, last_seen=seen, **values,
    )  # fmt: skip


def test_a_tag_page_lists_each_story_once_in_its_first_section_at_its_rank() -> None:
    page = TagPage(
        tag="ai",
        url="https://medium.com/tag/ai",
        data_source="state",
        scraped_at=NOON,
        sections={"popular_this_week": [B, A], "latest_stories": [C, A]},
    )
    listed = section_stories(page)
    assert [(r.story_id, r.section, r.rank) for r in listed] == [
        (B, "popular_this_week", 1),
        (A, "popular_this_week", 2),
        (C, "latest_stories", 1),
    ]
    first = listed[0]
    assert (first.membership_id, first.tag, first.source) == (f"ai>section>{B}", "ai", "section")
    day = "2026-11-30T00:00:00Z"  # kept to the day: same-day re-crawls change nothing
    assert (first.first_seen, first.last_seen, first.url) == (day, day, page.url)
    assert first.data_source == "state"
    assert validate_record("tag_story", item_to_dict(first)) == []
    assert section_stories(TagPage(sections={"x": [A]})) == []  # no tag: no row


def test_a_tag_the_walk_reached_from_another_lists_as_related() -> None:
    assert section_source({}) == "section"
    assert section_source({TAG_DEPTH_META: 0}) == "section"
    assert section_source({TAG_DEPTH_META: 2}) == "related"
    page = TagPage(tag="gpu", sections={"latest_stories": [A]}, scraped_at=NOON)
    (row,) = section_stories(page, section_source({TAG_DEPTH_META: 1}))
    assert (row.membership_id, row.source, row.section) == (
        f"gpu>related>{A}",
        "related",
        "latest_stories",
    )


def test_a_paged_listing_ranks_after_its_earlier_pages() -> None:
    result = PageResult(kind="json", url="https://medium.com/_/graphql")
    result.items = [
        Story(story_id=B, scraped_at=EVENING, data_source="graphql"),
        Story(story_id=A, scraped_at=EVENING, data_source="graphql"),
        Story(story_id=B, scraped_at=EVENING, data_source="graphql"),  # once per page
    ]
    listed = listed_stories("ai", "history", result, 41)
    assert [(r.story_id, r.rank) for r in listed] == [(B, 41), (A, 42)]
    assert {(r.source, r.section, r.first_seen, r.data_source) for r in listed} == {
        ("history", None, EVENING[:10] + "T00:00:00Z", "graphql")
    }
    assert all(validate_record("tag_story", item_to_dict(r)) == [] for r in listed)


def test_one_row_per_tag_story_and_source() -> None:
    keys = {entity_keys("tag_story", item_to_dict(row))[0] for row in (
        sighting(A), sighting(A, rank=9, seen=EVENING), sighting(A, source="feed"), sighting(B)
    )}  # fmt: skip
    assert keys == {
        f"tag_story:ai>history>{A}",
        f"tag_story:ai>feed>{A}",
        f"tag_story:ai>history>{B}",
    }


def test_sightings_merge_to_the_earliest_first_and_latest_last_seen() -> None:
    early = item_to_dict(sighting(rank=5, seen=NOON))
    late = item_to_dict(sighting(rank=2, seen=EVENING))
    for earlier, later in ((early, late), (late, early)):
        merged = merge_records("tag_story", earlier, later)
        assert (merged["first_seen"], merged["last_seen"]) == (NOON, EVENING)
        assert merged["rank"] == later["rank"], "the later arrival's rank: as last seen"
        assert "scraped_at" not in merged


def test_scraped_at_is_still_the_later_of_two_story_records() -> None:
    merged = merge_records(
        "story",
        {"story_id": A, "title": "Full", "claps": 5, "scraped_at": EVENING},
        {"story_id": A, "scraped_at": NOON},
    )
    assert (merged["title"], merged["scraped_at"]) == ("Full", EVENING)


def test_a_listing_source_of_its_own_is_rejected() -> None:
    record = item_to_dict(sighting())
    assert validate_record("tag_story", {**record, "source": "sidebar"}) == ["source:bad_listing"]
    assert validate_record("tag_story", {**record, "rank": -1}) == ["rank:negative"]
    missing = {**record, "first_seen": None}
    assert validate_record("tag_story", missing) == ["first_seen:missing"]


def test_the_dataset_keeps_one_row_per_membership_across_commits(tmp_path: Path) -> None:
    dataset = tmp_path / "data"
    crawl(dataset, [sighting(A, rank=3, seen=NOON), sighting(B, rank=4, seen=NOON)])
    crawl(dataset, [sighting(A, rank=1, seen=EVENING)])
    crawl(dataset, [sighting(A, rank=7, seen="2026-11-29T09:00:00Z")])  # an older sighting
    table = rows(dataset / "tag_stories.parquet")
    by_story = {row["story_id"]: row for row in table}
    assert len(table) == 2
    a = by_story[A]
    assert (a["first_seen"], a["last_seen"], a["rank"]) == ("2026-11-29T09:00:00Z", EVENING, 7)
    assert by_story[B]["first_seen"] == by_story[B]["last_seen"] == NOON
    schema = pq.read_schema(next((dataset / "tag_stories.parquet").glob("part-*.parquet")))
    assert str(schema.field("first_seen").type) == "timestamp[ms, tz=UTC]"
    assert str(schema.field("rank").type) == "int64"
    twin = jsonl(dataset / "tag_stories.jsonl")
    assert [r["story_id"] for r in twin] == [A, B, A, A], "each commit appends what changed"
    manifest = json.loads((dataset / "manifest.json").read_text("utf-8"))
    assert manifest["counts"]["tag_story"] == 2
    assert manifest["files"]["tag_story"] == {
        "parquet": "tag_stories.parquet",
        "jsonl": "tag_stories.jsonl",
    }


def test_a_per_type_feed_of_tag_story_items_is_typed(tmp_path: Path) -> None:
    out = tmp_path / "tag_stories.parquet"
    settings = {
        "FEEDS": {
            str(out): {"format": "parquet", "item_classes": ["topics_crawler.items.TagStory"]}
        },
        "FEED_EXPORTERS": {"parquet": "topics_crawler.output.exporters.ParquetItemExporter"},
        "DOWNLOAD_HANDLERS": {"http": None, "https": None},
        "LOG_LEVEL": "WARNING",
    }
    crawler = get_crawler(SyntheticSpider, settings)
    items = [Story(story_id=A, title="One", scraped_at=NOON), sighting(A), sighting(B, rank=2)]
    asyncio.run(crawler.crawl_async(items=items))
    table = pq.read_table(out)
    assert table.column("item_type").to_pylist() == ["tag_story", "tag_story"]
    assert table.column("story_id").to_pylist() == [A, B]
    assert str(table.schema.field("last_seen").type) == "timestamp[ms, tz=UTC]"
