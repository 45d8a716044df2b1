"""Commit a crawl's stage into the dataset: rows, JSONL twins, manifest and dedupe state
move together from one consistent version to the next, or not at all.

1. **Write** each entity file anew beside the old one (``.stories.parquet.next`` and
   ``.stories.jsonl.next``): the existing rows are streamed row group by row group; a
   row whose entity the crawl staged is merged into the staged row
   (:func:`~topics_crawler.items.merge.merge_records`: the richer value of each
   field wins, so a card-only sighting never wipes what a page gave), the others are
   copied; the staged rows follow. Memory holds one row group, whatever the sizes.
   The JSONL twin is written from the same rows. Then the new ``manifest.json`` and the
   dataset card ``README.md`` (:mod:`.card`).
   Every file is flushed to disk (``fsync``).
2. **Decide**: ``.commit.json`` names the renames and the stage; it is written
   atomically. A crash before this point leaves the dataset as it was (the ``.next``
   files are removed by the next crawl); from this point on the commit is done.
3. **Apply** (:func:`apply_commit`, also run by the next crawl when a crash interrupted
   it): rename each new file over the old one, copy the stage's confirmed dedupe hashes
   into ``.state/dedupe.sqlite``, remove the stage and ``.commit.json``. Each step can be
   repeated, so an interrupted apply is finished by running it again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq

from topics_crawler.dataset.card import CARD_NAME, render_card
from topics_crawler.dataset.layout import ENTITIES, MANIFEST_NAME, Entity
from topics_crawler.dataset.manifest import SCHEMA_VERSION, build_manifest
from topics_crawler.dataset.stage import Stage, global_state_path
from topics_crawler.output.exporters import (
    DEFAULT_COMPRESSION,
    DEFAULT_ROW_GROUP_SIZE,
    arrow_schema,
    is_json_column,
    is_mapping_column,
    mapping_entries,
    records_of,
)
from topics_crawler.pipelines.dedupe_state import SqliteDedupeState

logger = logging.getLogger(__name__)

COMMIT_LOG = ".commit.json"
_JSON_SLICE = 1000
#: A row group is written once its Arrow buffers reach this size, even short of
#: ``row_group_size`` rows: stories with their bodies are large, and the buffer of a
#: 10,000-row group would be most of a big run's peak memory.
ROW_GROUP_BYTES = 32 * 2**20
NEXT_SUFFIX = ".next"


@dataclass(frozen=True)
class MergeResult:
    """Rows of one entity file after a commit, and how many the crawl contributed."""

    rows: int
    added: int


# --- rows in Parquet and in JSON ----------------------------------------------------------


def encode_rows(records: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """Arrow table of item records (ISO timestamps parsed, nested values typed; JSON text
    in the columns of a schema that marks them so)."""
    json_columns = [f.name for f in schema if is_json_column(f)]
    if json_columns:
        records = [_with_json_text(record, json_columns) for record in records]
    mappings = [f.name for f in schema if is_mapping_column(f)]
    if mappings:
        records = [
            {**r, **{name: mapping_entries(r.get(name)) for name in mappings}} for r in records
        ]
    timestamps = [i for i, f in enumerate(schema) if pa.types.is_timestamp(f.type)]
    build = schema
    for index in timestamps:
        build = build.set(index, schema.field(index).with_type(pa.string()))
    table = pa.Table.from_pylist(records, schema=build)
    for index in timestamps:
        table = table.set_column(
            index, schema.field(index), table.column(index).cast(schema.field(index).type)
        )
    return table.replace_schema_metadata(schema.metadata)


def _with_json_text(record: dict[str, Any], columns: list[str]) -> dict[str, Any]:
    out = dict(record)
    for column in columns:
        if out.get(column) is not None:
            out[column] = json.dumps(out[column], ensure_ascii=False)
    return out


def decode_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Item records of an Arrow table (the inverse of :func:`encode_rows`; reads schema-1
    tables too)."""
    return records_of(table)


