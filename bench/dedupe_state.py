"""Benchmark of the dedupe state: 1,000,000 story ids through each store.

Run: ``.venv/bin/python -m bench.dedupe_state [--ids N]``. Each case runs in a
fresh interpreter so RSS growth is its own: ``baseline-set`` (a plain Python
``set.add`` of the same keys), ``memory`` and ``sqlite`` (``put`` of every key
with one 16-hex content hash, then ``get`` of every key in another order), and
``pipeline-*`` (whole :class:`DedupePipeline` on story items, a tenth of the ids).
Prints one Markdown table; ratios are against the baseline.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CASES = ("baseline-set", "memory", "sqlite", "pipeline-memory", "pipeline-sqlite")


def story_ids(count: int) -> list[str]:
    """``count`` distinct, randomly ordered 12-hex post ids (deterministic)."""
    return [hashlib.blake2b(str(n).encode(), digest_size=6).hexdigest() for n in range(count)]


def rss_kib() -> int:
    """Resident set size of this process, KiB (Linux ``/proc``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def run_store(kind: str, ids: list[str], folder: Path) -> dict[str, Any]:
    from topics_crawler.pipelines.dedupe_state import MemoryDedupeState, SqliteDedupeState

    keys = [f"story:{story_id}" for story_id in ids]
    shuffled = keys[::-1]
    start_rss = rss_kib()
    started = time.perf_counter()
    if kind == "baseline-set":
        seen: set[str] = set()
        for key in keys:
            seen.add(key)
        put_s, get_started = time.perf_counter() - started, time.perf_counter()
        found = sum(1 for key in shuffled if key in seen)
        get_s, size = time.perf_counter() - get_started, 0
    else:
        path = folder / "dedupe.sqlite"
        store = MemoryDedupeState() if kind == "memory" else SqliteDedupeState(path)
        for n, key in enumerate(keys):
            store.put(key, (f"{n:016x}",))  # a distinct hash string per key, as in a crawl
        put_s, get_started = time.perf_counter() - started, time.perf_counter()
        found = sum(1 for key in shuffled if store.get(key))
        get_s = time.perf_counter() - get_started
        store.close()
        size = sum(f.stat().st_size for f in folder.glob("dedupe.sqlite*"))
    assert found == len(keys), f"{kind}: found {found} of {len(keys)}"
    return {"put_s": put_s, "get_s": get_s, "rss_kib": rss_kib() - start_rss, "file": size}


def run_pipeline(kind: str, ids: list[str], folder: Path) -> dict[str, Any]:
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from topics_crawler.items import Story
    from topics_crawler.pipelines.dedupe import DedupePipeline

    settings = {"DEDUPE_STATE": str(folder / "dedupe.sqlite")} if kind.endswith("sqlite") else {}
    items = [
        Story(story_id=i, url=f"https://medium.com/p/{i}", title="T", claps=7, tags=["ai"])
        for i in ids
    ]
    pipeline = DedupePipeline.from_crawler(get_crawler(Spider, settings))
    start_rss, started = rss_kib(), time.perf_counter()
    for item in items:
        pipeline.process_item(item)
    pipeline.close_spider()
    elapsed = time.perf_counter() - started
    size = sum(f.stat().st_size for f in folder.glob("dedupe.sqlite*"))
    return {"put_s": elapsed, "get_s": 0.0, "rss_kib": rss_kib() - start_rss, "file": size}


def measure(kind: str, count: int) -> dict[str, Any]:
    """One case, in this process."""
    ids = story_ids(count if not kind.startswith("pipeline") else count // 10)
    with tempfile.TemporaryDirectory() as tmp:
        runner = run_pipeline if kind.startswith("pipeline") else run_store
        result = runner(kind, ids, Path(tmp))
    return {"case": kind, "n": len(ids), **result}


def measure_in_child(kind: str, count: int) -> dict[str, Any]:
    """One case in a fresh interpreter (clean RSS)."""
    command = [sys.executable, "-m", "bench.dedupe_state", "--one", kind, "--ids", str(count)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(output))


def table(results: list[dict[str, Any]]) -> str:
    base = results[0]
    base_us = 1e6 * base["put_s"] / base["n"]
    rows = [
        "| case | items | put µs | get µs | put × set | RSS growth MiB | file MiB |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        put_us = 1e6 * r["put_s"] / r["n"]
        get_us = f"{1e6 * r['get_s'] / r['n']:.2f}" if r["get_s"] else "—"
        rows.append(
            f"| {r['case']} | {r['n']:,} | {put_us:.2f} | {get_us} | {put_us / base_us:.1f} "
            f"| {r['rss_kib'] / 1024:.1f} | {r['file'] / 2**20:.1f} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", type=int, default=1_000_000)
    parser.add_argument("--one", choices=CASES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one, args.ids)))
        return
    print(table([measure_in_child(kind, args.ids) for kind in CASES]))


if __name__ == "__main__":
    main()
