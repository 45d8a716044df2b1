"""Commit a crawl's stage into the dataset, priced by what the run brought: the tables,
JSONL twins, snapshots, manifest and dedupe state move together from one consistent
version to the next, or not at all.

1. **Write** beside the dataset, per table, into ``.<table>.next/`` (:class:`Commit`):

   * the parts holding a stored row of an entity the crawl staged are found by their
     identity columns alone (:mod:`.identity`); each such row is merged with the staged one
     by the one rule (:func:`~topics_crawler.items.merge.merge_records`, in
     :meth:`~topics_crawler.dataset.stage.Stage.absorb`); a merge that changes nothing
     leaves the stored row where it is;
   * the new and changed rows go into new parts (:mod:`.parts`, built without pandas:
     :mod:`.rows`), and their records, nulls left out, into ``.stories.jsonl.next``
     (appended to the twin);
   * only a part that held a changed row is rewritten (without it, under its own name);
     small parts are merged (:func:`~topics_crawler.dataset.parts.plan_merges`);
   * the run's sightings become new parts of the snapshot tables (:mod:`.snapshots`);
   * a row no column can hold (a count past int64) is rejected into ``rejects.jsonl``,
     never a failed commit; every other row of the run is written.

   Then the new ``manifest.json`` (the parts of every table) and card ``README.md``; the
   run is appended to ``runs.jsonl``. Every file is flushed to disk (``fsync``).
2. **Decide**: ``.commit.json`` names what to move, delete and append; it is written
   atomically. A crash before this point leaves the dataset as it was (the ``.next``
   files are removed before the next crawl looks at the directory); from this point on
   the commit is done.
3. **Apply** (:func:`~topics_crawler.dataset.apply.apply_commit`, also run before the next
   crawl's checks when a crash interrupted it): move the new parts into their tables,
   delete the replaced ones, append the twins (each cut back first to its length before
   the commit, so an interrupted append is redone, never doubled), rename manifest and
   card, copy the
   stage's confirmed dedupe hashes into ``.state/dedupe.sqlite``, remove the stage and
   ``.commit.json``. Each step can be repeated, so an interrupted apply is finished by
   running it again.

A run that brings nothing (no row, no sighting) writes nothing.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import count
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq

from topics_crawler.dataset.apply import (
    COMMIT_LOG,
    NEXT_SUFFIX,
    apply_commit,
    fsync_dir,
    fsync_file,
    next_path,
    recover,
    remove_unfinished,
)
from topics_crawler.dataset.card import CARD_NAME, render_card
from topics_crawler.dataset.identity import absorb_stored, without_keys
from topics_crawler.dataset.layout import ENTITIES, MANIFEST_NAME, RUNS_NAME, Entity, table_names
from topics_crawler.dataset.manifest import (
    SCHEMA_VERSION,
    build_manifest,
    manifest_text,
    stated_languages,
)
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
    decode_rows,
    empty_table,
    encode_or_reject,
    encode_rows,
    lines_of,
    read_part,
    without_nulls,
)
from topics_crawler.dataset.snapshots import stats_schema
from topics_crawler.dataset.stage import Stage
from topics_crawler.items import entity_keys
from topics_crawler.output.exporters import DEFAULT_ROW_GROUP_SIZE, records_of
from topics_crawler.output.exporters import arrow_schema as item_schema
from topics_crawler.pipelines.rejects import REJECTS_NAME, reject_record

#: Re-exported: what other modules and tests use of a commit.
__all__ = [
    "COMMIT_LOG",
    "NEXT_SUFFIX",
    "MergeResult",
    "apply_commit",
    "commit_stage",
    "decode_rows",
    "encode_rows",
    "recover",
    "remove_unfinished",
    "utc_now",
]

logger = logging.getLogger(__name__)

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


# --- steps 2 and 3: decide and apply ----------------------------------------------------


def commit_stage(
    dataset_dir: Path,
    stage: Stage,
    run: dict[str, Any],
    previous_manifest: dict[str, Any] | None,
    row_group_size: int = DEFAULT_ROW_GROUP_SIZE,
) -> dict[str, MergeResult]:
    """Commit ``stage`` (closed on return) into the dataset as the run ``run``; empty
    results when the run brought nothing (then nothing is written)."""
    stage.commit()
    if not stage.total() and not stage.sighting_count():
        stage.close()
        return {}
    old = (previous_manifest or {}).get("schema_version", SCHEMA_VERSION)
    if old != SCHEMA_VERSION:
        logger.warning(
            "Dataset %s: upgrading from schema version %s to %s in this commit",
            dataset_dir,
            old,
            SCHEMA_VERSION,
        )
    commit = Commit(dataset_dir, next_commit_number(dataset_dir), row_group_size)
    results = {entity.item_type: write_entity(entity, stage, commit) for entity in ENTITIES}
    snapshots = {e.item_type: write_snapshots(e, stage, commit) for e in ENTITIES}
    staged_languages = stage.distinct("story", "language")
    languages = stated_languages(dataset_dir, previous_manifest, staged_languages)
    stage.commit()
    stage.close()
    run = {
        **run,
        "items": {t: r.added + r.changed for t, r in results.items()},
        "added": {t: r.added for t, r in results.items()},
        "changed": {t: r.changed for t, r in results.items()},
        "snapshots": snapshots,
    }
    if commit.rejects:
        run["rejected"] = len(commit.rejects)
        with commit.append_to(REJECTS_NAME).open("w", encoding="utf-8") as out:
            out.write(lines_of(commit.rejects).decode("utf-8"))
    with commit.append_to(RUNS_NAME).open("w", encoding="utf-8") as out:
        out.write(json.dumps(run, ensure_ascii=False) + "\n")
    counts = {item_type: result.rows for item_type, result in results.items()}
    tables = _tables_of(dataset_dir, commit)
    content = build_manifest(previous_manifest, run, counts, tables, languages)
    manifest = dataset_dir / MANIFEST_NAME
    next_path(manifest).write_text(manifest_text(content), "utf-8")
    card = dataset_dir / CARD_NAME
    next_path(card).write_text(render_card(content), encoding="utf-8")
    for name in (*commit.appends, MANIFEST_NAME, CARD_NAME):
        fsync_file(next_path(dataset_dir / name))
    for change in commit.tables:
        if commit.next_dir(change.table).exists():
            fsync_dir(commit.next_dir(change.table))
    log = {
        "run_id": run.get("run_id"),
        "tables": [
            {"table": c.table, "next": commit.next_dir(c.table).name, "delete": c.delete}
            for c in commit.tables
        ],
        "appends": commit.appends,
        "renames": [MANIFEST_NAME, CARD_NAME],
        "stage": str(stage.path),
    }
    log_path = dataset_dir / COMMIT_LOG
    next_path(log_path).write_text(json.dumps(log) + "\n", encoding="utf-8")
    fsync_file(next_path(log_path))
    os.replace(next_path(log_path), log_path)  # the commit point
    fsync_dir(dataset_dir)
    apply_commit(dataset_dir)
    return results


def _tables_of(dataset_dir: Path, commit: Commit) -> dict[str, list[dict[str, Any]]]:
    """Every table's parts once the commit is applied (name, rows, bytes)."""
    changed = {change.table: change.parts for change in commit.tables}
    out = {}
    for table in table_names():
        parts = changed.get(table)
        if parts is None:
            paths = part_paths(dataset_dir / table)
            legacy = (dataset_dir / table).is_file()
            parts = [describe(p, LEGACY_PART if legacy else None) for p in paths]
        out[table] = [{"name": p.name, "rows": p.rows, "bytes": p.bytes} for p in parts]
    return out


def utc_now() -> str:
    """Current time as a Timestamp (``YYYY-MM-DDTHH:MM:SSZ``)."""
    return f"{datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}"
