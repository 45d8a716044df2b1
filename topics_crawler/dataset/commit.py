"""Commit a crawl's stage into the dataset, priced by what the run brought: the tables,
JSONL twins, snapshots, manifest and dedupe state move together from one consistent
version to the next, or not at all.

1. **Write** beside the dataset, per table, into ``.<table>.next/`` (:mod:`.write`):

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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
from topics_crawler.dataset.layout import ENTITIES, MANIFEST_NAME, RUNS_NAME, table_names
from topics_crawler.dataset.manifest import (
    SCHEMA_VERSION,
    build_manifest,
    manifest_text,
    stated_languages,
)
from topics_crawler.dataset.parts import describe, part_paths
from topics_crawler.dataset.rows import decode_rows, encode_rows, lines_of
from topics_crawler.dataset.stage import Stage
from topics_crawler.dataset.write import (
    LEGACY_PART,
    Commit,
    MergeResult,
    next_commit_number,
    write_entity,
    write_snapshots,
)
from topics_crawler.output.exporters import DEFAULT_ROW_GROUP_SIZE
from topics_crawler.pipelines.rejects import REJECTS_NAME

#: Re-exported: what other modules and tests use of a commit.
__all__ = [
    "COMMIT_LOG",
    "NEXT_SUFFIX",
    "apply_commit",
    "commit_stage",
    "decode_rows",
    "encode_rows",
    "recover",
    "remove_unfinished",
    "utc_now",
]

logger = logging.getLogger(__name__)


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
