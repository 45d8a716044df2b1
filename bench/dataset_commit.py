"""Dataset commits priced by the run, and the readers of a 1,000,000-row dataset.

    .venv/bin/python -m bench.dataset_commit [--big 1000000] [--small 10000] [--skip-readers]

Datasets of synthetic stories (:func:`bench.dataset_merge.story`) are written straight
into parts (a million rows through the crawl's stage would take many minutes); then, in a
fresh interpreter each (imports done before the clock starts, as in a crawl), a stage of
``run`` stories is committed with :func:`topics_crawler.dataset.commit.commit_stage`:

* CPU seconds of the commit (``time.process_time``), wall seconds, and bytes it wrote
  (``wchar`` of ``/proc/self/io``: every ``write`` of the process, Parquet, JSONL,
  SQLite, manifest and card alike);
* cases: 10 new stories into ``--big``; 10,000 into ``--big`` and into ``--small`` (half
  of them already in the dataset with new counts: the most recently added stories, as a
  re-crawl of a tag sees them; and, the worst case, spread over the whole dataset).

Readers: the load time of the ``--big`` dataset's stories in DuckDB, polars, pandas and
Hugging Face ``datasets`` with the card's one-liners (a fresh interpreter each, best of
3), and its size on disk, against the same rows in the layout of schema version 2 (one
Parquet file and a JSONL twin with every field, written by the old commit's format).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHUNK = 65_536


def write_dataset(folder: Path, rows: int) -> None:
    """A dataset of ``rows`` synthetic stories (claps 1), in parts, with twin and manifest."""
    from bench.dataset_merge import story
    from topics_crawler.dataset.commit import encode_rows
    from topics_crawler.dataset.layout import ENTITY_OF, MANIFEST_NAME
    from topics_crawler.dataset.manifest import build_manifest, manifest_text
    from topics_crawler.dataset.parts import PartWriter, part_name
    from topics_crawler.dataset.rows import without_nulls
    from topics_crawler.output.exporters import arrow_schema

    entity = ENTITY_OF["story"]
    schema = arrow_schema(entity.item_class)
    folder.mkdir(parents=True)
    names = (part_name(0, index) for index in range(1000))
    writer = PartWriter(folder / entity.parquet_name, schema, names, 10_000)
    with (folder / entity.jsonl_name).open("w", encoding="utf-8") as twin:
        for first in range(0, rows, CHUNK):
            records = [story(i, 1) for i in range(first, min(rows, first + CHUNK))]
            writer.write(encode_rows(records, schema))
            twin.writelines(json.dumps(without_nulls(r)) + "\n" for r in records)
    parts = writer.close()
    now = "2025-03-02T00:00:00Z"
    run = {"run_id": "seed", "started_at": now, "finished_at": now, "tags": [], "items": {}}
    tables = {entity.parquet_name: [p.__dict__ for p in parts]}
    manifest = build_manifest(None, run, {"story": rows}, tables)
    (folder / MANIFEST_NAME).write_text(manifest_text(manifest), "utf-8")


def write_legacy(folder: Path, rows: int) -> None:
    """The same stories in the layout of schema version 2: one file, a full JSONL twin."""
    import pyarrow.parquet as pq

    from bench.dataset_merge import story
    from topics_crawler.dataset.commit import encode_rows
    from topics_crawler.items import Story, item_from_dict, item_to_dict
    from topics_crawler.output.exporters import arrow_schema

    schema = arrow_schema(Story)
    folder.mkdir(parents=True)
    with (
        pq.ParquetWriter(folder / "stories.parquet", schema, compression="zstd") as writer,
        (folder / "stories.jsonl").open("w", encoding="utf-8") as twin,
    ):
        for first in range(0, rows, 10_000):
            records = [story(i, 1) for i in range(first, min(rows, first + 10_000))]
            writer.write_table(encode_rows(records, schema))
            full = [item_to_dict(item_from_dict(r)) for r in records]  # every field, nulls too
            twin.writelines(json.dumps(r) + "\n" for r in full)


def commit_run(dataset: str, changed: int, step: int, new: int) -> dict[str, Any]:
    """Stage ``changed`` stories already in the dataset (claps 2: a change), every
    ``step``-th one back from its newest, and ``new`` new ones, and commit them: the
    commit's CPU and wall seconds and the bytes it wrote."""
    import pyarrow
    import pyarrow.parquet  # imports before the clock: a crawl has them loaded

    from bench.dataset_merge import story
    from topics_crawler.dataset.commit import commit_stage
    from topics_crawler.dataset.manifest import read_manifest
    from topics_crawler.dataset.stage import Stage

    assert pyarrow
    assert pyarrow.parquet
    folder = Path(dataset)
    manifest = read_manifest(folder) or {}
    total = manifest["counts"]["story"]
    stage = Stage(folder / ".staging" / "bench" / "stage.sqlite", commit_interval=60)
    for n in range(changed):
        stage.put("story", story(total - 1 - n * step, 2))
    for n in range(new):
        stage.put("story", story(total + n, 2))
    stage.commit()
    now = "2025-03-03T00:00:00Z"
    run = {"run_id": "bench", "started_at": now, "finished_at": now, "tags": []}
    written = _wchar()
    cpu, wall = time.process_time(), time.perf_counter()
    results = commit_stage(folder, stage, run, manifest)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {
        "cpu_s": round(cpu, 3),
        "wall_s": round(wall, 3),
        "mb_written": round((_wchar() - written) / 1e6, 3),
        "rows_after": results["story"].rows,
        "changed": results["story"].changed,
        "added": results["story"].added,
        "pandas_imported": "pandas" in sys.modules,
    }


