"""Merge one crawl's staging files into the dataset: one row per entity key, later rows win.

Existing rows are streamed batch by batch (Parquet) or line by line (JSONL) and kept
unless the crawl brought a newer row with the same key; then the crawl's rows follow.
Each merged file is written to a temporary sibling and renamed over the old one, so a
failed merge leaves the dataset as it was. Memory holds the crawl's keys, not its rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from topics_crawler.dataset._atomic import atomic_target
from topics_crawler.dataset.layout import Entity
from topics_crawler.exporters import DEFAULT_COMPRESSION, DEFAULT_ROW_GROUP_SIZE, arrow_schema

KeyValue = tuple[str, Any]


@dataclass(frozen=True)
class MergeResult:
    """Rows of one entity file after a merge, and how many the crawl contributed."""

    rows: int
    added: int


def latest_rows(identities: Iterable[list[KeyValue]]) -> tuple[list[int], set[KeyValue]]:
    """Indices of the rows that are the latest of their entity, and all their keys.

    A row is dropped when a later row shares any (key, value) with it. Rows without
    any key cannot be matched and are all kept.
    """
    seen: set[KeyValue] = set()
    winners: list[int] = []
    for index, keys in reversed(list(enumerate(identities))):
        if keys and any(kv in seen for kv in keys):
            continue
        winners.append(index)
        seen.update(keys)
    winners.reverse()
    return winners, seen


def merge_parquet(
    entity: Entity, staged: Path, target: Path, row_group_size: int = DEFAULT_ROW_GROUP_SIZE
) -> MergeResult:
    """Merge the staged Parquet file of ``entity`` into ``target`` (created if missing)."""
    schema = arrow_schema(entity.item_class)
    new = _conform(pq.read_table(staged), schema)
    key_columns = {key: new.column(key).to_pylist() for key in entity.keys}
    identities = (
        entity.key_values({key: values[i] for key, values in key_columns.items()})
        for i in range(new.num_rows)
    )
    winners, seen = latest_rows(identities)
    new = new.take(pa.array(winners, type=pa.int64()))
    rows = 0
    with (
        atomic_target(target) as temp,
        pq.ParquetWriter(temp, schema, compression=DEFAULT_COMPRESSION) as writer,
    ):
        for batch in _kept_batches(entity, target, schema, seen, row_group_size):
            writer.write_batch(batch, row_group_size=row_group_size)
            rows += batch.num_rows
        writer.write_table(new, row_group_size=row_group_size)
    return MergeResult(rows=rows + new.num_rows, added=new.num_rows)


def _kept_batches(
    entity: Entity, target: Path, schema: pa.Schema, seen: set[KeyValue], batch_size: int
) -> Iterator[pa.RecordBatch]:
    """Batches of the existing file without the rows the crawl supersedes."""
    if not target.exists():
        return
    for batch in pq.ParquetFile(target).iter_batches(batch_size=batch_size):
        table = _conform(pa.Table.from_batches([batch]), schema)
        rows = table.select(list(entity.keys)).to_pylist()
        keep = [not any(kv in seen for kv in entity.key_values(row)) for row in rows]
        kept = table.filter(pa.array(keep, type=pa.bool_()))
        yield from kept.to_batches()


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with exactly the columns of ``schema``: missing ones null, types cast."""
    columns = [
        table.column(f.name).cast(f.type)
        if f.name in table.column_names
        else pa.nulls(table.num_rows, f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def merge_jsonl(entity: Entity, staged: Path, target: Path) -> MergeResult:
    """Merge the staged JSON lines of ``entity`` into ``target``; lines are copied verbatim."""
    winners, seen = latest_rows(entity.key_values(row) for _, row in _json_lines(staged))
    wanted = iter(winners)
    next_winner = next(wanted, None)
    rows = added = 0
    with atomic_target(target) as temp, temp.open("w", encoding="utf-8") as out:
        if target.exists():
            for line, row in _json_lines(target):
                if not any(kv in seen for kv in entity.key_values(row)):
                    out.write(line)
                    rows += 1
        for index, (line, _) in enumerate(_json_lines(staged)):
            if index == next_winner:
                out.write(line)
                added += 1
                next_winner = next(wanted, None)
    return MergeResult(rows=rows + added, added=added)


def _json_lines(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(line with newline, decoded object) for each non-blank line; bad JSON decodes as {}."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                row = {}
            yield (
                (line if line.endswith("\n") else line + "\n"),
                (row if isinstance(row, dict) else {}),
            )
