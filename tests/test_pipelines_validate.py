"""Validate pipeline: each reason, rejects.jsonl content and location, malformed items."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from topics_crawler.items import Author, Publication, Story, TagPage, item_to_dict
from topics_crawler.pipelines.normalize import NormalizePipeline
from topics_crawler.pipelines.rejects import rejects_path
from topics_crawler.pipelines.validate import ValidatePipeline

SCRAPED_AT = "2026-11-30T12:00:00Z"
STORY_URL = "https://medium.com/@ev/why-7c8f847b58aa"


class _Spider(Spider):
    name = "validate-test"


def valid_story(**values: Any) -> dict[str, Any]:
    story = Story(story_id="7c8f847b58aa", url=STORY_URL, title="Why", scraped_at=SCRAPED_AT)
    return {**item_to_dict(story), **values}


def make(tmp_path: Path, **settings: Any) -> tuple[ValidatePipeline, Crawler]:
    crawler = get_crawler(_Spider, {"REJECTS_FILE": str(tmp_path / "rejects.jsonl"), **settings})
    return ValidatePipeline.from_crawler(crawler), crawler


def reasons_for(tmp_path: Path, item: Any) -> list[str]:
    pipeline, _ = make(tmp_path)
    with pytest.raises(DropItem):
        pipeline.process_item(item)
    pipeline.close_spider()
    lines = (tmp_path / "rejects.jsonl").read_text(encoding="utf-8").splitlines()
    return list(json.loads(lines[-1])["reasons"])


def test_valid_items_pass_as_dataclasses(tmp_path: Path) -> None:
    pipeline, crawler = make(tmp_path)
    items = [
        Story(story_id="7c8f847b58aa", url=STORY_URL, title="Why", scraped_at=SCRAPED_AT),
        Author(username="ev", url="https://medium.com/@ev", scraped_at=SCRAPED_AT),
        Publication(
            publication_id="8f1a2b3c4d5e", url="https://uxdesign.cc/", scraped_at=SCRAPED_AT
        ),
        TagPage(tag="ai", url="https://medium.com/tag/ai", scraped_at=SCRAPED_AT),
    ]
    for item in items:
        assert pipeline.process_item(item) is item
    assert isinstance(pipeline.process_item(valid_story()), Story)
    assert crawler.stats is not None
    assert crawler.stats.get_value("validate/valid/story") == 2
    assert not (tmp_path / "rejects.jsonl").exists()


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        ({"story_id": None}, "story_id:missing"),
        ({"title": "  "}, "title:missing"),
        ({"story_id": "XYZ"}, "story_id:not_post_id"),
        ({"url": "http://medium.com/@ev/why-7c8f847b58aa?source=x"}, "url:not_canonical"),
        ({"published_at": "2016-10-29"}, "published_at:not_iso"),
        ({"published_at": "2016-13-45T00:00:00Z"}, "published_at:not_iso"),
        ({"published_at_raw": "sometime"}, "published_at:unreadable"),
        ({"claps": -1}, "claps:negative"),
        ({"claps_raw": "-5"}, "claps:negative"),
        ({"claps_raw": "lots"}, "claps:unreadable"),
        ({"claps": "12"}, "claps:not_int"),
        ({"claps": True}, "claps:not_int"),
        ({"reading_time_min": -2.0}, "reading_time_min:negative"),
        ({"reading_time_min": float("nan")}, "reading_time_min:not_number"),
        ({"is_member_only": "yes"}, "is_member_only:not_bool"),
        ({"tags": ["Machine Learning"]}, "tags:bad_tag"),
        ({"tags": ["ai", "ai"]}, "tags:duplicates"),
        ({"author_id": "User:af97"}, "author_id:not_hex_id"),
        ({"scraped_at": 1477742400}, "scraped_at:not_iso"),
        ({"image_url": "//miro.medium.com/x.png"}, "image_url:not_http_url"),
        ({"bogus": 1}, "bogus:unknown_field"),
    ],
)
def test_each_story_reason(tmp_path: Path, values: dict[str, Any], reason: str) -> None:
    assert reasons_for(tmp_path, valid_story(**values)) == [reason]


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        (Author(url="https://medium.com/@ev", scraped_at=SCRAPED_AT), "author_id|username:missing"),
        (Author(username="ev", url="https://medium.com/@ev"), "scraped_at:missing"),
        (
            Author(username="e v", url="https://medium.com/@ev", scraped_at=SCRAPED_AT),
            "username:bad_username",
        ),
        (Publication(slug="ux", scraped_at=SCRAPED_AT), "url:missing"),
        (
            Publication(
                slug="ux", url="https://uxdesign.cc/", domain="ux design", scraped_at=SCRAPED_AT
            ),
            "domain:bad_domain",
        ),
        (
            TagPage(
                tag="ai",
                url="https://medium.com/tag/ai",
                sections={"x": ["nope"]},
                scraped_at=SCRAPED_AT,
            ),
            "sections:bad_story_ids",
        ),
        (
            TagPage(
                tag="ai",
                url="https://medium.com/tag/ai",
                subtopics=[{"name": 3}],
                scraped_at=SCRAPED_AT,
            ),
            "subtopics:bad_record",
        ),
        ({"item_type": "podcast"}, "item_type:unknown"),
        ({"title": "no type"}, "item_type:missing"),
        ("a string", "item:not_an_item"),
    ],
)
def test_other_reasons(tmp_path: Path, item: Any, reason: str) -> None:
    assert reasons_for(tmp_path, item) == [reason]


def test_reject_record_stats_and_drop_message(tmp_path: Path) -> None:
    pipeline, crawler = make(tmp_path)
    with pytest.raises(DropItem, match=r"Rejected story https://medium\.com/@ev/why-7c8f847b58aa"):
        pipeline.process_item(valid_story(claps=-1, story_id=None))
    pipeline.close_spider()
    [line] = (tmp_path / "rejects.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(line)
    assert record["item_type"] == "story"
    assert record["url"] == STORY_URL
    assert record["reasons"] == ["story_id:missing", "claps:negative"]
    assert record["item"]["claps"] == -1
    assert record["rejected_at"].endswith("Z")
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    assert stats["validate/rejected/story"] == 1
    assert stats["validate/rejected/story/story_id:missing"] == 1
    assert stats["validate/rejected/story/claps:negative"] == 1
    assert stats["validate/rejects_file"] == str(tmp_path / "rejects.jsonl")


def test_rejects_are_appended_across_runs(tmp_path: Path) -> None:
    for _ in range(2):
        pipeline, _ = make(tmp_path)
        with pytest.raises(DropItem):
            pipeline.process_item(valid_story(story_id=None))
        pipeline.close_spider()
    assert len((tmp_path / "rejects.jsonl").read_text(encoding="utf-8").splitlines()) == 2


def test_unreadable_value_from_normalize_is_rejected_not_lost(tmp_path: Path) -> None:
    crawler = get_crawler(_Spider, {"REJECTS_FILE": str(tmp_path / "rejects.jsonl")})
    normalize = NormalizePipeline.from_crawler(crawler)
    validate = ValidatePipeline.from_crawler(crawler)
    item = normalize.process_item(valid_story(claps="lots", updated_at="someday"))
    with pytest.raises(DropItem):
        validate.process_item(item)
    validate.close_spider()
    record = json.loads((tmp_path / "rejects.jsonl").read_text(encoding="utf-8"))
    assert record["reasons"] == ["updated_at:not_iso", "claps:unreadable"]
    assert record["item"]["claps_raw"] == "lots"


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"REJECTS_FILE": "/x/bad.jsonl", "DATASET_DIR": "/d"}, "/x/bad.jsonl"),
        ({"DATASET_DIR": "/d", "FEEDS": {"/f/items.jsonl": {}}}, "/d/rejects.jsonl"),
        (
            {"FEEDS": {"s3://b/k.jsonl": {}, "file:///f/out/items.jsonl": {}}},
            "/f/out/rejects.jsonl",
        ),
        ({"FEEDS": {"stdout:": {}, "out/items.csv": {}}}, "out/rejects.jsonl"),
        ({"FEEDS": {Path("/p/items.jsonl"): {}}}, "/p/rejects.jsonl"),
        ({"FEEDS": {"data/%(name)s/items.jsonl": {}}}, "rejects.jsonl"),
        ({}, "rejects.jsonl"),
    ],
)
def test_rejects_location_rules(settings: dict[str, Any], expected: str) -> None:
    assert rejects_path(Settings(settings)) == Path(expected)


@pytest.mark.parametrize(
    "item",
    [
        None,
        42,
        {"item_type": None},
        {"item_type": ["story"]},
        {"item_type": "story", "tags": "ai", "sections": 1, "claps": {"n": 1}, "title": b"x"},
        {"item_type": "tag_page", "subtopics": [None], "who_to_follow": "x", "sections": {"a": 1}},
    ],
)
def test_malformed_items_are_rejected_not_raised(tmp_path: Path, item: Any) -> None:
    pipeline, _ = make(tmp_path)
    with pytest.raises(DropItem):
        pipeline.process_item(item)
    pipeline.close_spider()


def test_switched_off(tmp_path: Path) -> None:
    with pytest.raises(NotConfigured):
        make(tmp_path, VALIDATE_ENABLED=False)


def test_a_record_key_no_column_holds_is_rejected_not_lost() -> None:
    from topics_crawler.pipelines.validate import validate_record

    record = item_to_dict(TagPage(tag="ai", url="https://medium.com/tag/ai", scraped_at=SCRAPED_AT))
    record["who_to_follow"] = [{"kind": "author", "id": "a1", "followers": "12"}]
    assert "who_to_follow:unknown_key" in validate_record("tag_page", record)
