"""Crawl time under a server's rate limit, and unlimited throughput against ``scrapy bench``.

    .venv/bin/python -m bench.rate_limit [--archive 200] [--short-archive 62] [--rates 5,10,20]
        [--latency 50]

For each rate, the local site (``--archive`` extra stories on one tag, ``--latency`` ms
per response) answers through a token bucket (``topics_crawler/site/rate_limit.py``: 429 +
``Retry-After`` past the rate, burst one second's worth) and one history crawl runs
with the shipped settings (``-a history=newest -a follow=stories``). Figures: requests
served (``ok``, i.e. not 429) and answered 429, the ideal time ``ok ÷ rate``, the
crawl's own open-to-close time (``elapsed_time_seconds``) and their ratio; targets:
≤ 1.25× ideal and ≤ 5 % of requests answered 429. The same for a short crawl
(``--short-archive`` stories, ~75 requests: there the first contact with the host,
before its rate is known, weighs most). Then, in the same run, ``--rounds``
times in turn, ``scrapy bench`` and the same history crawl of a ``--big-archive`` tag
with no limit and no latency, both as pages/min from their final stats (target: ratio
≥ 1.0; the machine is shared, so each round is printed and the median taken).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.crawl_helpers import run_crawl
from topics_crawler.site.content import default_site
from topics_crawler.site.rate_limit import TokenBucket
from topics_crawler.site.server import SiteServer

TAG = "distributed-training"
ARGS = (f"tags={TAG}", "history=newest", "follow=stories")
#: Only what a benchmark needs to differ from the shipped settings: no health exit code.
SETTINGS = {"HEALTH_ENABLED": False, "LOGSTATS_INTERVAL": 5}


def limited_crawl(archive: int, rate: float, latency_ms: float) -> dict[str, Any]:
    content = default_site().with_archive(TAG, archive, seed=0)
    bucket = TokenBucket(rate)
    with SiteServer(content, latency=latency_ms / 1000, rate_limit=bucket) as site:
        with tempfile.TemporaryDirectory() as out:
            run = run_crawl(site.base_url, Path(out), *ARGS, settings=SETTINGS, timeout=900)
        log = site.requests
    if run.returncode != 0:
        raise SystemExit(f"crawl failed ({run.returncode}):\n{run.log[-3000:]}")
    limited = sum(1 for _, _, status in log if status == 429)
    ok = len(log) - limited
    ideal = ok / rate
    elapsed = float(run.stats["elapsed_time_seconds"])
    learned = {k: v for k, v in run.stats.items() if k.startswith("rate/learned/")}
    return {
        "rate": rate,
        "stories": len(run.of_type("story")),
        "ok": ok,
        "answered_429": limited,
        "share_429": limited / len(log),
        "ideal_s": ideal,
        "elapsed_s": elapsed,
        "ratio": elapsed / ideal,
        "learned": learned,
    }


def scrapy_bench_pages_per_min() -> float:
    """``scrapy bench`` run outside the project; pages/min from its final stats."""
    result = subprocess.run(
        [sys.executable, "-m", "scrapy", "bench"],
        cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    pages = re.search(r"'response_received_count': (\d+)", result.stderr)
    elapsed = re.search(r"'elapsed_time_seconds': ([\d.]+)", result.stderr)
    if pages is None or elapsed is None:
        raise SystemExit("scrapy bench printed no final stats:\n" + result.stderr[-2000:])
    return int(pages.group(1)) / float(elapsed.group(1)) * 60


def unlimited_pages_per_min(archive: int) -> tuple[float, int]:
    content = default_site().with_archive(TAG, archive, seed=0)
    with SiteServer(content) as site, tempfile.TemporaryDirectory() as out:
        run = run_crawl(site.base_url, Path(out), *ARGS, settings=SETTINGS, timeout=900)
    if run.returncode != 0:
        raise SystemExit(f"crawl failed ({run.returncode}):\n{run.log[-3000:]}")
    pages = int(run.stats["response_received_count"])
    return pages / float(run.stats["elapsed_time_seconds"]) * 60, pages


def limited_table(archive: int, rates: list[float], latency_ms: float) -> None:
    print("| limit req/s | stories | requests ok | answered 429 | 429 share | ideal s |"
          " crawl s | crawl ÷ ideal | learned req/s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for rate in rates:
        row = limited_crawl(archive, rate, latency_ms)
        learned = ", ".join(f"{v}" for v in row["learned"].values())
        print(
            f"| {rate:g} | {row['stories']} | {row['ok']} | {row['answered_429']} |"
            f" {row['share_429']:.1%} | {row['ideal_s']:.1f} | {row['elapsed_s']:.1f} |"
            f" {row['ratio']:.2f} | {learned} |",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=int, default=200)
    parser.add_argument("--short-archive", type=int, default=62, help="0: no short crawl")
    parser.add_argument("--rates", default="5,10,20")
    parser.add_argument("--latency", type=float, default=50.0)
    parser.add_argument("--big-archive", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3, help="unlimited vs scrapy bench")
    parser.add_argument("--skip-unlimited", action="store_true")
    args = parser.parse_args(argv)
    for archive in (args.archive, args.short_archive):
        if archive <= 0:
            continue
        print(f"\nhistory crawl of {TAG} (+{archive} archive stories), {args.latency:.0f} ms\n")
        limited_table(archive, [float(r) for r in args.rates.split(",")], args.latency)
    if not args.skip_unlimited:
        print("\n| round | scrapy bench pages/min | history crawl pages | pages/min | ratio |")
        print("|---|---|---|---|---|")
        ratios = []
        for round_number in range(1, args.rounds + 1):
            reference = scrapy_bench_pages_per_min()
            ours, pages = unlimited_pages_per_min(args.big_archive)
            ratios.append(ours / reference)
            print(
                f"| {round_number} | {reference:,.0f} | {pages:,} | {ours:,.0f} |"
                f" {ours / reference:.2f} |",
                flush=True,
            )
        print(f"\nmedian ratio: {statistics.median(ratios):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