def _batched(rows: Iterable[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    iterator = iter(rows)
    while chunk := list(islice(iterator, size)):
        yield chunk


def fsync_file(path: Path) -> None:
    """Flush ``path``'s content to the disk."""
    with path.open("rb") as handle:
        os.fsync(handle.fileno())


def fsync_dir(directory: Path) -> None:
    """Flush ``directory``'s entries (renames, new files) to the disk."""
    handle = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def parquet_rows(path: Path) -> int:
    """Rows of an existing Parquet file, 0 when there is none."""
    return int(pq.ParquetFile(path).metadata.num_rows) if path.exists() else 0


# --- step 1: write ----------------------------------------------------------------------


def next_path(target: Path) -> Path:
    return target.with_name(f".{target.name}{NEXT_SUFFIX}")


def write_entity(
    entity: Entity, stage: Stage, dataset_dir: Path, row_group_size: int, upgrade: bool = False
) -> tuple[MergeResult, list[Path]]:
    """Write the merged files of ``entity`` beside the old ones; the targets to rename.
    ``upgrade`` rewrites the files even when the crawl brought no row (a schema upgrade)."""
    target = dataset_dir / entity.parquet_name
    twin = dataset_dir / entity.jsonl_name
    added = stage.count(entity.item_type)
    if not added and not upgrade and target.exists() and twin.exists():
        return MergeResult(parquet_rows(target), 0), []
    stage.start_merge(entity.item_type)
    schema = arrow_schema(entity.item_class)
    rows = 0
    with (
        pq.ParquetWriter(next_path(target), schema, compression=DEFAULT_COMPRESSION) as writer,
        next_path(twin).open("w", encoding="utf-8") as jsonl,
    ):
        if target.exists():
            for table in _kept_tables(entity, stage, target, schema, row_group_size):
                rows += _write(writer, jsonl, table, None, row_group_size)
        staged = stage.merged_rows(entity.item_type)
        rows += _write_staged(writer, jsonl, staged, schema, row_group_size)
    for written in (target, twin):
        fsync_file(next_path(written))
    return MergeResult(rows, added), [target, twin]


def _kept_tables(
    entity: Entity, stage: Stage, target: Path, schema: pa.Schema, batch_size: int
) -> Iterator[pa.Table]:
    """Row groups of the existing file without the rows the stage supersedes (those are
    merged into their staged rows)."""
    key_names = list(entity.keys)
    for batch in pq.ParquetFile(target).iter_batches(batch_size=batch_size):
        table = pa.Table.from_batches([batch])
        if table.schema.equals(schema):
            table = table.replace_schema_metadata(schema.metadata)
        else:  # another schema (version 1, or columns added since): through the records
            table = encode_rows(records_of(table), schema)
        identities = [entity.key_values(row) for row in table.select(key_names).to_pylist()]
        owners = stage.owners(key for keys in identities for key in keys)
        owner_of = [next((owners[k] for k in keys if k in owners), None) for keys in identities]
        matched = [index for index, owner in enumerate(owner_of) if owner is not None]
        if not matched:
            yield table
            continue
        existing = decode_rows(table.take(pa.array(matched, type=pa.int64())))
        for index, row in zip(matched, existing, strict=True):
            owner = owner_of[index]
            assert owner is not None
            stage.absorb(entity.item_type, owner, row)
        yield table.filter(pa.array([owner is None for owner in owner_of], type=pa.bool_()))


def _write_staged(
    writer: pq.ParquetWriter,
    jsonl: IO[str],
    records: Iterable[dict[str, Any]],
    schema: pa.Schema,
    row_group_size: int,
) -> int:
    """Write staged records: Python objects a 1,000-row slice at a time, Arrow row groups
    of ``row_group_size`` rows or ``ROW_GROUP_BYTES`` (compact buffers), so memory is
    bounded by constants."""
    rows, tables, buffered, buffered_bytes = 0, [], 0, 0
    for chunk in _batched(records, min(_JSON_SLICE, row_group_size)):
        table = encode_rows(chunk, schema)
        tables.append(table)
        jsonl.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in chunk)
        buffered += len(chunk)
        buffered_bytes += table.nbytes
        if buffered >= row_group_size or buffered_bytes >= ROW_GROUP_BYTES:
            writer.write_table(pa.concat_tables(tables))
            rows, tables, buffered, buffered_bytes = rows + buffered, [], 0, 0
    if tables:
        writer.write_table(pa.concat_tables(tables))
        rows += buffered
    return rows


def _write(
    writer: pq.ParquetWriter,
    jsonl: IO[str],
    table: pa.Table,
    records: list[dict[str, Any]] | None,
    row_group_size: int,
) -> int:
    """Write ``table`` and its JSON lines (``records``, else read from the table a slice
    at a time, so a row group of existing rows is never held as Python objects whole)."""
    if not table.num_rows:
        return 0
    writer.write_table(table, row_group_size=row_group_size)
    if records is not None:
        jsonl.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in records)
    else:
        for start in range(0, table.num_rows, _JSON_SLICE):
            rows = records_of(table.slice(start, _JSON_SLICE))
            jsonl.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    return int(table.num_rows)


