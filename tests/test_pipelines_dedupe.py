"""Dedupe pipeline: merge order, duplicates, cross-run state (SQLite), malformed items."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from topics_crawler.items import Author, Item, Story, item_to_dict
from topics_crawler.items.merge import extends, merge_records
from topics_crawler.pipelines.dedupe import DedupePipeline
from topics_crawler.pipelines.dedupe_state import (
    MemoryDedupeState,
    SqliteDedupeState,
    open_dedupe_state,
    state_path,
)

URL = "https://medium.com/@ev/why-7c8f847b58aa"


class _Spider(Spider):
    name = "dedupe-test"


def card(**values: Any) -> Story:
    """What a tag page listing knows of a story."""
    fields = {
        "story_id": "7c8f847b58aa",
        "url": URL,
        "title": "Why",
        "subtitle": "The short version of a long…",
        "claps": 1200,
        "claps_raw": "1.2K",
        "published_at": "2026-11-29T12:00:00Z",
        "published_at_raw": "1d ago",
        "tags": ["ai"],
        "scraped_at": "2026-11-30T12:00:00Z",
    }
    return Story(**{**fields, **values})


def page(**values: Any) -> Story:
    """What the story page itself knows."""
    fields = {
        "story_id": "7c8f847b58aa",
        "url": URL,
        "title": "Why",
        "subtitle": "The short version of a long story",
        "author_id": "393110b0b9e4",
        "claps": 1234,
        "published_at": "2026-11-29T08:30:00Z",
        "tags": ["ai", "startups"],
        "text": "First paragraph.\n\nSecond paragraph.",
        "text_is_preview": False,
        "scraped_at": "2026-11-30T12:05:00Z",
    }
    return Story(**{**fields, **values})


def make(**settings: Any) -> tuple[DedupePipeline, Crawler]:
    crawler = get_crawler(_Spider, settings)
    return DedupePipeline.from_crawler(crawler), crawler


def run(pipeline: DedupePipeline, items: list[Any]) -> list[Any]:
    """Items that pass, in order; the pipeline is closed afterwards."""
    passed = []
    for item in items:
        try:
            passed.append(pipeline.process_item(item))
        except DropItem:
            continue
    pipeline.close_spider()
    return passed


def stat(crawler: Crawler, key: str) -> Any:
    assert crawler.stats is not None
    return crawler.stats.get_value(key)


def content(item: Item) -> dict[str, Any]:
    data = item_to_dict(item)
    data.pop("scraped_at")
    return data


EXPECTED_MERGE = {
    "subtitle": "The short version of a long story",
    "author_id": "393110b0b9e4",
    "claps": 1234,
    "claps_raw": None,
    "published_at": "2026-11-29T08:30:00Z",
    "published_at_raw": None,
    "tags": ["ai", "startups"],
    "text_is_preview": False,
}


def test_card_then_page_passes_both_the_second_as_merged() -> None:
    pipeline, crawler = make()
    first, merged = run(pipeline, [card(), page()])
    assert first == card()
    for name, value in EXPECTED_MERGE.items():
        assert getattr(merged, name) == value, name
    assert merged.scraped_at == "2026-11-30T12:05:00Z"
    assert stat(crawler, "dedupe/new/story") == 1
    assert stat(crawler, "dedupe/merged/story") == 1


def test_page_then_card_drops_the_card_as_adding_nothing() -> None:
    pipeline, crawler = make()
    assert run(pipeline, [page(), card()]) == [page()]
    assert stat(crawler, "dedupe/duplicate/story") == 1


def test_merge_is_the_same_in_either_order() -> None:
    a, b = item_to_dict(card()), item_to_dict(page())
    forward, backward = merge_records("story", a, b), merge_records("story", b, a)
    assert forward == backward


def test_card_fills_what_the_page_lacks_and_passes() -> None:
    pipeline, _ = make()
    passed = run(pipeline, [page(image_url=None), card(image_url="https://miro.medium.com/1.png")])
    assert len(passed) == 2
    assert passed[1].image_url == "https://miro.medium.com/1.png"
    assert passed[1].claps == 1234, "the page's count still wins over the card's"


def test_full_text_beats_preview_even_when_shorter_record() -> None:
    preview = page(text="First paragraph.", text_is_preview=True, author_id=None, tags=[])
    full = card(text="First paragraph.\n\nSecond.", text_is_preview=False)
    merged = merge_records("story", item_to_dict(preview), item_to_dict(full))
    assert (merged["text"], merged["text_is_preview"]) == ("First paragraph.\n\nSecond.", False)


def test_longer_text_beats_its_own_prefix_only() -> None:
    assert extends("The short version of a long story", "The short version of a long…")
    assert not extends("Another text entirely, longer", "The short version")
    assert not extends("Same", "Same")


def test_same_item_twice_is_a_duplicate() -> None:
    pipeline, crawler = make()
    assert len(run(pipeline, [page(), page(scraped_at="2026-11-30T13:00:00Z")])) == 1
    assert stat(crawler, "dedupe/duplicate/story") == 1


def test_two_partial_authors_merge_by_username_and_id() -> None:
    byline = Author(username="ev", name="Ev Williams", scraped_at="2026-11-30T12:00:00Z")
    profile = Author(
        author_id="393110b0b9e4",
        username="ev",
        url="https://medium.com/@ev",
        followers=12000,
        followers_raw="12K",
        scraped_at="2026-11-30T12:01:00Z",
    )
    by_id = Author(author_id="393110b0b9e4", bio="Co-founder", scraped_at="2026-11-30T12:02:00Z")
    pipeline, crawler = make()
    passed = run(pipeline, [byline, profile, by_id])
    assert len(passed) == 3
    last = passed[-1]
    assert (last.author_id, last.username, last.name) == ("393110b0b9e4", "ev", "Ev Williams")
    assert (last.followers, last.followers_raw, last.bio) == (12000, "12K", "Co-founder")
    assert stat(crawler, "dedupe/merged/author") == 2
    assert stat(crawler, "dedupe/entities") == 1


def test_an_arrival_joining_two_entities_passes_everything_they_knew() -> None:
    """An author seen by id, then by username, then with both: one entity, and the record
    that passes last holds what each sighting gave (a consumer keeps the last per key)."""
    by_id = Author(author_id="393110b0b9e4", bio="Co-founder", scraped_at="2026-11-30T12:00:00Z")
    byline = Author(username="ev", name="Ev Williams", scraped_at="2026-11-30T12:01:00Z")
    both = Author(author_id="393110b0b9e4", username="ev", scraped_at="2026-11-30T12:02:00Z")
    pipeline, crawler = make()
    passed = run(pipeline, [by_id, byline, both])
    assert len(passed) == 3
    last = passed[-1]
    assert (last.author_id, last.username) == ("393110b0b9e4", "ev")
    assert (last.name, last.bio) == ("Ev Williams", "Co-founder")
    assert stat(crawler, "dedupe/linked/author") == 1
    assert stat(crawler, "dedupe/entities") == 1
    again = run(make()[0], [by_id, byline, both, byline, by_id])
    assert len(again) == 3, "later sightings of either part add nothing"


def test_dict_items_come_out_as_dataclasses() -> None:
    pipeline, _ = make()
    assert run(pipeline, [item_to_dict(page())]) == [page()]


@pytest.mark.parametrize(
    "item",
    ["text", None, {"title": "no type"}, {"item_type": "story"}, {"item_type": 3, "story_id": 1}],
)
def test_items_without_a_key_pass_untouched(item: Any) -> None:
    pipeline, _ = make()
    assert pipeline.process_item(item) is item
    pipeline.close_spider()


def test_malformed_values_never_raise() -> None:
    pipeline, _ = make()
    odd = {"item_type": "story", "story_id": "7c8f847b58aa", "claps": object(), "tags": "x"}
    assert pipeline.process_item(odd) is not None
    with pytest.raises(DropItem):
        pipeline.process_item(dict(odd))
    pipeline.process_item({**odd, "text": {"not": "text"}, "title": 5})
    pipeline.close_spider()


def stories(count: int) -> list[Story]:
    return [
        page(story_id=f"{n:012x}", url=f"https://medium.com/p/{n:012x}", claps=n)
        for n in range(count)
    ]


def test_second_run_with_the_same_items_passes_nothing(tmp_path: Path) -> None:
    state = tmp_path / "dedupe.sqlite"
    items = [card(), page(), *stories(5)]
    assert len(run(make(DEDUPE_STATE=str(state))[0], items)) == 7
    pipeline, crawler = make(DEDUPE_STATE=str(state))
    assert run(pipeline, items) == []
    assert stat(crawler, "dedupe/unchanged/story") == 7


def test_second_run_passes_exactly_the_changed_story(tmp_path: Path) -> None:
    state = tmp_path / "dedupe.sqlite"
    items = stories(5)
    run(make(DEDUPE_STATE=str(state))[0], items)
    items[3] = replace(items[3], claps=99999)
    pipeline, crawler = make(DEDUPE_STATE=str(state))
    assert run(pipeline, items) == [items[3]]
    assert stat(crawler, "dedupe/unchanged/story") == 4


def test_changed_page_after_unchanged_card_passes_the_merged_record(tmp_path: Path) -> None:
    state = tmp_path / "dedupe.sqlite"
    run(make(DEDUPE_STATE=str(state))[0], [card(), page()])
    pipeline, _ = make(DEDUPE_STATE=str(state))
    [merged] = run(pipeline, [card(), page(claps=2000)])
    assert merged.claps == 2000
    assert merged.published_at == "2026-11-29T08:30:00Z"


def test_emit_all_passes_everything_again(tmp_path: Path) -> None:
    settings = {"DEDUPE_STATE": str(tmp_path / "dedupe.sqlite")}
    items = stories(5)
    run(make(**settings)[0], items)
    assert len(run(make(**settings, DEDUPE_EMIT_ALL="1")[0], items)) == 5


def test_state_location_rules(tmp_path: Path) -> None:
    assert state_path(Settings({"DEDUPE_STATE": "/s.db", "DATASET_DIR": "/d"})) == Path("/s.db")
    assert state_path(Settings({"DATASET_DIR": "/d"})) == Path("/d/.state/dedupe.sqlite")
    assert state_path(Settings()) is None
    assert isinstance(open_dedupe_state(Settings()), MemoryDedupeState)
    opened = open_dedupe_state(Settings({"DATASET_DIR": str(tmp_path)}))
    assert isinstance(opened, SqliteDedupeState)
    opened.close()
    assert (tmp_path / ".state" / "dedupe.sqlite").is_file()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_store_interface(tmp_path: Path, kind: str) -> None:
    store: MemoryDedupeState | SqliteDedupeState
    store = MemoryDedupeState() if kind == "memory" else SqliteDedupeState(tmp_path / "s.db", 2)
    assert store.get("story:a") == frozenset()
    store.put("story:a", ["h1", "h2"])
    store.put("story:b", ["h3"])
    store.put("story:a", ["h4"])
    assert store.get("story:a") == frozenset({"h4"})
    assert len(store) == 2
    store.close()


def test_switched_off() -> None:
    with pytest.raises(NotConfigured):
        make(DEDUPE_ENABLED=False)
