"""What leases cost: two Redis workers on the leased queue against scrapy-redis's plain one.

Run: ``.venv/bin/python -m bench.leased_queue [--tags 40] [--latency 50] [--rounds 2]``.

Each round crawls the local site (``--tags`` scale tags) with two workers twice, in
turn: with ``SCHEDULER_QUEUE_CLASS=scrapy_redis.queue.PriorityQueue`` (pops are
final: a killed worker's requests are lost; the baseline) and with the shipped
:class:`~topics_crawler.distributed.leases.LeasedPriorityQueue` (pops are leases,
ended by checkpoints). Pages/min over the active window, as in
:mod:`bench.redis_workers`; the ratio is leased / plain within the round.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench.redis_workers import crawl_rate
from topics_crawler.site.scale import scale_page_count

PLAIN = {"SCHEDULER_QUEUE_CLASS": "scrapy_redis.queue.PriorityQueue"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tags", type=int, default=40)
    parser.add_argument("--latency", type=float, default=50.0, help="ms per response")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"site: {scale_page_count(args.tags)} pages, {args.latency:.0f} ms per response\n")
    print("| round | queue | pages | pages/min | wall s | leased / plain |")
    print("|---|---|---|---|---|---|")
    for round_number in range(1, args.rounds + 1):
        plain = 0.0
        for name, extra in (("plain", PLAIN), ("leased", {})):
            with tempfile.TemporaryDirectory() as folder:
                rate, wall, pages = crawl_rate(2, args.tags, args.latency, Path(folder), extra)
            plain = plain or rate
            print(
                f"| {round_number} | {name} | {pages:,} | {rate:,.0f} | {wall:.1f} "
                f"| {rate / plain:.2f}× |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
