"""The Parquet and CSV item exporters: typed schema, round trip, row groups, CSV cells."""

from __future__ import annotations

import csv
import io
import json
import logging
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scrapy.utils.test import get_crawler

from topics_crawler.items import ITEM_CLASSES, Author, Item, Story, TagPage, item_to_dict
from topics_crawler.items.fields import specs_of
from topics_crawler.output.exporters import (
    CsvItemExporter,
    ParquetItemExporter,
    arrow_schema,
    is_json_column,
    records_of,
)


def full_story(**overrides: Any) -> Story:
    values: dict[str, Any] = {
        "story_id": "c9700a7cf36d",
        "url": "https://medium.com/@ada/notes-c9700a7cf36d",
        "title": "Notes on “Distributed” Training",
        "author_id": "9e53ca408c48",
        "author_username": "ada",
        "published_at": "2024-03-01T10:00:00Z",
        "reading_time_min": 4.5,
        "word_count": 1200,
        "claps": 1200,
        "claps_raw": "1.2K",
        "tags": ["machine-learning", "distributed-training"],
        "is_member_only": False,
        "text": "First paragraph.\n\nSecond — with ünïcode.",
        "scraped_at": "2026-11-30T12:00:00Z",
    }
    values.update(overrides)
    return Story(**values)


def tag_page() -> TagPage:
    return TagPage(
        tag="distributed-training",
        name="Distributed Training",
        parent_topics=["Machine Learning"],
        subtopics=[{"name": "Horovod", "description": None}],
        followers=5300,
        sections={"latest_stories": ["c9700a7cf36d", "aa11bb22cc33"]},
        who_to_follow=[{"kind": "author", "id": "9e53ca408c48", "username": "ada", "name": "A"}],
    )


def export_parquet(items: list[Item], **kwargs: Any) -> pq.ParquetFile:
    buffer = io.BytesIO()
    exporter = ParquetItemExporter(buffer, **kwargs)
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    buffer.seek(0)
    return pq.ParquetFile(buffer)


def test_schema_types_follow_the_field_declarations() -> None:
    story = arrow_schema(Story)
    assert story.names[0] == "item_type"
    assert story.field("story_id").type == pa.string()
    assert story.field("claps").type == pa.int64()
    assert story.field("reading_time_min").type == pa.float64()
    assert story.field("is_member_only").type == pa.bool_()
    assert story.field("tags").type == pa.list_(pa.string())
    assert story.metadata == {b"topics_crawler.item_type": b"story"}
    assert story.field("published_at").type == pa.timestamp("ms", tz="UTC")
    tag = arrow_schema(TagPage)
    section = [("section", pa.string()), ("story_ids", pa.list_(pa.string()))]
    assert tag.field("sections").type == pa.list_(pa.struct(section))
    members = [("name", pa.string()), ("description", pa.string()), ("section", pa.string())]
    assert tag.field("subtopics").type == pa.list_(pa.struct(members))
    assert [m.name for m in tag.field("who_to_follow").type.value_type] == [
        "kind", "id", "username", "slug", "name",
    ]  # fmt: skip
    assert not any(is_json_column(column) for column in tag)


def with_all_members(record: dict[str, Any]) -> dict[str, Any]:
    """A record as its Parquet row reads back: every struct member present."""
    out = dict(record)
    for name, declared in specs_of(ITEM_CLASSES[out["item_type"]]).items():
        if declared.members and isinstance(out.get(name), list):
            out[name] = [{m: e.get(m) for m in declared.members} for e in out[name]]
    return out


def test_round_trip_keeps_values_types_lists_and_nulls() -> None:
    stories = [full_story(), Story(story_id="aa11bb22cc33")]
    table = export_parquet(stories, item_class=Story).read()
    rows = records_of(table)
    assert rows == [item_to_dict(story) for story in stories]
    assert table.schema.field("published_at").type == pa.timestamp("ms", tz="UTC")
    assert rows[1]["claps"] is None
    assert rows[1]["is_member_only"] is None
    assert rows[1]["tags"] == []


def test_a_feed_of_mixed_item_types_keeps_every_field_of_every_type() -> None:
    items: list[Item] = [tag_page(), full_story(), Author(username="ada", followers=3)]
    table = export_parquet(items).read()
    assert table.column_names[0] == "item_type"
    rows = records_of(table)
    assert [row["item_type"] for row in rows] == ["tag_page", "story", "author"]
    for item, row in zip(items, rows, strict=True):
        expected = with_all_members(item_to_dict(item))
        assert {k: row[k] for k in expected} == expected
    assert rows[2]["story_id"] is None


def test_an_item_the_file_cannot_hold_is_refused_loudly() -> None:
    buffer = io.BytesIO()
    exporter = ParquetItemExporter(buffer, item_class=Story)
    exporter.start_exporting()
    with pytest.raises(TypeError, match="holds Story items, not Author"):
        exporter.export_item(Author(username="ada"))


