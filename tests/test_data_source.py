"""Provenance per row: ``data_source`` names the layers that filled it, through every parser,
merge and export."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.crawl_helpers import crawl_in_process
from topics_crawler.items import ITEM_CLASSES, Author, Story, fill_missing, item_to_dict
from topics_crawler.items.layers import SOURCES, join_sources, pick_named
from topics_crawler.items.merge import content_hash, merge_items, merge_records
from topics_crawler.pages import parse_page
from topics_crawler.site.content import default_site
from topics_crawler.site.server import SiteServer
from topics_crawler.site.tag_page import tag_page

SOURCE_RE = re.compile(r"^[a-z]+(\+[a-z]+)*$")


def test_pick_named_names_the_layers_that_gave_a_value() -> None:
    merged = pick_named(
        ("state", {"title": "T", "claps": None}),
        ("jsonld", {"title": "other", "claps": 3, "claps_raw": None}),
        ("meta", {"title": "unused"}),
        ("dom", {"claps_raw": "3"}),  # a raw text alone fills nothing
    )
    assert merged == {"title": "T", "claps": 3, "data_source": "state+jsonld"}
    assert pick_named(("state", {}), ("dom", {}))["data_source"] is None


def test_sources_are_written_once_each_in_one_order() -> None:
    assert join_sources("card", "jsonld+state", None, "state") == "state+jsonld+card"
    assert join_sources(None, "") is None
    assert all(SOURCE_RE.match(name) for name in SOURCES)


def test_a_merge_names_both_records_only_when_both_gave_values() -> None:
    card = Story(story_id="0123456789ab", title="T", claps=4, image_url="https://i/x.png",
                 data_source="card", scraped_at="2026-01-01T00:00:00Z")  # fmt: skip
    page = Story(story_id="0123456789ab", title="T", claps=5, text="Body.", data_source="state",
                 scraped_at="2026-01-02T00:00:00Z")  # fmt: skip
    merged = merge_items(card, page)
    assert (merged.data_source, merged.image_url) == ("state+card", "https://i/x.png")
    covered = Story(story_id="0123456789ab", title="T", claps=5, text="Body.",
                    image_url="https://i/y.png", data_source="state+jsonld")  # fmt: skip
    assert merge_items(card, covered).data_source == "state+jsonld"  # nothing from the card
    record = merge_records("story", item_to_dict(covered), item_to_dict(card))
    assert record["data_source"] == "state+jsonld"


def test_filling_gaps_within_a_page_names_both_parts() -> None:
    state = Author(username="ada", name="Ada", data_source="state")
    page = Author(username="ada", bio="Writes.", data_source="meta+dom")
    assert fill_missing(state, page).data_source == "state+meta+dom"
    assert fill_missing(state, Author(username="ada", data_source="dom")).data_source == "state"


def test_provenance_is_not_content() -> None:
    record = item_to_dict(Story(story_id="0123456789ab", title="T", data_source="card"))
    assert content_hash(record) == content_hash({**record, "data_source": "state+jsonld"})


def test_every_item_type_declares_data_source() -> None:
    for cls in ITEM_CLASSES.values():
        assert "data_source" in cls.__dataclass_fields__, cls


def test_tag_page_cards_are_card_rows() -> None:
    content = default_site()
    tag = content.tags["machine-learning"]
    result = parse_page(tag_page(content, tag).encode(), tag.url, kind="tag")
    stories = list(result.items_of("story"))
    assert stories
    assert {story.data_source for story in stories} <= {"card", "state+card"}
    assert any("card" in (story.data_source or "") for story in stories)
    page = next(iter(result.items_of("tag_page")))
    assert page.data_source is not None
    assert "dom" in page.data_source.split("+")


@pytest.mark.integration
def test_every_row_of_a_crawl_names_its_layers_in_the_feed_and_the_dataset(
    tmp_path: Path,
) -> None:
    with SiteServer(default_site()) as site:
        run = crawl_in_process(
            site.base_url, tmp_path, "tags=machine-learning",
            settings={"DATASET_DIR": tmp_path / "dataset"},
        )  # fmt: skip
    assert run.returncode == 0, run.log[-3000:]
    assert run.items
    assert all(SOURCE_RE.match(item["data_source"] or "") for item in run.items), [
        (i["item_type"], i["data_source"]) for i in run.items if not i["data_source"]
    ]
    stories = {s["story_id"]: s["data_source"] for s in run.of_type("story")}
    assert set(stories.values()) == {"state+jsonld"}  # story pages: state, then JSON-LD
    table = pq.read_table(tmp_path / "dataset" / "stories.parquet")
    rows = table.select(["story_id", "data_source"]).to_pylist()
    assert {row["story_id"]: row["data_source"] for row in rows} == stories
    lines = (tmp_path / "dataset" / "stories.jsonl").read_text().splitlines()
    assert {json.loads(line)["data_source"] for line in lines} == {"state+jsonld"}
