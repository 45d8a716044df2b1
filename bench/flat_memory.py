"""Peak memory and time per story of a tag history crawl into a DATASET_DIR, by crawl size.

    .venv/bin/python -m bench.flat_memory [--sizes 5000,40000] [--follow stories] [--probe]

For each size N the local site (its own process) serves an N-story archive for one tag;
a real ``scrapy crawl topics -a tags=<tag> -a history=newest -a follow=<follow>`` writes
it into a fresh DATASET_DIR. Reported per run: stories in the dataset, wall seconds,
seconds per 1,000 stories, and the crawl process's peak RSS (``getrusage`` of the
reaped child: the crawl alone). Ratios are against the first (smallest) size, measured
in the same invocation. Targets: peak RSS ≤ 1.25×, time per story ≤ 1.3×. ``--probe``
adds :mod:`bench._memory_probe` to each crawl (what is allocated after the 4,000th item and
still alive, logged every 8,000 items to ``crawl-<N>.log``; slows the crawl down, so its
times are not comparable); ``--keep`` keeps the crawl logs and datasets in a folder.
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

import pyarrow.parquet as pq

from bench._crawl_bench import PLAIN_HTTP, ROOT

TAG = "distributed-training"
RSS_TARGET = 1.25
TIME_TARGET = 1.3


def serve(archive: int, folder: Path) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "topics_crawler.site", "--archive", str(archive)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


#: Settings of a ``--probe`` run (bench._memory_probe).
PROBE = {
    "EXTENSIONS": json.dumps({"bench._memory_probe.MemoryProbe": 900}),
    "MEMORY_PROBE_START": 4000,
    "MEMORY_PROBE_EVERY": 8000,
}


def measure(size: int, follow: str, folder: Path, probe: bool = False) -> dict[str, Any]:
    site, base_url = serve(size, folder)
    dataset = folder / f"dataset-{size}"
    settings = {
        **PLAIN_HTTP,
        "MEDIUM_BASE_URL": base_url,
        "DATASET_DIR": dataset,
        "LOG_FILE": folder / f"crawl-{size}.log",
        "CONCURRENT_REQUESTS": 32,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 32,
        "DOWNLOAD_DELAY": 0,
        # The shipped cap (1,000 listing pages of 20: 20,000 stories) would end a bigger run
        # early.
        "HISTORY_MAX_PAGES": size // 20 + 10,
        **(PROBE if probe else {}),
    }
    command = [sys.executable, "-m", "scrapy", "crawl", "topics", "-a", f"tags={TAG}"]
    command += ["-a", "history=newest", "-a", f"follow={follow}"]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    env = {k: v for k, v in os.environ.items() if k != "MEDIUM_BASE_URL"}
    try:
        started = time.perf_counter()
        crawl = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(crawl.pid, 0)
        seconds = time.perf_counter() - started
    finally:
        site.terminate()
        site.wait(10)
    if os.waitstatus_to_exitcode(status) != 0:
        log = (folder / f"crawl-{size}.log").read_text("utf-8")
        raise SystemExit(f"crawl of {size} failed:\n{log[-3000:]}")
    stories = pq.ParquetFile(dataset / "stories.parquet").metadata.num_rows
    if stories < size:
        raise SystemExit(f"crawl of {size} exported only {stories} stories")
    return {
        "size": size,
        "stories": stories,
        "seconds": round(seconds, 1),
        "s_per_1k_stories": round(seconds / stories * 1000, 2),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,40000", help="archive sizes (5000,40000)")
    parser.add_argument("--follow", default="stories", help="-a follow (stories)")
    parser.add_argument("--probe", action="store_true", help="log what grows (slower)")
    parser.add_argument("--keep", type=Path, help="keep the crawl logs in this folder")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        runs = [measure(size, args.follow, folder, args.probe) for size in sizes]
    base = runs[0]
    for run in runs:
        run["rss_ratio"] = round(run["peak_rss_mib"] / base["peak_rss_mib"], 2)
        run["time_per_story_ratio"] = round(run["s_per_1k_stories"] / base["s_per_1k_stories"], 2)
        print(json.dumps(run))
    worst_rss = max(run["rss_ratio"] for run in runs)
    worst_time = max(run["time_per_story_ratio"] for run in runs)
    meets = worst_rss <= RSS_TARGET and worst_time <= TIME_TARGET
    print(
        f"peak RSS up to {worst_rss}x (target <= {RSS_TARGET}), time per story up to "
        f"{worst_time}x (target <= {TIME_TARGET}): {'meets' if meets else 'MISSES'} the targets"
    )
    return 0 if meets else 1


if __name__ == "__main__":
    raise SystemExit(main())
