"""Dataset commit cost: a 10,000-row crawl merged into datasets of 100,000 and 1,000,000 rows.

    .venv/bin/python -m bench.dataset_merge [--rows 100000,1000000] [--run 10000]

For each dataset size a fresh interpreter writes a dataset of that many stories (a commit
of a synthetic stage), then another fresh interpreter stages a run of ``--run`` stories
(half of them already in the dataset, with new values; half new) and commits it:
seconds and the peak RSS of that merging process alone (``getrusage`` of the child).
The merge streams the dataset row group by row group, so the target is a peak RSS that
does not grow with the dataset (ratio to the smallest size ≤ 1.25).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RSS_TARGET = 1.25


def story(index: int, claps: int) -> dict[str, Any]:
    post_id = f"{index:012x}"
    return {
        "item_type": "story",
        "story_id": post_id,
        "url": f"https://medium.com/@writer{index % 5000}/story-{post_id}",
        "title": f"Story number {index}",
        "author_username": f"writer{index % 5000}",
        "published_at": "2025-03-01T10:00:00Z",
        "reading_time_min": 4.5,
        "claps": claps,
        "tags": ["distributed-training", "machine-learning"],
        "text": f"Paragraph one of story {index}.\n\nParagraph two, a little longer than one.",
        "text_is_preview": False,
        "scraped_at": "2025-03-02T00:00:00Z",
    }


def commit_rows(dataset: Path, first: int, count: int, claps: int) -> None:
    """Stage ``count`` stories from index ``first`` and commit them into ``dataset``."""
    from topics_crawler.dataset.commit import commit_stage
    from topics_crawler.dataset.manifest import read_manifest
    from topics_crawler.dataset.stage import Stage

    dataset.mkdir(parents=True, exist_ok=True)
    stage = Stage(dataset / ".staging" / f"bench-{first}" / "stage.sqlite", commit_interval=60)
    for index in range(first, first + count):
        stage.put("story", story(index, claps))
    now = "2025-03-02T00:00:00Z"
    run = {"run_id": f"bench-{first}", "started_at": now, "finished_at": now, "tags": []}
    commit_stage(dataset, stage, run, read_manifest(dataset))


def child(argv: list[str]) -> dict[str, Any]:
    """Run ``commit_rows`` in a fresh interpreter; its seconds and peak RSS."""
    code = "import sys; from bench.dataset_merge import commit_rows; from pathlib import Path; "
    code += "commit_rows(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))"
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", code, *argv], cwd=ROOT)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"commit_rows {argv} failed")
    return {
        "seconds": round(time.perf_counter() - started, 1),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
    }


def measure(rows: int, run: int, folder: Path) -> dict[str, Any]:
    dataset = folder / f"dataset-{rows}"
    made = child([str(dataset), "0", str(rows), "1"])
    merged = child([str(dataset), str(rows - run // 2), str(run), "2"])  # half overlap
    return {
        "dataset_rows": rows,
        "run_rows": run,
        "write_dataset_s": made["seconds"],
        "merge_s": merged["seconds"],
        "merge_peak_rss_mib": merged["peak_rss_mib"],
        "parquet_mib": round((dataset / "stories.parquet").stat().st_size / 2**20, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="100000,1000000", help="dataset sizes")
    parser.add_argument("--run", type=int, default=10_000, help="rows the crawl brings")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        results = [measure(int(n), args.run, Path(folder)) for n in args.rows.split(",")]
    base = results[0]
    for result in results:
        result["rss_ratio"] = round(result["merge_peak_rss_mib"] / base["merge_peak_rss_mib"], 2)
        print(json.dumps(result))
    worst = max(result["rss_ratio"] for result in results)
    verdict = "meets" if worst <= RSS_TARGET else "MISSES"
    print(f"merge peak RSS up to {worst}x the smallest dataset's: {verdict} the target")
    return 0 if verdict == "meets" else 1


if __name__ == "__main__":
    raise SystemExit(main())
