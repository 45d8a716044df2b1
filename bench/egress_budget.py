"""One rate budget per egress address: Redis workers behind one address stay at its ceiling.

    .venv/bin/python -m bench.egress_budget [--tags 10] [--ceiling 5] [--limit 20]
        [--latency 50] [--rounds 3]

The local site (``--tags`` scale tags, every response after ``--latency`` ms) limits each
client address to ``--limit`` requests/s (``topics_crawler.site.rate_limit.AddressBuckets``: a
token bucket per address, 429 past it). Workers share one real ``redis-server`` and
crawl with the shipped settings but ``RATE_CEILING=--ceiling`` (the site is not
medium.com, whose ceiling is 5/s already), each bound to a loopback address with
``DOWNLOAD_BIND_ADDRESS``. Each round runs, in turn:

* **one** — one worker on 127.0.0.2;
* **shared** — two workers on 127.0.0.2;
* **shared, no budget** — the same with ``RATE_BUDGET_CLASS=`` (each worker paces itself:
  what main did before the budget);
* **two addresses** — one worker on 127.0.0.2, one on 127.0.0.3.

Rate = requests the site saw from an address ÷ the time between its first and last one;
throughput of a run = all its requests ÷ the time between the first and the last. Targets
(issue 21): shared ≤ 1.1 × ceiling; two addresses ≥ 1.8 × one; one ≥ 0.85 × ceiling.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from tests.crawl_helpers import ROOT, crawl_command, crawl_env
from tests.services import RedisServer
from topics_crawler.site.content import default_site
from topics_crawler.site.rate_limit import AddressBuckets
from topics_crawler.site.scale import scale_tag_slugs, with_scale_tags
from topics_crawler.site.server import SiteServer

#: ``(the -a tags argument, one egress address per worker, settings)`` of one run.
Run = tuple[str, list[str], dict[str, Any]]
RUNS = {
    "one": ["127.0.0.2"],
    "shared": ["127.0.0.2", "127.0.0.2"],
    "shared, no budget": ["127.0.0.2", "127.0.0.2"],
    "two addresses": ["127.0.0.2", "127.0.0.3"],
}


def crawl(site: SiteServer, redis_url: str, folder: Path, run: Run) -> dict[str, Any]:
    """The workers of one run, started together; the site's requests per address."""
    tags, addresses, settings = run
    site.clear_log()
    processes = []
    for n, address in enumerate(addresses):
        out = folder / f"worker{n}"
        out.mkdir(parents=True)
        every = {
            "MEDIUM_BASE_URL": site.base_url,
            "REDIS_URL": redis_url,
            "DOWNLOAD_BIND_ADDRESS": address,
            "DISTRIBUTED_STATE_DIR": out / "state",
            "DISTRIBUTED_IDLE_CLOSE": 1,
            "LOG_FILE": out / "crawl.log",
            "HEALTH_ENABLED": False,
            **settings,
        }
        command = crawl_command(tags, settings=every, output=out / "items.jsonl")
        processes.append(subprocess.Popen(command, cwd=ROOT, env=crawl_env()))
    for process in processes:
        if process.wait(timeout=900) != 0:
            raise SystemExit(f"a worker failed; see {folder}")
    by_address: dict[str, list[float]] = defaultdict(list)
    throttled = 0
    for moment, address, status in site.arrivals:
        by_address[address].append(moment)
        throttled += status == 429
    moments = sorted(m for times in by_address.values() for m in times)
    return {
        "rates": {a: rate(times) for a, times in sorted(by_address.items())},
        "requests": len(moments),
        "throughput": rate(moments),
        "throttled": throttled,
    }


def rate(moments: list[float]) -> float:
    """Requests per second between the first and the last of ``moments``."""
    return (len(moments) - 1) / (max(moments) - min(moments)) if len(moments) > 1 else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tags", type=int, default=10)
    parser.add_argument("--ceiling", type=float, default=5.0)
    parser.add_argument("--limit", type=float, default=20.0)
    parser.add_argument("--latency", type=float, default=50.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    tags = "tags=" + ",".join(scale_tag_slugs(args.tags))
    content = with_scale_tags(default_site(), args.tags)
    limiter = AddressBuckets(args.limit)
    base = {"RATE_CEILING": args.ceiling}
    ratios: dict[str, list[float]] = defaultdict(list)
    print("| round | run | requests | rate per address (req/s) | throughput req/s | 429 |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        for round_number in range(1, args.rounds + 1):
            results = {}
            for name, addresses in RUNS.items():
                settings = {**base, "RATE_BUDGET_CLASS": ""} if "no budget" in name else base
                folder = Path(scratch) / f"r{round_number}-{name.replace(' ', '-')}"
                with (
                    SiteServer(content, latency=args.latency / 1000, rate_limit=limiter) as site,
                    RedisServer(folder / "redis") as redis_server,
                ):
                    run = (tags, addresses, settings)
                    row = results[name] = crawl(site, redis_server.url, folder, run)
                per_address = ", ".join(f"{a} {r:.2f}" for a, r in row["rates"].items())
                print(
                    f"| {round_number} | {name} | {row['requests']} | {per_address} |"
                    f" {row['throughput']:.2f} | {row['throttled']} |",
                    flush=True,
                )
            one = results["one"]["throughput"]
            ratios["one ÷ ceiling"].append(one / args.ceiling)
            ratios["shared ÷ ceiling"].append(results["shared"]["throughput"] / args.ceiling)
            ratios["shared, no budget ÷ ceiling"].append(
                results["shared, no budget"]["throughput"] / args.ceiling
            )
            ratios["two addresses ÷ one"].append(results["two addresses"]["throughput"] / one)
    print()
    for name, values in ratios.items():
        shown = ", ".join(f"{v:.2f}" for v in values)
        print(f"{name}: {shown} (median {statistics.median(values):.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
