"""Merge one crawl's staging files into the dataset: one row per entity key.

Within the crawl, the latest row of an entity is taken. Existing rows are streamed
batch by batch (Parquet) or line by line (JSONL) and kept unless the crawl brought a
row with the same key; then that pair is merged the way the dedupe pipeline merges
two arrivals (:func:`topics_crawler.pipelines._merge.merge_records`: the richer
record wins, each field keeps its richer value), so a fresh page updates the row but
a run that only saw a listing card cannot wipe what an earlier run read from the
page. The crawl's rows follow the kept ones. Each merged file is written to a
temporary sibling and renamed over the old one, so a failed merge leaves the
dataset as it was. Memory holds the crawl's rows and the rows they supersede.
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
from topics_crawler.pipelines._merge import merge_records

KeyValue = str  # an entity key, see topics_crawler.items.entity_keys


@dataclass(frozen=True)
class MergeResult:
    """Rows of one entity file after a merge, and how many the crawl contributed."""

    rows: int
    added: int


def latest_rows(identities: Iterable[list[KeyValue]]) -> list[int]:
    """Indices of the rows that are the latest of their entity.

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
    return winners


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
    winners = latest_rows(identities)
    new_rows = new.take(pa.array(winners, type=pa.int64())).to_pylist()
    owners = owner_index(entity, new_rows)
    superseded: dict[int, dict[str, Any]] = {}
    rows = 0
    with (
        atomic_target(target) as temp,
        pq.ParquetWriter(temp, schema, compression=DEFAULT_COMPRESSION) as writer,
    ):
        kept = _kept_batches(
            entity,
            target=target,
            schema=schema,
            owners=owners,
            superseded=superseded,
            batch_size=row_group_size,
        )
        for batch in kept:
            writer.write_batch(batch, row_group_size=row_group_size)
            rows += batch.num_rows
        merged = merge_superseded(entity, new_rows, superseded)
        writer.write_table(
            pa.Table.from_pylist(merged, schema=schema), row_group_size=row_group_size
        )
    return MergeResult(rows=rows + len(merged), added=len(merged))


def owner_index(entity: Entity, new_rows: list[dict[str, Any]]) -> dict[KeyValue, int]:
    """(key, value) → index of the crawl's row holding it."""
    return {kv: index for index, row in enumerate(new_rows) for kv in entity.key_values(row)}


def merge_superseded(
    entity: Entity, new_rows: list[dict[str, Any]], superseded: dict[int, dict[str, Any]]
) -> list[dict[str, Any]]:
    """The crawl's rows, each merged with the existing row of the same entity, if any."""
    return [
        merge_records(entity.item_type, superseded[index], row) if index in superseded else row
        for index, row in enumerate(new_rows)
    ]


def _supersede(
    entity: Entity,
    row: dict[str, Any],
    owners: dict[KeyValue, int],
    superseded: dict[int, dict[str, Any]],
) -> bool:
    """True (and ``row`` remembered for its new row) when the crawl brought this entity."""
    owner = next((owners[kv] for kv in entity.key_values(row) if kv in owners), None)
    if owner is None:
        return False
    superseded.setdefault(owner, row)
    return True


def _kept_batches(
    entity: Entity,
    *,
    target: Path,
    schema: pa.Schema,
    owners: dict[KeyValue, int],
    superseded: dict[int, dict[str, Any]],
    batch_size: int,
) -> Iterator[pa.RecordBatch]:
    """Batches of the existing file without the rows the crawl supersedes (those are
    collected in ``superseded`` for the merge)."""
    if not target.exists():
        return
    for batch in pq.ParquetFile(target).iter_batches(batch_size=batch_size):
        table = _conform(pa.Table.from_batches([batch]), schema)
        keys = table.select(list(entity.keys)).to_pylist()
        replaced = [any(kv in owners for kv in entity.key_values(row)) for row in keys]
        if any(replaced):
            for row, is_replaced in zip(table.to_pylist(), replaced, strict=True):
                if is_replaced:
                    _supersede(entity, row, owners, superseded)
        kept = table.filter(pa.array([not r for r in replaced], type=pa.bool_()))
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
    """Merge the staged JSON lines of ``entity`` into ``target``; kept lines are copied
    verbatim, merged ones written anew."""
    staged_rows = list(_json_lines(staged))
    winners = latest_rows(entity.key_values(row) for _, row in staged_rows)
    new_rows = [staged_rows[index] for index in winners]
    owners = owner_index(entity, [row for _, row in new_rows])
    superseded: dict[int, dict[str, Any]] = {}
    rows = 0
    with atomic_target(target) as temp, temp.open("w", encoding="utf-8") as out:
        if target.exists():
            for line, row in _json_lines(target):
                if not _supersede(entity, row, owners, superseded):
                    out.write(line)
                    rows += 1
        merged = merge_superseded(entity, [row for _, row in new_rows], superseded)
        for index, ((line, _), row) in enumerate(zip(new_rows, merged, strict=True)):
            out.write(json.dumps(row, ensure_ascii=False) + "\n" if index in superseded else line)
    return MergeResult(rows=rows + len(new_rows), added=len(new_rows))


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
