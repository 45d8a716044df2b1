"""Two scrapy-redis workers against one, and Redis memory per million seen URLs.

Run: ``.venv/bin/python -m bench.redis_workers [--tags 90] [--latency 50] [--rounds 2]``.

Throughput: the local site (``--tags`` scale tags, 90: 2,115 pages) answers every
request after ``--latency`` ms; a real ``redis-server`` (no persistence) holds the
shared queue. Each round crawls it with one worker, then with two started together
(same command, same settings as shipped: 8 requests, 4 per host per worker; throttling
off). Pages/min = pages served / the time from the first to the last request the site
saw (start-up and the idle wait before the workers stop are reported apart, as wall).

Memory: ``INFO memory`` ``used_memory`` before and after adding ``--urls`` (1,000,000)
request fingerprints (40 hex characters, what the seen-set stores) to one Redis set, as
the dupefilter does.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from pathlib import Path

import redis

from bench._crawl_bench import crawl_command, scale_site, start_crawl, watch_until_done
from tests.services import RedisServer
from topics_crawler.site.scale import scale_page_count, scale_tag_slugs

BATCH = 10_000


def crawl_rate(
    workers: int, n_tags: int, latency: float, folder: Path, extra: dict[str, object] | None = None
) -> tuple[float, float, int]:
    """(pages/min over the active window, wall seconds, pages) of ``workers`` workers."""
    with RedisServer(folder / "redis") as server, scale_site(n_tags, latency, folder) as site:
        settings = {"REDIS_URL": server.url, "DISTRIBUTED_IDLE_CLOSE": 1, **(extra or {})}
        tags = scale_tag_slugs(n_tags)
        started = time.monotonic()
        processes = [
            start_crawl(crawl_command(site, folder / f"worker{n}", tags, settings))
            for n in range(workers)
        ]
        first, last = watch_until_done(site, processes)
        wall = time.monotonic() - started
        pages = site.fetched()
    return pages / (last - first) * 60, wall, pages


def seen_set_memory(urls: int, folder: Path) -> tuple[int, int]:
    """(bytes used by ``urls`` fingerprints in one set, bytes per fingerprint)."""
    with RedisServer(folder / "redis-memory") as server:
        client = redis.Redis.from_url(server.url)
        before = int(client.info("memory")["used_memory"])
        for start in range(0, urls, BATCH):
            fingerprints = [
                hashlib.sha1(f"https://medium.com/p/{n:012x}".encode()).hexdigest()
                for n in range(start, min(start + BATCH, urls))
            ]
            client.sadd("topics_crawler:seen", *fingerprints)
        after = int(client.info("memory")["used_memory"])
        assert client.scard("topics_crawler:seen") == urls
    return after - before, (after - before) // urls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tags", type=int, default=90)
    parser.add_argument("--latency", type=float, default=50.0, help="ms per response")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--urls", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    pages = scale_page_count(args.tags)
    print(f"site: {pages} pages + robots.txt per worker, {args.latency:.0f} ms per response\n")
    print("| round | workers | pages | active s | pages/min | wall s | speed-up |")
    print("|---|---|---|---|---|---|---|")
    for round_number in range(1, args.rounds + 1):
        single = 0.0
        for workers in (1, 2):
            with tempfile.TemporaryDirectory() as folder:
                rate, wall, fetched = crawl_rate(workers, args.tags, args.latency, Path(folder))
            single = single or rate
            active = fetched / rate * 60
            print(
                f"| {round_number} | {workers} | {fetched:,} | {active:.1f} | {rate:,.0f} "
                f"| {wall:.1f} | {rate / single:.2f}× |"
            )
    with tempfile.TemporaryDirectory() as folder:
        total, per_url = seen_set_memory(args.urls, Path(folder))
    print(
        f"\nRedis seen-set: {args.urls:,} fingerprints = {total / 2**20:.1f} MiB ({per_url} B each)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
