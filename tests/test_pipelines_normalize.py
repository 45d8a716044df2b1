"""Normalize pipeline: each source form of each value kind, dict items, idempotence, bad input."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any

import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from tests.fixture_cases import discover
from topics_crawler.items import ITEM_CLASSES, Author, Publication, Story, TagPage, item_to_dict
from topics_crawler.items.fields import kinds
from topics_crawler.pipelines.normalize import NormalizePipeline, normalize_record

SCRAPED_AT = "2026-11-30T12:00:00Z"
STORY_URL = "https://medium.com/@ev/why-7c8f847b58aa"


class _Spider(Spider):
    name = "normalize-test"


class FromElsewhere:
    """The pipeline fed each item as a plain dict (an item from elsewhere: what it guards)."""

    def __init__(self, pipeline: NormalizePipeline) -> None:
        self.pipeline = pipeline

    def process_item(self, item: Any) -> Any:
        return self.pipeline.process_item(item_to_dict(item) if is_dataclass(item) else item)


def make_pipeline(**settings: Any) -> FromElsewhere:
    return FromElsewhere(NormalizePipeline.from_crawler(get_crawler(_Spider, settings)))


def test_the_projects_own_items_pass_through_as_the_same_object() -> None:
    item = Story(story_id="7c8f847b58aa", claps="1.2K")  # type: ignore[arg-type]
    crawler = get_crawler(_Spider)
    assert NormalizePipeline.from_crawler(crawler).process_item(item) is item
    assert crawler.stats is not None
    assert crawler.stats.get_value("normalize/built_normalized/story") == 1


def test_every_parser_fixture_is_built_normalized() -> None:
    """What lets the pipeline pass the parsers' items through: normalizing changes nothing."""
    checked = 0
    for family in ("own", "real"):
        for case in discover(family):
            if not case.input_path().exists():
                continue  # a real capture not present in this clone
            for item in case.run().items:
                record = item_to_dict(item)
                assert normalize_record(record["item_type"], record)[0] == record, case.name
                checked += 1
    assert checked >= 20


def story(**values: Any) -> Story:
    return Story(story_id="7c8f847b58aa", url=STORY_URL, scraped_at=SCRAPED_AT, **values)


def test_field_tables_name_exactly_the_item_fields() -> None:
    for cls in ITEM_CLASSES.values():
        assert set(kinds(cls)) == {f.name for f in fields(cls)}


@pytest.mark.parametrize(
    ("source", "count", "raw"),
    [
        ("1.2K", 1200, "1.2K"),
        ("3M", 3_000_000, "3M"),
        ("1,234", 1234, None),
        ("1 234", 1234, None),
        ("1.234", 1234, None),
        ("1\u202f234 claps", 1234, None),
        ("12 345 678", 12_345_678, None),
        ("1.234K", 1234, "1.234K"),
        ("1,2K", 1200, "1,2K"),
        ("1.5", None, "1.5"),
        ("1,23", None, "1,23"),
        (33159, 33159, None),
        ("33159", 33159, None),
        ("23 responses", 23, None),
        (7.0, 7, None),
    ],
)
def test_counts_from_any_source_form(source: Any, count: int, raw: str | None) -> None:
    item = make_pipeline().process_item(story(claps=source, responses=source))
    assert (item.claps, item.claps_raw) == (count, raw)
    assert (item.responses, item.responses_raw) == (count, raw)


def test_count_raw_already_set_is_kept_when_the_value_is_exact() -> None:
    item = make_pipeline().process_item(story(claps=1200, claps_raw="1.2K"))
    assert (item.claps, item.claps_raw) == (1200, "1.2K")


@pytest.mark.parametrize(
    ("source", "minutes"), [("5 min read", 5.0), (3.32, 3.32), (4, 4.0), ("2.5", 2.5)]
)
def test_reading_time_to_float_minutes(source: Any, minutes: float) -> None:
    item = make_pipeline().process_item(story(reading_time_min=source))
    assert item.reading_time_min == minutes
    assert isinstance(item.reading_time_min, float)


@pytest.mark.parametrize(
    ("source", "iso", "raw"),
    [
        (1477742400000, "2016-10-29T12:00:00Z", None),
        (1477742400, "2016-10-29T12:00:00Z", None),
        ("2016-10-29T14:00:00+02:00", "2016-10-29T12:00:00Z", None),
        ("2016-10-29T12:00:00.123Z", "2016-10-29T12:00:00Z", None),
        ("Sat, 29 Oct 2016 12:00:00 GMT", "2016-10-29T12:00:00Z", None),
        ("Oct 29, 2016", "2016-10-29T00:00:00Z", "Oct 29, 2016"),
        ("1d ago", "2026-11-29T12:00:00Z", "1d ago"),
        ("3 hours ago", "2026-11-30T09:00:00Z", "3 hours ago"),
        ("Just now", "2026-11-30T12:00:00Z", "Just now"),
    ],
)
def test_dates_to_iso_utc_relative_to_scraped_at(source: Any, iso: str, raw: str | None) -> None:
    item = make_pipeline().process_item(story(published_at=source))
    assert (item.published_at, item.published_at_raw) == (iso, raw)


def test_text_trimmed_nfc_and_folded() -> None:
    decomposed = "Cafe\u0301"
    item = make_pipeline().process_item(
        story(title=f"  {decomposed}\u00a0 culture \n", text=f"\n  {decomposed}\n\n    code()\n")
    )
    assert item.title == "Café culture"
    typographic = make_pipeline().process_item(story(title="Flags\u200a—\u200aHow\n to use"))
    assert typographic.title == "Flags\u200a—\u200aHow to use", "hair spaces kept, lines folded"
    assert item.text == "Café\n\n    code()", "body keeps paragraphs and code indentation"


