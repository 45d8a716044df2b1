"""Item helpers: dict round trip, and merging what a card knew into a page's item."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pyarrow as pa
import pytest

from topics_crawler.items import (
    ITEM_CLASSES,
    Author,
    Publication,
    Story,
    fill_missing,
    item_from_dict,
    item_to_dict,
)
from topics_crawler.items.fields import Kind, identity_fields, kinds, required_groups, specs_of


def test_dict_round_trip_and_item_type_first() -> None:
    story = Story(story_id="0123456789ab", tags=["ai"], claps=3)
    data = item_to_dict(story)
    assert next(iter(data)) == "item_type"
    assert data["item_type"] == "story"
    assert item_from_dict(data) == story


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"item_type": "poem"}, "unknown item_type 'poem'"),
        ({"story_id": "x"}, "unknown item_type None"),
        ({"item_type": "story", "colour": "red"}, "story: unknown fields colour"),
    ],
)
def test_item_from_dict_refuses_what_it_does_not_know(data: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        item_from_dict(data)


def test_page_values_win_and_the_card_fills_gaps() -> None:
    page = Story(story_id="0123456789ab", title="Page title", tags=[])
    card = Story(story_id="0123456789ab", title="Card title", subtitle="From the card", tags=["ai"])
    merged = fill_missing(page, card)
    assert merged.title == "Page title"
    assert merged.subtitle == "From the card"
    assert merged.tags == ["ai"]
    assert page.subtitle is None, "the page's item is not changed in place"


def test_raw_text_travels_with_its_value() -> None:
    card = Story(claps=1200, claps_raw="1.2K", published_at="2025-10-28T00:00:00Z",
                 published_at_raw="Oct 28, 2025")  # fmt: skip
    exact = fill_missing(Story(claps=1234, published_at="2025-10-28T09:30:00Z"), card)
    assert (exact.claps, exact.claps_raw) == (1234, None)
    assert (exact.published_at, exact.published_at_raw) == ("2025-10-28T09:30:00Z", None)
    gap = fill_missing(Story(claps=None), card)
    assert (gap.claps, gap.claps_raw) == (1200, "1.2K")


def test_merging_two_kinds_is_refused() -> None:
    with pytest.raises(TypeError, match="cannot merge author into story"):
        fill_missing(Story(), Author())


@pytest.mark.parametrize("item_class", list(ITEM_CLASSES.values()))
def test_every_field_is_declared_documented_and_empty_by_default(item_class: type) -> None:
    declared = specs_of(item_class)
    for field in dataclasses.fields(item_class):
        assert declared[field.name].doc.strip(), f"{field.name} has no description"
        if field.name != "item_type":
            assert field.default is None or field.default_factory is not dataclasses.MISSING


@pytest.mark.parametrize("item_type", list(ITEM_CLASSES))
def test_raw_companions_and_identity_name_declared_fields(item_type: str) -> None:
    item_class = ITEM_CLASSES[item_type]
    names = set(kinds(item_class))
    for name, declared in specs_of(item_class).items():
        if declared.raw:
            assert kinds(item_class).get(declared.raw) is Kind.RAW, name
    for name, declared in specs_of(item_class).items():
        if declared.kind is Kind.RECORD_LIST:
            assert declared.members, f"{name}: a record list declares its members"
    assert identity_fields(item_class)
    assert set(identity_fields(item_class)) <= names
    assert all(set(group) <= names for group in required_groups(item_class))


def test_required_groups_read_the_declarations() -> None:
    assert required_groups(Author) == [("author_id", "username"), ("url",), ("scraped_at",)]
    assert identity_fields(Publication) == ("publication_id", "slug", "domain")


def test_each_kind_declares_its_normaliser_check_and_column_once() -> None:
    """What a kind means lives on the kind; the pipelines and the exporter read it there."""
    now = datetime(2026, 1, 2, tzinfo=UTC)
    claps = specs_of(Story)["claps"]
    assert claps.kind is Kind.COUNT
    assert Kind.COUNT.normalise("1.2K", now) == (1200, "1.2K")
    assert Kind.COUNT.check(-1) == "negative"
    assert Kind.COUNT.column("claps", claps).type == pa.int64()
    published = specs_of(Story)["published_at"]
    assert Kind.TIMESTAMP.column("published_at", published).type == pa.timestamp("ms", tz="UTC")
    for kind in Kind:
        assert kind.value.doc, kind
        assert callable(kind.normalise), kind
        assert callable(kind.check), kind
    for item_class in ITEM_CLASSES.values():
        for name, declared in specs_of(item_class).items():
            assert declared.kind.column(name, declared).name == name
