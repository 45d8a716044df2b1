"""Scrapy item exporters for the dataset formats: Parquet (pyarrow) and CSV with JSON lists.

Both are registered in ``FEED_EXPORTERS`` (``parquet`` and ``csv``) and work with any
``FEEDS`` entry. Column types come from the item dataclass (see :func:`arrow_schema`): each
field's column is the one its kind declares (:class:`topics_crawler.items.fields.Kind`):
timestamps ``timestamp[ms, tz=UTC]`` holding whole seconds (items and JSON keep
``2025-01-02T03:04:05Z``), counts ``int64``, minutes ``float64``, lists ``list<string>``,
record lists ``list<struct<...>>`` of their declared members, the sections
``list<struct<section, story_ids>>`` in page order (read back as a mapping), the rest
``string``.

Dataclasses of other projects get their columns from their annotations (``str``,
``int``, ``float``, ``bool``, ``list[str]``; anything else is JSON text in a string
column marked ``topics_crawler.encoding=json``, as schema-1 datasets stored nested
values). :func:`records_of` turns any of these tables back into item records.

``None`` is a null in every column. Parquet feeds cannot be appended to: give them
``"overwrite": True`` in ``FEEDS``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import types
import typing
from collections.abc import Callable, Iterable
from typing import IO, Any, Self

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from itemadapter import ItemAdapter
from scrapy.crawler import Crawler
from scrapy.exporters import BaseItemExporter
from scrapy.exporters import CsvItemExporter as ScrapyCsvItemExporter
from scrapy.utils.misc import load_object

from topics_crawler import settings as defaults
from topics_crawler.items import ITEM_CLASSES
from topics_crawler.items.fields import ENCODING_KEY, MAPPING_ENCODING, SPEC_KEY, FieldSpec
from topics_crawler.items.values import ISO_FORMAT

logger = logging.getLogger(__name__)

#: Schema metadata key naming the item type of a file.
ITEM_TYPE_KEY = b"topics_crawler.item_type"
DEFAULT_ROW_GROUP_SIZE: int = defaults.PARQUET_ROW_GROUP_SIZE
DEFAULT_COMPRESSION: str = defaults.PARQUET_COMPRESSION

_SCALAR_TYPES: dict[Any, pa.DataType] = {
    str: pa.string(),
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
}


def _without_none(annotation: Any) -> Any:
    """``X | None`` → ``X``; other annotations unchanged."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def arrow_field(name: str, annotation: Any) -> pa.Field:
    """Parquet column for one dataclass field (JSON text for anything nested)."""
    annotation = _without_none(annotation)
    if annotation in _SCALAR_TYPES:
        return pa.field(name, _SCALAR_TYPES[annotation])
    if typing.get_origin(annotation) is list and typing.get_args(annotation) == (str,):
        return pa.field(name, pa.list_(pa.string()))
    return pa.field(name, pa.string(), metadata={ENCODING_KEY: b"json"})


def arrow_schema(item_class: type) -> pa.Schema:
    """Typed Arrow schema of an item dataclass, columns in field order: from the field
    declarations of this project's items, else from the annotations."""
    declared = [f.metadata.get(SPEC_KEY) for f in dataclasses.fields(item_class)]
    if all(isinstance(d, FieldSpec) for d in declared):
        columns = [
            d.kind.column(f.name, d)  # type: ignore[union-attr]
            for f, d in zip(dataclasses.fields(item_class), declared, strict=True)
        ]
    else:
        hints = typing.get_type_hints(item_class)
        columns = [arrow_field(f.name, hints[f.name]) for f in dataclasses.fields(item_class)]
    item_type = getattr(item_class, "__name__", "item")
    for f in dataclasses.fields(item_class):
        if f.name == "item_type" and isinstance(f.default, str):
            item_type = f.default
    return pa.schema(columns, metadata={ITEM_TYPE_KEY: item_type.encode()})


def mixed_schema(item_classes: Iterable[type]) -> pa.Schema:
    """One wide schema for a file holding several item types: the union of their
    columns in first-seen order (``item_type`` first tells the rows apart)."""
    columns: dict[str, pa.Field] = {}
    for item_class in item_classes:
        for column in arrow_schema(item_class):
            known = columns.setdefault(column.name, column)
            if not known.equals(column, check_metadata=True):
                raise TypeError(
                    f"column {column.name!r} has two types: {known.type}, {column.type}"
                )
    return pa.schema(list(columns.values()), metadata={ITEM_TYPE_KEY: b"mixed"})


def is_mapping_column(column: pa.Field) -> bool:
    """True for a ``list<struct<key, value>>`` column that holds a mapping."""
    return bool(column.metadata and column.metadata.get(ENCODING_KEY) == MAPPING_ENCODING)