def test_nested_values_are_typed_columns() -> None:
    page = tag_page()
    row = records_of(export_parquet([page]).read())[0]
    assert row["sections"] == page.sections
    complete = with_all_members(item_to_dict(page))
    assert row["subtopics"] == complete["subtopics"]
    assert row["who_to_follow"] == complete["who_to_follow"]
    assert row["parent_topics"] == ["Machine Learning"]


def test_rows_are_written_in_row_groups_of_the_batch_size() -> None:
    stories = [full_story(story_id=f"{i:012x}") for i in range(25)]
    parquet = export_parquet(stories, row_group_size=10)
    groups = [parquet.metadata.row_group(i).num_rows for i in range(parquet.num_row_groups)]
    assert groups == [10, 10, 5]
    assert parquet.metadata.row_group(0).column(0).compression == "ZSTD"
    assert parquet.read().column("story_id").to_pylist() == [f"{i:012x}" for i in range(25)]


def test_item_class_gives_an_empty_feed_its_schema() -> None:
    parquet = export_parquet([], item_class="topics_crawler.items.Author")
    assert parquet.metadata.num_rows == 0
    assert parquet.schema_arrow.names == arrow_schema(Author).names


def test_dict_items_are_exported_with_an_item_class() -> None:
    parquet = export_parquet([{"username": "ada", "followers": 3}], item_class=Author)
    row = parquet.read().to_pylist()[0]
    assert (row["username"], row["followers"], row["bio"], row["item_type"]) == (
        "ada",
        3,
        None,
        None,
    )


def test_dict_items_without_item_class_are_refused() -> None:
    exporter = ParquetItemExporter(io.BytesIO())
    exporter.start_exporting()
    with pytest.raises(TypeError, match="needs a dataclass item"):
        exporter.export_item({"username": "ada"})


def test_fields_to_export_selects_and_renames_columns() -> None:
    stories = [full_story()]
    picked = export_parquet(stories, fields_to_export=["story_id", "claps"]).read()
    assert picked.column_names == ["story_id", "claps"]
    renamed = export_parquet(stories, fields_to_export={"story_id": "id"}).read()
    assert renamed.to_pylist() == [{"id": "c9700a7cf36d"}]
    with pytest.raises(ValueError, match="unknown fields nope"):
        export_parquet(stories, fields_to_export=["nope"])


def test_a_value_of_the_wrong_type_becomes_null_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stories = [full_story(), full_story(story_id="aa11bb22cc33", claps="many")]
    with caplog.at_level(logging.WARNING, logger="topics_crawler.output.exporters"):
        rows = export_parquet(stories).read().to_pylist()
    assert [row["claps"] for row in rows] == [1200, None]
    assert "column claps: 1 value(s) of the wrong type" in caplog.text


def test_appending_to_an_existing_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "stories.parquet"
    target.write_bytes(b"PAR1 old content")
    with target.open("ab") as file:
        exporter = ParquetItemExporter(file)
        exporter.start_exporting()
        exporter.export_item(full_story())
        with pytest.raises(ValueError, match="overwrite: True"):
            exporter.finish_exporting()


def test_from_crawler_reads_the_parquet_settings() -> None:
    crawler = get_crawler(
        settings_dict={"PARQUET_ROW_GROUP_SIZE": 7, "PARQUET_COMPRESSION": "snappy"}
    )
    exporter = ParquetItemExporter.from_crawler(crawler, io.BytesIO())
    assert (exporter.row_group_size, exporter.compression) == (7, "snappy")
    with pytest.raises(ValueError, match="row_group_size must be positive"):
        ParquetItemExporter(io.BytesIO(), row_group_size=0)


def export_csv(items: list[Item]) -> list[dict[str, str]]:
    buffer = io.BytesIO()
    exporter = CsvItemExporter(buffer)
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    return list(csv.DictReader(io.StringIO(buffer.getvalue().decode("utf-8"))))


def test_csv_writes_lists_and_dicts_as_json_text() -> None:
    story_row = export_csv([full_story(), Story(story_id="aa11bb22cc33")])
    assert json.loads(story_row[0]["tags"]) == ["machine-learning", "distributed-training"]
    assert story_row[1]["tags"] == "[]"
    assert story_row[0]["title"] == "Notes on “Distributed” Training"
    assert story_row[0]["text"] == "First paragraph.\n\nSecond — with ünïcode."
    page_row = export_csv([tag_page()])[0]
    assert json.loads(page_row["sections"]) == {"latest_stories": ["c9700a7cf36d", "aa11bb22cc33"]}
    assert json.loads(page_row["subtopics"]) == [{"name": "Horovod", "description": None}]


def test_csv_booleans_numbers_and_none() -> None:
    first, second = export_csv([full_story(), Story(story_id="aa11bb22cc33")])
    assert (first["is_member_only"], first["claps"], first["reading_time_min"]) == (
        "false",
        "1200",
        "4.5",
    )
    assert (second["is_member_only"], second["claps"], second["subtitle"]) == ("", "", "")
    assert list(first) == list(item_to_dict(full_story()))
