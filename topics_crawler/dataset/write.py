"""Step 1 of a commit (:mod:`.commit`): write what the run changes beside the dataset, per
table, into ``.<table>.next/`` (:class:`Commit`): the new and rewritten parts of each entity
table (:func:`write_entity`), the rows appended to its JSONL twin, and the run's sightings
as new parts of the snapshot tables (:func:`write_snapshots`). Nothing inside the tables
changes until the commit is decided and applied.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq

from topics_crawler.dataset.apply import NEXT_SUFFIX, fsync_file, next_path
from topics_crawler.dataset.identity import absorb_stored, without_keys
from topics_crawler.dataset.layout import Entity, table_names
from topics_crawler.dataset.parts import (
    PART_PREFIX,
    Part,
    PartWriter,
    describe,
    part_name,
    part_paths,
    plan_merges,
)
from topics_crawler.dataset.rows import (
    batched,
    conform,
    empty_table,
    encode_or_reject,
    read_part,
    without_nulls,
)
from topics_crawler.dataset.snapshots import stats_schema
from topics_crawler.dataset.stage import Stage
from topics_crawler.items import entity_keys
from topics_crawler.output.exporters import DEFAULT_ROW_GROUP_SIZE, records_of
from topics_crawler.output.exporters import arrow_schema as item_schema
from topics_crawler.pipelines.rejects import reject_record

#: The part a legacy single-file table becomes.
LEGACY_PART = part_name(0, 0)
_JSON_SLICE = 1000
_PART_NUMBER = re.compile(rf"^{PART_PREFIX}(\d+)-")


@dataclass(frozen=True)
class MergeResult:
    """One table after a commit: its rows, and the new and changed entities of the run."""

    rows: int
    added: int
    changed: int = 0
    rejected: int = 0


# --- what one commit writes -------------------------------------------------------------


@dataclass
class TableChange:
    """A table's new and rewritten parts (in ``.<table>.next/``), the parts it drops, and
    its parts once the commit is applied."""

    table: str
    delete: list[str] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)


@dataclass
class Commit:
    """What one commit writes beside the dataset before its decision."""

    dataset_dir: Path
    number: int
    row_group_size: int = DEFAULT_ROW_GROUP_SIZE
    tables: list[TableChange] = field(default_factory=list)
    appends: dict[str, int] = field(default_factory=dict)
    rejects: list[dict[str, Any]] = field(default_factory=list)
    _names: Iterator[int] = field(default_factory=count)

    def next_dir(self, table: str) -> Path:
        return self.dataset_dir / f".{table}{NEXT_SUFFIX}"

    def names(self) -> Iterator[str]:
        while True:
            yield part_name(self.number, next(self._names))

    def append_to(self, target: str) -> Path:
        """The file whose bytes the apply step appends to ``target``."""
        path = self.dataset_dir / target
        self.appends.setdefault(target, path.stat().st_size if path.exists() else 0)
        return next_path(path)


def next_commit_number(dataset_dir: Path) -> int:
    """One more than the highest commit number in any part name."""
    highest = 0
    for table in table_names():
        for path in part_paths(dataset_dir / table):
            match = _PART_NUMBER.match(path.name)
            if match:
                highest = max(highest, int(match.group(1)))
    return highest + 1


# --- step 1: write ----------------------------------------------------------------------


def write_entity(entity: Entity, stage: Stage, commit: Commit) -> MergeResult:
    """Write what the run changes in ``entity``'s table into its ``.next`` directory."""
    table = commit.dataset_dir / entity.parquet_name
    paths = part_paths(table)
    legacy = table.is_file()
    names = {path: LEGACY_PART if legacy else path.name for path in paths}
    schema = item_schema(entity.item_class)
    outdated = [p for p in paths if not pq.read_schema(p).equals(schema)]
    parts = {names[p]: describe(p, names[p]) for p in paths}
    if table.exists() and not stage.count(entity.item_type) and not legacy and not outdated:
        return MergeResult(sum(part.rows for part in parts.values()), 0)
    stage.start_merge(entity.item_type)
    change = TableChange(entity.parquet_name)
    next_dir = commit.next_dir(entity.parquet_name)
    next_dir.mkdir(parents=True, exist_ok=True)
    touched = absorb_stored(entity, stage, paths, names)
    writer = PartWriter(next_dir, schema, commit.names(), commit.row_group_size)
    with commit.append_to(entity.jsonl_name).open("w", encoding="utf-8") as twin:
        if legacy and outdated:  # a schema-1 twin holds nested values as text: written anew
            commit.appends[entity.jsonl_name] = 0
            for record in records_of(conform(read_part(table), schema)):
                twin.write(json.dumps(without_nulls(record), ensure_ascii=False) + "\n")
        result, rejected_keys = _write_staged(entity, stage, commit, writer, twin)
        twin.flush()
        os.fsync(twin.fileno())
    stage.unconfirm(rejected_keys)
    # the parts that held changed rows, without them; a legacy file adopted as a part
    rewrite = {t.path: [k for k in t.changed_keys if k not in rejected_keys] for t in touched}
    for path in paths:
        name = names[path]
        if path in rewrite or path in outdated:
            kept = without_keys(entity, conform(read_part(path), schema), rewrite.get(path, []))
            one = PartWriter(next_dir, schema, iter([name]), commit.row_group_size)
            one.write(kept)
            written = one.close()
            parts.update((part.name, part) for part in written)
            if not written:
                del parts[name]
                change.delete.append(name)
        elif legacy:
            _link_or_copy(path, next_dir / name)
    if not parts and not writer.written:
        writer.write(empty_table(schema), empty_ok=True)  # a new table exists, empty
    for part in writer.close():
        parts[part.name] = part
    change.parts = _merge_small(commit, change, schema, parts)
    commit.tables.append(change)
    rows = sum(part.rows for part in change.parts)
    return MergeResult(rows, result.added, result.changed, result.rejected)


