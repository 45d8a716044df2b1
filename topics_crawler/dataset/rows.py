"""Rows between item records, Arrow tables and JSON lines, without pandas.

Tables are built from JSON text (pyarrow's JSON reader), not from Python objects:
``pa.array`` and ``Table.from_pylist`` import pandas (a second of start-up, more on a
loaded machine), which a dataset commit does not need. Records are read back column by
column (:func:`~topics_crawler.output.exporters.records_of`).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from topics_crawler.output.exporters import (
    is_json_column,
    is_mapping_column,
    mapping_entries,
    records_of,
)


def _json_ready(records: list[dict[str, Any]], schema: pa.Schema) -> list[dict[str, Any]]:
    """Records as the JSON reader takes them: mappings as entries, JSON columns as text."""
    mappings = [f.name for f in schema if is_mapping_column(f)]
    texts = [f.name for f in schema if is_json_column(f)]
    if not mappings and not texts:
        return records
    out = []
    for record in records:
        row = dict(record)
        for name in mappings:
            row[name] = mapping_entries(row.get(name))
        for name in texts:
            if row.get(name) is not None:
                row[name] = json.dumps(row[name], ensure_ascii=False)
        out.append(row)
    return out


def _read_json(text: bytes, schema: pa.Schema) -> pa.Table:
    options = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    block = max(len(text) + 1, 1 << 20)
    table = pa_json.read_json(
        io.BytesIO(text), read_options=pa_json.ReadOptions(block_size=block), parse_options=options
    )
    return table.select(schema.names).cast(schema).replace_schema_metadata(schema.metadata)


def empty_table(schema: pa.Schema) -> pa.Table:
    """A table of no rows (``Schema.empty_table`` imports pandas)."""
    return pa.Table.from_batches([], schema=schema)


def lines_of(records: Iterable[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def encode_rows(records: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """Arrow table of item records (ISO timestamps parsed, nested values typed); raises
    ``pyarrow.ArrowInvalid`` when a value does not fit its column."""
    if not records:
        return empty_table(schema)
    return _read_json(lines_of(_json_ready(records, schema)), schema)


def encode_or_reject(
    records: list[dict[str, Any]], schema: pa.Schema
) -> tuple[pa.Table, list[tuple[dict[str, Any], str]]]:
    """:func:`encode_rows`, row by row when the batch fails: (table of the rows that fit,
    [(rejected record, why)])."""
    try:
        return encode_rows(records, schema), []
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
        pass
    kept, rejected, tables = [], [], []
    for record in records:
        try:
            tables.append(encode_rows([record], schema))
            kept.append(record)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError) as exc:
            rejected.append((record, str(exc).splitlines()[0][:200]))
    table = pa.concat_tables(tables) if tables else empty_table(schema)
    return table, rejected


def decode_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Item records of an Arrow table (the inverse of :func:`encode_rows`)."""
    return records_of(table)


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` in ``schema`` (a table of an older schema goes through its records)."""
    if table.schema.equals(schema):
        return table.replace_schema_metadata(schema.metadata)
    return encode_rows(records_of(table), schema)


def strings(values: Iterable[str]) -> pa.Array:
    """A string array (through the JSON reader, see above)."""
    schema = pa.schema([("v", pa.string())])
    table = _read_json(lines_of({"v": value} for value in values), schema)
    return table.column("v").combine_chunks()


def without_nulls(record: dict[str, Any]) -> dict[str, Any]:
    """A record as the JSONL twin holds it: fields without a value left out."""
    return {name: value for name, value in record.items() if value is not None}


def batched(rows: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(rows)
    while chunk := list(islice(iterator, size)):
        yield chunk


def read_part(path: Path, columns: list[str] | None = None) -> pa.Table:
    """A part's rows (``ParquetFile.read``: the dataset reader would import pandas)."""
    return pq.ParquetFile(path).read(columns=columns)
