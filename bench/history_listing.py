"""Tag history listing cost: listing requests per story over a 1,000-story archive.

    .venv/bin/python -m bench.history_listing [--archive N] [--history newest|most_read]

Serves the local site with an ``N``-story archive for one tag, runs a real
``scrapy crawl topics -a tags=<tag> -a history=<order> -a follow=stories`` against it
and reads the crawl's own stats: listing requests (``history/requests``: GraphQL
POSTs) per story listed (``history/stories``), with and without the tag page
itself, browser renders (``render/requests``, 0 expected outside tag pages), and
wall time. Target: ≤ 0.055 listing requests per story (Medium answers 20 stories a request
at most, so 1/20 is the floor; the rest is one request per time range).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.crawl_helpers import run_crawl
from topics_crawler.site.content import default_site
from topics_crawler.site.server import SiteServer

TAG = "distributed-training"
TARGET = 0.055


def measure(archive: int, history: str) -> dict[str, Any]:
    """One crawl's figures (stats of the crawl, requests seen by the site)."""
    content = default_site().with_archive(TAG, archive, seed=0)
    with SiteServer(content) as site, tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        run = run_crawl(
            site.base_url, Path(out), f"tags={TAG}", f"history={history}", "follow=stories"
        )
        seconds = time.perf_counter() - started
        posts = site.count("/_/graphql", method="POST")
        tag_gets = site.count(f"/tag/{TAG}", method="GET")
    if run.returncode != 0:
        raise SystemExit(f"crawl failed ({run.returncode}):\n{run.log[-3000:]}")
    stats = run.stats
    listed = stats.get("history/stories", 0)
    listing = stats.get("history/requests", 0)
    return {
        "archive": archive,
        "history": history,
        "stories_listed": listed,
        "story_items": len(run.of_type("story")),
        "listing_requests": listing,
        "posts_seen_by_site": posts,
        "tag_page_requests": tag_gets,
        "requests_per_story": round(listing / listed, 4) if listed else None,
        "with_tag_page_per_story": round((listing + tag_gets) / listed, 4) if listed else None,
        "renders": stats.get("render/requests", 0),
        "failed": {k: v for k, v in stats.items() if k.startswith("history/failed")},
        "seconds": round(seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=int, default=1000, help="archive stories (1000)")
    parser.add_argument("--history", choices=("newest", "most_read"), default="newest")
    args = parser.parse_args(argv)
    figures = measure(args.archive, args.history)
    print(json.dumps(figures, indent=2))
    ratio = figures["requests_per_story"]
    verdict = "meets" if ratio is not None and ratio <= TARGET else "MISSES"
    print(f"{ratio} listing requests per story: {verdict} the target <= {TARGET}")
    return 0 if verdict == "meets" else 1


if __name__ == "__main__":
    raise SystemExit(main())