# --- steps 2 and 3: decide and apply ----------------------------------------------------


def commit_stage(
    dataset_dir: Path,
    stage: Stage,
    run: dict[str, Any],
    previous_manifest: dict[str, Any] | None,
    row_group_size: int = DEFAULT_ROW_GROUP_SIZE,
) -> dict[str, MergeResult]:
    """Commit ``stage`` (closed on return) into the dataset as the run ``run``; a dataset
    of an older schema version is rewritten in this version by the same commit."""
    stage.commit()
    results: dict[str, MergeResult] = {}
    targets: list[Path] = []
    old = (previous_manifest or {}).get("schema_version", SCHEMA_VERSION)
    if old != SCHEMA_VERSION:
        logger.warning(
            "Dataset %s: upgrading from schema version %s to %s (typed timestamps and "
            "nested columns) in this commit",
            dataset_dir,
            old,
            SCHEMA_VERSION,
        )
    for entity in ENTITIES:
        results[entity.item_type], written = write_entity(
            entity, stage, dataset_dir, row_group_size, upgrade=old != SCHEMA_VERSION
        )
        targets += written
    stage.close()
    counts = {item_type: result.rows for item_type, result in results.items()}
    run = {**run, "items": {t: r.added for t, r in results.items()}}
    manifest = dataset_dir / MANIFEST_NAME
    content = build_manifest(previous_manifest, run, counts)
    text = json.dumps(content, indent=2, ensure_ascii=False)
    next_path(manifest).write_text(text + "\n", encoding="utf-8")
    card = dataset_dir / CARD_NAME
    next_path(card).write_text(render_card(content), encoding="utf-8")
    for document in (manifest, card):
        fsync_file(next_path(document))
        targets.append(document)
    log = {
        "run_id": run.get("run_id"),
        "renames": [target.name for target in targets],
        "stage": str(stage.path),
    }
    log_path = dataset_dir / COMMIT_LOG
    next_path(log_path).write_text(json.dumps(log) + "\n", encoding="utf-8")
    fsync_file(next_path(log_path))
    os.replace(next_path(log_path), log_path)  # the commit point
    fsync_dir(dataset_dir)
    apply_commit(dataset_dir)
    return results


def apply_commit(dataset_dir: Path) -> str | None:
    """Finish the commit ``.commit.json`` describes; its run id, None when there is none."""
    log_path = dataset_dir / COMMIT_LOG
    try:
        log = json.loads(log_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    for name in log["renames"]:
        new = next_path(dataset_dir / name)
        if new.exists():
            os.replace(new, dataset_dir / name)
    fsync_dir(dataset_dir)
    stage_path = Path(log["stage"])
    if stage_path.exists():
        record_hashes(stage_path, global_state_path(dataset_dir))
        shutil.rmtree(stage_path.parent)
    with contextlib.suppress(OSError):  # .staging itself, once empty
        stage_path.parent.parent.rmdir()
    log_path.unlink()
    fsync_dir(dataset_dir)
    return str(log.get("run_id"))


def record_hashes(stage_path: Path, state_path: Path) -> int:
    """Copy a stage's confirmed dedupe hashes into the dataset's state; how many keys."""
    source = sqlite3.connect(f"{stage_path.as_uri()}?mode=ro", uri=True)
    state = SqliteDedupeState(state_path)
    copied = 0
    try:
        rows = source.execute("SELECT key, confirmed FROM hashes WHERE confirmed IS NOT NULL")
        for key, hashes in rows:
            state.put(key, hashes.split())
            copied += 1
    finally:
        source.close()
        state.close()
    return copied


def remove_unfinished(dataset_dir: Path) -> list[Path]:
    """Delete the ``.next`` files of a commit that never reached its commit point."""
    removed = []
    for path in dataset_dir.glob(f".*{NEXT_SUFFIX}"):
        path.unlink()
        removed.append(path)
    for path in dataset_dir.glob(".*.tmp-*"):  # left by the schema-1 writer
        path.unlink()
        removed.append(path)
    return removed
