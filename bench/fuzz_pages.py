"""The full parser fuzz run (``make fuzz``): many seeds × many pages × both corpora.

    .venv/bin/python -m bench.fuzz_pages [--seeds 10] [--pages 10000] [--workers 2]

Each (seed, corpus) run is one task of a process pool (:mod:`tests.fuzz` does the
mutating and checking); a worker runs its tasks one after another, so its peak RSS
after each task shows whether memory stays flat as pages go by. Corpora: ``all``
(own pages + the real captures, when present) and ``own`` (own pages alone). A page
counts as a problem when ``parse_page`` raises, records a parser crash, takes longer
than :data:`tests.fuzz.HANG_SECONDS`, gives neither an item nor an error, or gives
items that do not serialise. Exits 1 when any run found a problem.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

from tests.fuzz import SEED, Corpus, problems, run_fuzz


@dataclass(frozen=True)
class RunFigures:
    """What one (seed, corpus) run found."""

    seed: int
    corpus: Corpus
    pages: int
    problems: list[str]
    slowest: float
    seconds: float
    peak_rss_mib: float


def one_run(seed: int, corpus: Corpus, pages: int) -> RunFigures:
    """Fuzz ``pages`` pages of ``seed`` over ``corpus`` in this worker."""
    started = time.perf_counter()
    report = run_fuzz(pages, seed, corpus)
    found = [f"{p.source} [{'+'.join(p.mutations)}]: {e[:160]}" for p, e in problems(report)]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return RunFigures(
        seed, corpus, report.pages, found, report.slowest, time.perf_counter() - started, rss
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds per corpus")
    parser.add_argument("--pages", type=int, default=10_000, help="pages per seed")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--corpus", choices=("all", "own", "both"), default="both")
    args = parser.parse_args(argv)
    corpora: list[Corpus] = ["all", "own"] if args.corpus == "both" else [args.corpus]
    tasks = [(SEED + 100 + n, corpus) for n in range(args.seeds) for corpus in corpora]
    started = time.perf_counter()
    print("| corpus | seed | pages | problems | slowest page CPU s | run s | worker peak RSS MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|", flush=True)
    runs = []
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        futures = [pool.submit(one_run, seed, corpus, args.pages) for seed, corpus in tasks]
        for future in as_completed(futures):  # each row as soon as its run is done
            run = future.result()
            runs.append(run)
            print(
                f"| {run.corpus} | {run.seed} | {run.pages:,} | {len(run.problems)} "
                f"| {run.slowest:.2f} | {run.seconds:.0f} | {run.peak_rss_mib:.0f} |",
                flush=True,
            )
    total = sum(run.pages for run in runs)
    failures = [line for run in runs for line in run.problems]
    print(
        f"\n{total:,} pages ({len(runs)} runs) in {time.perf_counter() - started:.0f} s: "
        f"{len(failures)} problems; slowest page {max(r.slowest for r in runs):.2f} s; "
        f"worker peak RSS {max(r.peak_rss_mib for r in runs):.0f} MiB"
    )
    for line in failures[:30]:
        print(f"  {line}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
