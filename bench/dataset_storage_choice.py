"""The storage choice, measured: this project's parts against a Delta Lake table (``deltalake``).

    pip install --target /tmp/dl-site deltalake   # not a dependency of the project
    PYTHONPATH=/tmp/dl-site .venv/bin/python -m bench.dataset_storage_choice [--rows 1000000]

The same ``--rows`` synthetic stories (:func:`bench.dataset_merge.story`) as a dataset of
this project (:func:`bench.dataset_commit.write_dataset`) and as a Delta table of the
same row count per file; then three runs, each upserted by ``story_id`` into a fresh
copy: 10 new stories; 10 stories changed among the newest; 10 changed spread over the
table. Per run: wall and CPU seconds of the write (this project: ``commit_stage``, with
its manifest, card, JSONL twin and snapshots; Delta: ``TableMerger.execute``, the data
only) and the bytes of the files it added. Readers, offline: which of DuckDB (no
extension download), polars, pandas and ``datasets`` read each format's current rows.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.dataset_commit import copy_dataset, write_dataset
from bench.dataset_merge import story


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_ino, p.stat().st_size) for p in folder.rglob("*") if p.is_file()}


def _added(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> float:
    """MB written: new files whole (a new inode), appended files by what they grew."""
    total = 0
    for path, (inode, size) in after.items():
        old_inode, old_size = before.get(path, (None, 0))
        total += size - old_size if inode == old_inode else size
    return round(total / 1e6, 3)


def ours(base: Path, scratch: Path, indexes: list[int]) -> dict[str, Any]:
    from topics_crawler.dataset.commit import commit_stage
    from topics_crawler.dataset.manifest import read_manifest
    from topics_crawler.dataset.stage import Stage

    folder = scratch / "ours"
    copy_dataset(base, folder)
    stage = Stage(folder / ".staging" / "bench" / "stage.sqlite", commit_interval=60)
    for index in indexes:
        stage.put("story", story(index, 2))
    stage.commit()
    run = {"run_id": "bench", "started_at": "2025-03-03T00:00:00Z", "tags": []}
    run["finished_at"] = run["started_at"]
    before = _files(folder)
    cpu, wall = time.process_time(), time.perf_counter()
    commit_stage(folder, stage, run, read_manifest(folder))
    result = _timing(cpu, wall, _added(before, _files(folder)))
    shutil.rmtree(folder)
    return result


def delta(base: Path, scratch: Path, indexes: list[int]) -> dict[str, Any]:
    from deltalake import DeltaTable

    from topics_crawler.dataset.commit import encode_rows
    from topics_crawler.items import Story
    from topics_crawler.output.exporters import arrow_schema

    folder = scratch / "delta"
    shutil.copytree(base, folder, copy_function=os.link)
    source = encode_rows([story(index, 2) for index in indexes], arrow_schema(Story))
    before = _files(folder)
    cpu, wall = time.process_time(), time.perf_counter()
    (
        DeltaTable(str(folder))
        .merge(source, "t.story_id = s.story_id", source_alias="s", target_alias="t")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    result = _timing(cpu, wall, _added(before, _files(folder)))
    shutil.rmtree(folder)
    return result


def _timing(cpu: float, wall: float, mb: float) -> dict[str, Any]:
    return {
        "cpu_s": round(time.process_time() - cpu, 3),
        "wall_s": round(time.perf_counter() - wall, 3),
        "mb_added": mb,
    }


def write_delta(folder: Path, ours_folder: Path) -> None:
    """The same rows as a Delta table, one file per part of ours."""
    import pyarrow.parquet as pq
    from deltalake import write_deltalake

    for part in sorted((ours_folder / "stories.parquet").glob("*.parquet")):
        write_deltalake(str(folder), pq.ParquetFile(part).read(), mode="append")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    rows = args.rows
    runs = {
        "10 new": list(range(rows, rows + 10)),
        "10 changed, newest": list(range(rows - 10, rows)),
        "10 changed, spread": [i * (rows // 10) for i in range(10)],
    }
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        write_dataset(root / "ours-base", rows)
        write_delta(root / "delta-base", root / "ours-base")
        for name, indexes in runs.items():
            mine = ours(root / "ours-base", root, indexes)
            theirs = delta(root / "delta-base", root, indexes)
            print(json.dumps({"run": name, "parts": mine, "delta": theirs}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