def mapping_entries(value: Any) -> list[dict[str, Any]] | None:
    """A mapping as the entries of a mapping column (``{"section": k, "story_ids": v}``)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return value  # not a mapping: the column refuses it
    return [{"section": key, "story_ids": ids} for key, ids in value.items()]


def is_json_column(column: pa.Field) -> bool:
    """True for a string column that holds JSON text (nested values)."""
    return bool(column.metadata and column.metadata.get(ENCODING_KEY) == b"json")


def records_of(table: pa.Table) -> list[dict[str, Any]]:
    """Item records of a table written by this module or a schema-1 dataset: timestamps as
    ISO text, maps as dicts, JSON-text columns decoded."""
    for index, column in enumerate(table.schema):
        if pa.types.is_timestamp(column.type):
            seconds = table.column(index).cast(pa.timestamp("s", tz="UTC"), safe=False)
            text = pc.strftime(seconds, format=ISO_FORMAT)
            table = table.set_column(index, column.name, text)
    maps = [c.name for c in table.schema if pa.types.is_map(c.type)]
    mappings = [c.name for c in table.schema if is_mapping_column(c)]
    json_columns = [c.name for c in table.schema if is_json_column(c)]
    # column by column: Table.to_pylist imports pandas
    names = table.column_names
    columns = [table.column(index).to_pylist() for index in range(table.num_columns)]
    rows: list[dict[str, Any]] = [
        dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)
    ]
    if not names:
        rows = [{} for _ in range(table.num_rows)]
    for row in rows:
        for name in maps:
            if row.get(name) is not None:
                row[name] = dict(row[name])
        for name in mappings:
            if row.get(name) is not None:
                row[name] = {entry["section"]: entry["story_ids"] for entry in row[name]}
        for name in json_columns:
            if isinstance(row.get(name), str):
                row[name] = json.loads(row[name])
    return rows


def _encoder(column: pa.Field) -> Callable[[Any], Any] | None:
    if is_json_column(column):
        return _json_text
    return mapping_entries if is_mapping_column(column) else None


def _json_text(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


class ParquetItemExporter(BaseItemExporter):
    """Write items to one Parquet file, ``row_group_size`` rows at a time (zstd by default).

    The schema comes from ``item_class`` (a dataclass or its import path). Without
    it, a feed of this project's items gets one wide schema covering all four item
    types (:func:`mixed_schema`; use ``item_classes`` in FEEDS for one file per
    type), and any other dataclass the schema of the first item. An item the
    file's schema cannot hold raises ``TypeError`` (logged by the feed exporter)
    rather than losing its fields. Rows are buffered column by column and
    written as one row group per batch, so memory depends on the batch, not the feed.
    ``fields_to_export`` (a list, or a dict field → column name) selects columns.
    """

    def __init__(
        self,
        file: IO[bytes],
        *,
        item_class: type | str | None = None,
        row_group_size: int = DEFAULT_ROW_GROUP_SIZE,
        compression: str = DEFAULT_COMPRESSION,
        compression_level: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(dont_fail=True, **kwargs)
        if row_group_size < 1:
            raise ValueError(f"row_group_size must be positive, got {row_group_size}")
        self.file = file
        self.row_group_size = row_group_size
        self.compression = compression
        self.compression_level = compression_level
        self.item_class: type | None = (
            load_object(item_class) if isinstance(item_class, str) else item_class
        )
        self.schema: pa.Schema | None = None
        self._row_class: tuple[type, ...] | None = None  # item classes the schema holds
        self._sources: list[str] = []
        self._encoders: list[Callable[[Any], Any] | None] = []
        self._columns: list[list[Any]] = []
        self._buffered = 0
        self._writer: pq.ParquetWriter | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler, file: IO[bytes], **kwargs: Any) -> Self:
        """Defaults from ``PARQUET_ROW_GROUP_SIZE``, ``PARQUET_COMPRESSION(_LEVEL)``."""
        settings = crawler.settings
        kwargs.setdefault(
            "row_group_size", settings.getint("PARQUET_ROW_GROUP_SIZE", DEFAULT_ROW_GROUP_SIZE)
        )
        kwargs.setdefault("compression", settings.get("PARQUET_COMPRESSION", DEFAULT_COMPRESSION))
        level = settings.get("PARQUET_COMPRESSION_LEVEL")
        kwargs.setdefault("compression_level", None if level is None else int(level))
        return cls(file, **kwargs)

    def start_exporting(self) -> None:
        if self.item_class is not None:
            self._set_schema(self.item_class)

    def export_item(self, item: Any) -> None:
        if self.schema is None:
            self._set_schema(type(item))
        foreign = dataclasses.is_dataclass(item) and type(item) not in (self._row_class or ())
        if foreign:
            raise TypeError(
                f"this Parquet feed holds {self._row_class_names()} items, not "
                f"{type(item).__name__}: give each item type its own file (item_classes)"
            )
        if dataclasses.is_dataclass(item):
            values: Iterable[Any] = (getattr(item, name, None) for name in self._sources)
        else:
            adapter = ItemAdapter(item)
            values = (adapter.get(name) for name in self._sources)
        for column, encode, value in zip(self._columns, self._encoders, values, strict=True):
            column.append(value if encode is None else encode(value))
        self._buffered += 1
        if self._buffered >= self.row_group_size:
            self._flush()

    def finish_exporting(self) -> None:
        if self.schema is None:
            self.schema = pa.schema([])
        self._flush()
        self._open_writer().close()

    def _set_schema(self, item_class: type) -> None:
        if self.schema is not None:
            return
        if not dataclasses.is_dataclass(item_class):
            raise TypeError(
                f"ParquetItemExporter needs a dataclass item (or item_class), got {item_class!r}"
            )
        project_classes = tuple(ITEM_CLASSES.values())
        if self.item_class is None and item_class in project_classes:
            self._row_class = project_classes
            full = mixed_schema(project_classes)
        else:
            self._row_class = (item_class,)
            full = arrow_schema(item_class)
        columns = self._selected_columns(full)
        self.schema = pa.schema([column for _, column in columns], metadata=full.metadata)
        self._sources = [source for source, _ in columns]
        self._encoders = [_encoder(col) for _, col in columns]
        self._columns = [[] for _ in columns]

    def _row_class_names(self) -> str:
        return "/".join(cls.__name__ for cls in self._row_class or ())

    def _selected_columns(self, full: pa.Schema) -> list[tuple[str, pa.Field]]:
        """(item field, output column) pairs honouring ``fields_to_export``."""
        wanted = self.fields_to_export
        if wanted is None:
            return [(column.name, column) for column in full]
        renames = dict(wanted) if isinstance(wanted, typing.Mapping) else {n: n for n in wanted}
        unknown = sorted(set(renames) - set(full.names))
        if unknown:
            raise ValueError(f"fields_to_export: unknown fields {', '.join(unknown)}")
        return [(name, full.field(name).with_name(out)) for name, out in renames.items()]

    def _open_writer(self) -> pq.ParquetWriter:
        if self._writer is None:
            assert self.schema is not None
            if _has_content(self.file):
                raise ValueError("Parquet feeds cannot be appended to: set overwrite: True")
            self._writer = pq.ParquetWriter(
                self.file,
                self.schema,
                compression=self.compression,
                compression_level=self.compression_level,
            )
        return self._writer

    def _flush(self) -> None:
        if not self._buffered:
            return
        assert self.schema is not None
        arrays = [
            _to_array(values, column)
            for values, column in zip(self._columns, self.schema, strict=True)
        ]
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        self._open_writer().write_batch(batch, row_group_size=self._buffered)
        self._columns = [[] for _ in self._columns]
        self._buffered = 0


def _has_content(file: IO[bytes]) -> bool:
    """True when ``file`` already holds bytes (an append-mode feed); False when unknown."""
    try:
        return file.tell() > 0
    except (OSError, AttributeError, ValueError):
        return False


def _to_array(values: list[Any], column: pa.Field) -> pa.Array:
    """Arrow array of one buffered column; values of the wrong type become null (logged).
    Timestamps come as ISO text (the items' form) and are parsed here, column-wise."""
    try:
        if pa.types.is_timestamp(column.type):
            return pa.array(values, type=pa.string()).cast(column.type)
        return pa.array(values, type=column.type)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        coerced = [_coerce(value, column.type) for value in values]
        bad = sum(
            1 for old, new in zip(values, coerced, strict=True) if old is not None and new is None
        )
        logger.warning(
            "Parquet column %s: %d value(s) of the wrong type stored as null", column.name, bad
        )
        return pa.array(coerced, type=column.type)


def _coerce(value: Any, arrow_type: pa.DataType) -> Any:
    """One value converted to ``arrow_type``, or None when it cannot be."""
    if pa.types.is_timestamp(arrow_type) and isinstance(value, str):
        try:
            return pa.array([value]).cast(arrow_type)[0].as_py()
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return None
    try:
        return pa.scalar(value, type=arrow_type).as_py()
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
        return None


class CsvItemExporter(ScrapyCsvItemExporter):
    """Scrapy's CSV exporter with predictable cells for non-text values.

    Lists and dicts are written as JSON text (``["ai", "ml"]``, ``{"latest_stories": [...]}``),
    booleans as ``true``/``false``, ``None`` as an empty cell; every other value as
    Scrapy writes it. All fields of the item class are columns, empty or not.
    """

    def serialize_field(self, field: Any, name: str, value: Any) -> Any:
        if "serializer" not in field and isinstance(value, list | tuple | dict | bool):
            return json.dumps(value, ensure_ascii=False)
        return super().serialize_field(field, name, value)