def _wchar() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


def child(code: str, *argv: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"child failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def copy_dataset(base: Path, target: Path) -> None:
    """A copy of a dataset to commit into: the parts as hard links (a commit never writes
    into a part), every other file (twins, state, lock) a copy of its own."""

    def link_parts(source: str, destination: str) -> object:
        if Path(source).parent.name.endswith(".parquet"):
            return os.link(source, destination)
        return shutil.copy2(source, destination)

    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(base, target, copy_function=link_parts)


def commit_case(base: Path, scratch: Path, changed: int, step: int, new: int) -> dict[str, Any]:
    """Commit into a copy of ``base``."""
    target = scratch / f"case-{changed}-{step}-{new}"
    copy_dataset(base, target)
    code = "import json, sys; from bench.dataset_commit import commit_run; "
    code += "print(json.dumps(commit_run(sys.argv[1], *map(int, sys.argv[2:]))))"
    result = child(code, str(target), str(changed), str(step), str(new))
    shutil.rmtree(target)
    return result


STORIES = "stories.parquet/*.parquet"
#: The card's one-liners (``n``: rows loaded); then the same for one file of schema 2.
READERS = {
    "duckdb": "import duckdb; n = duckdb.sql("
    f"\"select * from '{STORIES}'\").fetch_arrow_table().num_rows",
    "polars": f"import polars; n = polars.read_parquet('{STORIES}').height",
    "pandas": "import pandas; n = len(pandas.read_parquet('stories.parquet'))",
    "datasets": "import datasets; n = datasets.load_dataset("
    f"'parquet', data_files='{STORIES}', split='train').num_rows",
}
LEGACY_READERS = {name: line.replace(STORIES, "stories.parquet") for name, line in READERS.items()}


def load_time(folder: Path, line: str, hf_home: Path) -> tuple[float, int]:
    """Best of 3 wall seconds of ``line`` run in ``folder`` (after its imports), and rows."""
    module = line.split(";", 1)[0]
    code = f"{module}; import time, json; t = time.perf_counter(); {line.split(';', 1)[1]}; "
    code += "print(json.dumps({'s': time.perf_counter() - t, 'n': n}))"
    env = {**os.environ, "HF_HOME": str(hf_home), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    best, rows = float("inf"), 0
    for _ in range(3):
        shutil.rmtree(hf_home, ignore_errors=True)  # no cache between tries
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True,
            check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"{line} failed:\n{done.stderr[-2000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        best, rows = min(best, result["s"]), result["n"]
    return round(best, 2), rows


def size_mb(folder: Path, names: list[str]) -> float:
    total = 0
    for name in names:
        path = folder / name
        files = path.rglob("*") if path.is_dir() else [path]
        total += sum(f.stat().st_size for f in files if f.is_file())
    return round(total / 1e6, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--skip-readers", action="store_true")
    args = parser.parse_args(argv)
    big, small = args.big, args.small
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        started = time.perf_counter()
        write_dataset(root / "big", big)
        write_dataset(root / "small", small)
        print(f"datasets written in {time.perf_counter() - started:.0f} s", flush=True)
        spread = max(1, big // 5_000)
        cases = {
            "10 new into big": commit_case(root / "big", root, 0, 1, 10),
            "10,000 (half recent) into big": commit_case(root / "big", root, 5_000, 1, 5_000),
            "10,000 (half spread) into big": commit_case(root / "big", root, 5_000, spread, 5_000),
            "10,000 (half) into small": commit_case(root / "small", root, 5_000, 1, 5_000),
        }
        for name, result in cases.items():
            print(json.dumps({"case": name, **result}), flush=True)
        recent = cases["10,000 (half recent) into big"]["cpu_s"]
        ratio = recent / cases["10,000 (half) into small"]["cpu_s"]
        print(f"10,000 into {big} / into {small} (recent overlap): {ratio:.2f}x CPU")
        if not args.skip_readers:
            write_legacy(root / "legacy", big)
            now = size_mb(root / "big", ["stories.parquet", "stories.jsonl"])
            before = size_mb(root / "legacy", ["stories.parquet", "stories.jsonl"])
            print(json.dumps({"size_mb": now, "size_mb_schema_2": before}))
            (root / "big" / "README.md").write_text(_card(root / "big"), "utf-8")
            for name, line in READERS.items():
                seconds, rows = load_time(root / "big", line, root / "hf")
                old, old_rows = load_time(root / "legacy", LEGACY_READERS[name], root / "hf")
                result = {"reader": name, "s": seconds, "rows": rows}
                print(json.dumps({**result, "schema_2_s": old, "schema_2_rows": old_rows}))
    return 0


def _card(folder: Path) -> str:
    from topics_crawler.dataset.card import render_card
    from topics_crawler.dataset.manifest import read_manifest

    return render_card(read_manifest(folder) or {})


if __name__ == "__main__":
    raise SystemExit(main())
