"""A tag's history through GraphQL (20 stories a request) beside the day archive (GraphQL
refused): listing requests per story, and crawl time against the ideal at a rate limit.

    .venv/bin/python -m bench.history_paths [--archive 1000] [--dense 60] [--rate 10]
        [--limited-archive 300]

**Listing cost.** For each path, a real ``scrapy crawl topics -a tags=<tag> -a
history=newest -a follow=none`` against the local site with an N-story archive for the tag:
the GraphQL path as Medium answers it (at most 20 stories a request), and the day-archive
path with every ``POST /_/graphql`` refused (403) so the walk stands in. Figures from the
crawl's stats: stories listed, listing requests (GraphQL POSTs, or archive pages: the root,
years, months, days and their further pages), listing requests per story; the site's log
gives the same counts. The archive's density matters to the walk (a day page holds up to
128 stories, and each day, month and year costs a page): the default archive has ~3.4
stories a day (one every 7 hours, the newest yesterday); ``--dense N`` reruns the walk with
N stories a day.

**Time at the rate limit.** The same two paths with ``-a follow=stories`` against a site that
answers ``--rate`` requests a second (a token bucket: 429 + ``Retry-After`` past it) with
50 ms latency, for a ``--limited-archive``-story archive: requests served, the ideal time
(served ÷ rate) and the crawl's own open-to-close time, and their ratio.
"""

from __future__ import annotations

import argparse
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.crawl_helpers import run_crawl
from topics_crawler.site.content import default_site
from topics_crawler.site.day_archive import story_days, tagged
from topics_crawler.site.model import SiteContent
from topics_crawler.site.rate_limit import TokenBucket
from topics_crawler.site.server import SiteServer

TAG = "distributed-training"
#: Only what a benchmark needs to differ from the shipped settings: no health exit code.
SETTINGS: dict[str, Any] = {"HEALTH_ENABLED": False, "HISTORY_MAX_PAGES": 100_000}


def archive(size: int, refused: bool, per_day: float = 24 / 7) -> SiteContent:
    """The default site with ``size`` archive stories, ``per_day`` a day (default: one every 7
    hours, as ``with_archive`` spreads them), the newest yesterday (none in the future, where
    Medium has none); GraphQL ``refused`` or answered."""
    content = default_site().with_archive(TAG, size, seed=0)
    step = timedelta(days=1) / per_day
    newest = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    newest -= timedelta(days=1)
    archived = [s for s in content.stories.values() if s.slug.startswith(f"{TAG}-archive-")]
    for index, story in enumerate(sorted(archived, key=lambda s: s.published_at, reverse=True)):
        story.published_at = newest - step * index
    content.graphql_refused = refused
    return content


def crawl(content: SiteContent, follow: str, **site_options: Any) -> dict[str, Any]:
    """One history crawl's figures."""
    with SiteServer(content, **site_options) as site, tempfile.TemporaryDirectory() as out:
        run = run_crawl(
            site.base_url, Path(out), f"tags={TAG}", "history=newest", f"follow={follow}",
            *(["cards=stories"] if "stories" not in follow else []),
            settings=SETTINGS, timeout=1800,
        )  # fmt: skip
        served = [(m, p, s) for m, p, s in site.requests if s != 429]
        limited = sum(1 for _, _, s in site.requests if s == 429)
    if run.returncode != 0:
        raise SystemExit(f"crawl failed ({run.returncode}):\n{run.log[-3000:]}")
    stats = run.stats
    refused = content.graphql_refused
    stories = stats.get("day_archive/stories" if refused else "history/stories", 0)
    listing = stats.get("day_archive/requests" if refused else "history/requests", 0)
    seen = sum(1 for m, p, _ in served if ("/archive" in p if refused else m == "POST"))
    return {
        "path": "day archive (GraphQL refused)" if refused else "GraphQL, 20 a request",
        "stories": stories,
        "all_stories": len(tagged(content, TAG)),
        "days": len(story_days(content, TAG)),
        "listing": listing,
        "listing_seen_by_site": seen,
        "per_story": listing / stories if stories else None,
        "served": len(served),
        "answered_429": limited,
        "elapsed": float(stats["elapsed_time_seconds"]),
        "story_items": len(run.of_type("story")),
        "failed": {k: v for k, v in stats.items() if "/failed/" in k or k.endswith("fallback")},
    }


def listing_table(size: int, dense: float) -> None:
    print("| path | archive stories | days with stories | stories listed | listing requests |"
          " per story |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|")
    runs = [archive(size, False), archive(size, True), archive(size, True, dense)]
    for content in runs:
        row = crawl(content, "none")
        assert row["listing"] == row["listing_seen_by_site"], row
        assert row["stories"] == row["all_stories"], row
        print(
            f"| {row['path']} | {row['all_stories']:,} | {row['days']:,} | {row['stories']:,} |"
            f" {row['listing']:,} | **{row['per_story']:.4f}** |",
            flush=True,
        )


def limited_table(size: int, rate: float) -> None:
    print("| path | stories | requests served | answered 429 | ideal s | crawl s |"
          " crawl ÷ ideal |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|")
    for refused in (False, True):
        row = crawl(archive(size, refused), "stories", latency=0.05, rate_limit=TokenBucket(rate))
        ideal = row["served"] / rate
        print(
            f"| {row['path']} | {row['story_items']:,} | {row['served']:,} |"
            f" {row['answered_429']} | {ideal:.1f} | {row['elapsed']:.1f} |"
            f" **{row['elapsed'] / ideal:.2f}** |",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=int, default=1000)
    parser.add_argument("--dense", type=float, default=60.0, help="stories a day, 2nd walk")
    parser.add_argument("--rate", type=float, default=10.0, help="requests/s of the limit")
    parser.add_argument("--limited-archive", type=int, default=300)
    args = parser.parse_args(argv)
    print(f"\nListing cost, {args.archive:,}-story archive (follow=none)\n")
    listing_table(args.archive, args.dense)
    if args.limited_archive > 0:
        print(f"\nAt {args.rate:g} requests/s, {args.limited_archive}-story archive"
              " (follow=stories, 50 ms latency)\n")  # fmt: skip
        limited_table(args.limited_archive, args.rate)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