def _write_staged(
    entity: Entity, stage: Stage, commit: Commit, writer: PartWriter, twin: IO[str]
) -> tuple[MergeResult, set[str]]:
    """Write the new and changed rows into new parts and the twin; (counts, the keys of
    the rows no column could hold, rejected into ``rejects.jsonl``)."""
    schema = writer.schema
    added = changed = rejected_rows = 0
    rejected_keys: set[str] = set()
    for chunk in batched(stage.merged_rows(entity.item_type), _JSON_SLICE):
        encoded, rejected = encode_or_reject([record for record, _ in chunk], schema)
        rejected_rows += len(rejected)
        for record, why in rejected:
            rejected_keys.update(entity_keys(entity.item_type, record))
            commit.rejects.append(
                reject_record(entity.item_type, record.get("url"), [f"dataset: {why}"], record)
            )
        writer.write(encoded)
        bad = {id(record) for record, _ in rejected}
        for record, replaces in chunk:
            if id(record) not in bad:
                changed, added = changed + replaces, added + (not replaces)
                twin.write(json.dumps(without_nulls(record), ensure_ascii=False) + "\n")
    return MergeResult(0, added, changed, rejected_rows), rejected_keys


def _link_or_copy(source: Path, target: Path) -> None:
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
        fsync_file(target)


def _merge_small(
    commit: Commit, change: TableChange, schema: pa.Schema, parts: dict[str, Part]
) -> list[Part]:
    """Merge the small parts :func:`plan_merges` picks; the table's parts after that."""
    next_dir, table = commit.next_dir(change.table), commit.dataset_dir / change.table
    for group in plan_merges(parts.values()):
        writer = PartWriter(next_dir, schema, commit.names(), commit.row_group_size)
        for part in group:
            written = next_dir / part.name
            source = written if written.exists() else table / part.name
            writer.write(conform(read_part(source), schema))
        merged = writer.close()
        for part in group:
            (next_dir / part.name).unlink(missing_ok=True)
            change.delete.append(part.name)
            del parts[part.name]
        parts.update((part.name, part) for part in merged)
    return sorted(parts.values(), key=lambda part: part.name)


def write_snapshots(entity: Entity, stage: Stage, commit: Commit) -> int:
    """Append the run's sightings of ``entity`` to its snapshot table; rows written."""
    if entity.stats_name is None:
        return 0
    table = commit.dataset_dir / entity.stats_name
    schema = stats_schema(entity)
    sightings = stage.sightings(entity.item_type)
    first = next(sightings, None)
    if first is None and table.exists():
        return 0
    next_dir = commit.next_dir(entity.stats_name)
    writer = PartWriter(next_dir, schema, commit.names(), commit.row_group_size)
    rows = 0
    if first is None:
        writer.write(empty_table(schema), empty_ok=True)  # a new table exists, empty
    for chunk in batched(_chain(first, sightings) if first else iter(()), _JSON_SLICE):
        # a sighting no column can hold is the same arrival as a row rejected above
        encoded, _ = encode_or_reject(chunk, schema)
        writer.write(encoded)
        rows += encoded.num_rows
    parts = {p.name: describe(p) for p in part_paths(table)}
    for part in writer.close():
        parts[part.name] = part
    change = TableChange(entity.stats_name)
    change.parts = _merge_small(commit, change, schema, parts)
    commit.tables.append(change)
    return rows


def _chain(first: dict[str, Any], rest: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    yield first
    yield from rest
