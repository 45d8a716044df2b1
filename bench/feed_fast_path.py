"""Incremental runs: requests per new story with ``-a source=feed`` vs a tag-page re-crawl.

    .venv/bin/python -m bench.feed_fast_path [--new 1 3 10]

For each count ``k`` of new stories: serves the default local site, fills a dataset with
one ``-a follow=stories`` crawl of the tag, publishes ``k`` new stories with the tag,
then runs, on copies of that dataset, (a) the baseline, the same tag crawl again, and
(b) ``-a source=feed``; each run's page requests are counted by the site (robots.txt
aside) and divided by ``k``, and the new stories each run brought into its dataset are
counted (a tag page lists only its own cards, so a re-crawl of it may find none).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from tests.crawl_helpers import run_crawl
from topics_crawler.site.content import default_site
from topics_crawler.site.entities import SiteStory, TopicRef, utc
from topics_crawler.site.server import SiteServer

TAG = "distributed-training"


def page_requests(site: SiteServer) -> int:
    return sum(1 for method, path, _ in site.requests if method == "GET" and path != "/robots.txt")


def crawl(site: SiteServer, out: Path, dataset: Path, *arguments: str) -> int:
    site.clear_log()
    run = run_crawl(site.base_url, out, f"tags={TAG}", "follow=stories", *arguments,
                    settings={"DATASET_DIR": str(dataset)})  # fmt: skip
    if run.returncode != 0:
        raise SystemExit(f"crawl failed ({run.returncode}):\n{run.log[-3000:]}")
    return page_requests(site)


def story_ids(dataset: Path) -> set[str]:
    table = pq.read_table(dataset / "stories.parquet", columns=["story_id"])
    return {value for value in table.column("story_id").to_pylist() if value}


def measure(new: int) -> dict[str, Any]:
    content = default_site()
    with SiteServer(content) as site, tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        crawl(site, root / "seed", root / "seeded")
        fresh = set()
        for n in range(new):
            fresh.add(content.add_story(SiteStory(
                f"fresh-story-{n}", f"Fresh Story {n}", "Published after the last run",
                "varuntej", utc(2025, 12, 1, 8) + timedelta(minutes=n), [f"Paragraph {n}."],
                tags=[TopicRef(TAG, "Distributed Training")],
            )).id)  # fmt: skip
        shutil.copytree(root / "seeded", root / "tags")
        shutil.copytree(root / "seeded", root / "feed")
        tag_requests = crawl(site, root / "run-tags", root / "tags")
        feed_requests = crawl(site, root / "run-feed", root / "feed", "source=feed")
        found = {name: len(fresh & story_ids(root / name)) for name in ("tags", "feed")}
    return {
        "new_stories": new,
        "tag_recrawl_found_new": found["tags"],
        "feed_found_new": found["feed"],
        "tag_recrawl_requests": tag_requests,
        "feed_requests": feed_requests,
        "tag_recrawl_per_new_story": round(tag_requests / new, 2),
        "feed_per_new_story": round(feed_requests / new, 2),
        "ratio_feed_to_tags": round(feed_requests / tag_requests, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--new", type=int, nargs="+", default=[1, 3, 10])
    args = parser.parse_args(argv)
    for new in args.new:
        print(json.dumps(measure(new)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
