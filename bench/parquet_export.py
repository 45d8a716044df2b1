"""Parquet export benchmark: our Scrapy exporter against plain pyarrow, time and peak memory.

    .venv/bin/python -m bench.parquet_export [--rows N] [--small-rows M]

Every measurement runs in its own subprocess (so peak RSS from ``getrusage`` belongs to
that run alone) and writes the same synthetic stories, generated on the fly:

* ``exporter``: ``ParquetItemExporter.export_item`` per Story, as a Scrapy feed does;
* ``pyarrow``: the minimal direct code, columns filled from the same Story objects,
  one ``pa.array`` per column and one ``write_batch`` per row group;
* ``generate``: only builds the stories (the floor both runs share).

Both writers use zstd and row groups of ``DEFAULT_ROW_GROUP_SIZE`` rows.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from topics_crawler.items import Story
from topics_crawler.output.exporters import (
    DEFAULT_COMPRESSION,
    DEFAULT_ROW_GROUP_SIZE,
    ParquetItemExporter,
    arrow_schema,
)

WORDS = [
    "distributed",
    "training",
    "of",
    "large",
    "models",
    "needs",
    "careful",
    "data",
    "parallel",
    "sharding",
]
MODES = ("generate", "pyarrow", "exporter")


def synthetic_stories(rows: int) -> Iterator[Story]:
    """Deterministic stories with every field filled, about 600 bytes of text each."""
    for i in range(rows):
        text = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(90))
        yield Story(
            story_id=f"{i:012x}",
            url=f"https://medium.com/@writer{i % 5000}/story-{i:012x}",
            title=f"Story number {i} about {WORDS[i % len(WORDS)]}",
            subtitle=None if i % 3 else "A subtitle",
            author_id=f"{i % 5000:012x}",
            author_username=f"writer{i % 5000}",
            author_name=f"Writer {i % 5000}",
            publication_id=None if i % 4 else f"{i % 300:012x}",
            publication_slug=None if i % 4 else f"publication-{i % 300}",
            published_at=f"20{15 + i % 11:02d}-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00Z",
            reading_time_min=1.0 + (i % 200) / 10,
            word_count=200 + i % 3000,
            claps=i % 10_000,
            claps_raw=None if i % 10 else f"{i % 10}K",
            responses=i % 50,
            tags=[WORDS[i % len(WORDS)], WORDS[(i + 3) % len(WORDS)], "machine-learning"],
            is_member_only=bool(i % 2),
            language="en",
            image_url=f"https://miro.medium.com/v2/{i:012x}.png",
            text=text,
            text_is_preview=bool(i % 2),
            scraped_at="2026-11-30T12:00:00Z",
        )


def write_with_exporter(rows: int, path: Path) -> None:
    with path.open("wb") as file:
        exporter = ParquetItemExporter(file, item_class=Story)
        exporter.start_exporting()
        for story in synthetic_stories(rows):
            exporter.export_item(story)
        exporter.finish_exporting()


def write_with_pyarrow(rows: int, path: Path) -> None:
    schema = arrow_schema(Story)
    names = schema.names
    with pq.ParquetWriter(path, schema, compression=DEFAULT_COMPRESSION) as writer:
        columns: list[list[Any]] = [[] for _ in names]
        for count, story in enumerate(synthetic_stories(rows), start=1):
            for column, name in zip(columns, names, strict=True):
                column.append(getattr(story, name))
            if count % DEFAULT_ROW_GROUP_SIZE == 0 or count == rows:
                arrays = [pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)]
                writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=schema))
                columns = [[] for _ in names]


def only_generate(rows: int, path: Path) -> None:
    for _ in synthetic_stories(rows):
        pass


WRITERS = {
    "generate": only_generate,
    "pyarrow": write_with_pyarrow,
    "exporter": write_with_exporter,
}


def worker(mode: str, rows: int, path: Path) -> dict[str, Any]:
    """One measured run in this process: seconds, peak RSS (MiB), file size (MiB)."""
    start = time.perf_counter()
    WRITERS[mode](rows, path)
    seconds = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    size = path.stat().st_size if path.exists() else 0
    if size:
        assert pq.ParquetFile(path).metadata.num_rows == rows
    return {
        "mode": mode,
        "rows": rows,
        "seconds": seconds,
        "peak_rss_mib": peak_kib / 1024,
        "file_mib": size / 2**20,
    }


def measure(mode: str, rows: int, folder: Path) -> dict[str, Any]:
    """Run :func:`worker` in a fresh interpreter and return its figures."""
    command = [
        sys.executable,
        "-m",
        "bench.parquet_export",
        "--worker",
        mode,
        "--rows",
        str(rows),
        "--out",
        str(folder / f"{mode}-{rows}.parquet"),
    ]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return dict(json.loads(output.splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--small-rows", type=int, default=100_000)
    parser.add_argument("--worker", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.rows, args.out)))
        return 0
    results = []
    with tempfile.TemporaryDirectory(prefix="parquet-bench-") as folder:
        for rows in (args.small_rows, args.rows):
            for mode in MODES:
                result = measure(mode, rows, Path(folder))
                results.append(result)
                print(json.dumps(result), file=sys.stderr)
    print("| rows | run | seconds | rows/s | peak RSS MiB | file MiB |")
    print("|---:|---|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['rows']:,} | {r['mode']} | {r['seconds']:.1f} | "
            f"{r['rows'] / r['seconds']:,.0f} | {r['peak_rss_mib']:.0f} | {r['file_mib']:.1f} |"
        )
    by_key = {(r["mode"], r["rows"]): r["seconds"] for r in results}
    for rows in (args.small_rows, args.rows):
        ratio = by_key[("exporter", rows)] / by_key[("pyarrow", rows)]
        print(f"\nexporter / pyarrow at {rows:,} rows: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
