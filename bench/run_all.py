"""Run every benchmark in turn (``make bench``), each in its own interpreter.

    .venv/bin/python -m bench.run_all [NAME ...]

Each benchmark prints its own figures; copy them into BENCHMARKS.md. Names
default to all of :data:`BENCHMARKS` (about 25 minutes on 2 cores); give some
names to run only those. Exits non-zero when any benchmark failed.
"""

from __future__ import annotations

import subprocess
import sys
import time

BENCHMARKS = (
    "story_parse",
    "parquet_export",
    "dedupe_state",
    "history_listing",
    "crawl_throughput",
    "redis_workers",
    "egress_budget",
    "leased_queue",
    "render_vs_plain",
    "browser_memory",
)


def main(argv: list[str] | None = None) -> int:
    names = list(argv if argv is not None else sys.argv[1:]) or list(BENCHMARKS)
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
        return 2
    failed = []
    for name in names:
        print(f"== bench.{name}", flush=True)
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", f"bench.{name}"], check=False)
        print(f"== bench.{name}: exit {done.returncode} in {time.monotonic() - started:.0f} s\n")
        if done.returncode != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