def test_canonical_urls_and_ids() -> None:
    item = make_pipeline().process_item(
        Story(
            story_id=" 7C8F847B58AA ",
            url="http://WWW.Medium.com/@ev/why-7c8f847b58aa/?source=rss----abc#frag",
            author_username="@ev",
            publication_slug="Pinterest-Engineering",
            scraped_at=SCRAPED_AT,
        )
    )
    assert item.story_id == "7c8f847b58aa"
    assert item.url == STORY_URL
    assert item.author_username == "ev"
    assert item.publication_slug == "pinterest-engineering"


def test_tag_names_to_slugs_without_duplicates() -> None:
    item = make_pipeline().process_item(
        story(tags=["Machine Learning", "machine-learning", "https://medium.com/tag/ai?x=1"])
    )
    assert item.tags == ["machine-learning", "ai"]
    tag_page = make_pipeline().process_item(
        TagPage(tag="Distributed Training", related_tags=["Deep Learning"], scraped_at=SCRAPED_AT)
    )
    assert tag_page.tag == "distributed-training"
    assert tag_page.related_tags == ["deep-learning"]


def test_author_publication_and_tag_page_fields() -> None:
    pipeline = make_pipeline()
    author = pipeline.process_item(
        Author(username="@Ev", followers="12K Followers", following="1,024", is_member="true")
    )
    assert (author.username, author.followers) == ("Ev", 12000)
    assert author.followers_raw == "12K Followers"
    assert (author.following, author.is_member) == (1024, True)
    publication = pipeline.process_item(Publication(slug="uxdesign", domain="UXDesign.CC."))
    assert publication.domain == "uxdesign.cc"
    tag_page = pipeline.process_item(
        TagPage(
            tag="ai",
            sections={"latest_stories": [" 7C8F847B58AA ", "7c8f847b58aa"]},
            subtopics=[{"name": " Ethics ", "description": None}],
            story_count="1.5M stories",
        )
    )
    assert tag_page.sections == {"latest_stories": ["7c8f847b58aa"]}
    assert tag_page.subtopics == [{"name": "Ethics", "description": None}]
    assert (tag_page.story_count, tag_page.story_count_raw) == (1_500_000, "1.5M stories")


def test_dict_items_become_dataclasses() -> None:
    item = make_pipeline().process_item(
        {"item_type": "story", "story_id": "7c8f847b58aa", "claps": "2K", "scraped_at": SCRAPED_AT}
    )
    assert isinstance(item, Story)
    assert (item.claps, item.claps_raw) == (2000, "2K")


def test_normalising_twice_changes_nothing() -> None:
    pipeline = make_pipeline()
    once = pipeline.process_item(
        story(claps="1.2K", published_at="1d ago", tags=["AI"], title=" A  b ", word_count="9")
    )
    twice = pipeline.process_item(once)
    assert item_to_dict(twice) == item_to_dict(once)


@pytest.mark.parametrize(
    ("values", "field", "expected", "raw_field", "raw"),
    [
        ({"claps": "lots"}, "claps", None, "claps_raw", "lots"),
        ({"claps": -5}, "claps", None, "claps_raw", "-5"),
        ({"published_at": "sometime"}, "published_at", None, "published_at_raw", "sometime"),
        ({"word_count": -3}, "word_count", -3, None, None),
        ({"updated_at": "not a date"}, "updated_at", "not a date", None, None),
        ({"reading_time_min": "long"}, "reading_time_min", "long", None, None),
        ({"is_member_only": "maybe"}, "is_member_only", "maybe", None, None),
        ({"url": "mailto:ev@medium.com"}, "url", "mailto:ev@medium.com", None, None),
    ],
)
def test_unreadable_values_stay_visible(
    values: dict[str, Any], field: str, expected: Any, raw_field: str | None, raw: str | None
) -> None:
    crawler = get_crawler(_Spider)
    pipeline = NormalizePipeline.from_crawler(crawler)
    item = pipeline.process_item({**item_to_dict(story()), **values})
    assert getattr(item, field) == expected
    if raw_field:
        assert getattr(item, raw_field) == raw
    assert crawler.stats is not None
    assert crawler.stats.get_value(f"normalize/unreadable/story/{field}") == 1


@pytest.mark.parametrize(
    "item",
    [
        "not an item",
        {"no": "type"},
        {"item_type": "podcast"},
        {"item_type": "story", "story_id": "7c8f847b58aa", "bogus": 1},
        {"item_type": "story", "tags": "not-a-list", "claps": [1], "title": 5, "scraped_at": 0},
        {"item_type": "tag_page", "sections": ["x"], "subtopics": "y", "who_to_follow": [1]},
    ],
)
def test_malformed_items_never_raise(item: Any) -> None:
    out = make_pipeline().process_item(item)
    assert out is not None


def test_unknown_fields_pass_on_as_a_dict_for_validation() -> None:
    out = make_pipeline().process_item({"item_type": "story", "bogus": 1, "title": " T "})
    assert out == {"item_type": "story", "bogus": 1, "title": "T"}


def test_normalize_record_is_pure() -> None:
    record = {"item_type": "story", "claps": "1K", "scraped_at": SCRAPED_AT}
    normalize_record("story", record)
    assert record == {"item_type": "story", "claps": "1K", "scraped_at": SCRAPED_AT}


def test_switched_off() -> None:
    with pytest.raises(NotConfigured):
        make_pipeline(NORMALIZE_ENABLED=False)
