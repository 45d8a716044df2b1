"""Single-worker crawl throughput on the plain HTTP path, as a ratio to ``scrapy bench``.

Run: ``.venv/bin/python -m bench.crawl_throughput [--tags 90] [--rounds 2]``. Each round
runs ``scrapy bench`` (Scrapy's own benchmark: a local server of link pages, no parsing,
run outside the project so none of our settings apply) and then one ``scrapy crawl
topics`` of the local site's ``--tags`` scale tags (90: 2,115 pages — tag, story and
author pages, parsed, normalised, validated, deduplicated and exported), both measured
as pages/min = responses / the spider's open-to-close time from their final stats.
Settings: AUTOTHROTTLE off, RENDER_MODE=never, CONCURRENT_REQUESTS(_PER_DOMAIN)=16 like
``scrapy bench``; everything else as shipped. Prints one Markdown table.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from bench._crawl_bench import crawl_command, crawl_stats, scale_site, start_crawl
from topics_crawler.site.scale import scale_page_count, scale_tag_slugs

SAME_AS_SCRAPY_BENCH = {"CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 16}


def scrapy_bench_pages_per_min() -> float:
    """``scrapy bench`` run outside the project; pages/min from its final stats."""
    result = subprocess.run(
        [sys.executable, "-m", "scrapy", "bench"],
        cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    pages = int(re.search(r"'response_received_count': (\d+)", result.stderr).group(1))  # type: ignore[union-attr]
    elapsed = float(re.search(r"'elapsed_time_seconds': ([\d.]+)", result.stderr).group(1))  # type: ignore[union-attr]
    return pages / elapsed * 60


def crawl_pages_per_min(n_tags: int, folder: Path) -> tuple[float, int]:
    with scale_site(n_tags, 0, folder) as site:
        out = folder / "crawl"
        process = start_crawl(
            crawl_command(site, out, scale_tag_slugs(n_tags), SAME_AS_SCRAPY_BENCH)
        )
        process.wait(600)
    stats = crawl_stats(out)
    pages = int(stats["response_received_count"])
    return pages / float(stats["elapsed_time_seconds"]) * 60, pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tags", type=int, default=90)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"site: {args.tags} scale tags, {scale_page_count(args.tags)} pages + robots.txt\n")
    print("| round | scrapy bench pages/min | topics crawl pages | pages/min | ratio |")
    print("|---|---|---|---|---|")
    for round_number in range(1, args.rounds + 1):
        reference = scrapy_bench_pages_per_min()
        with tempfile.TemporaryDirectory() as folder:
            ours, pages = crawl_pages_per_min(args.tags, Path(folder))
        ratio = ours / reference
        print(f"| {round_number} | {reference:,.0f} | {pages:,} | {ours:,.0f} | {ratio:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
