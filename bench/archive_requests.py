"""Issue 13's request costs: requests per archived story (``-a author_stories``) and
responses fetched per request (``-a responses``), counted on the local site.

    .venv/bin/python -m bench.archive_requests [--archive 30 100] [--responses 10 30 100]

Author archives: the default site with two authors given ``k`` more stories each, one paged
by a state cursor (GraphQL), one by a stream cursor (``?format=json``), both 10 per page as
the real captures' cursors say; ``-a follow=authors -a author_stories=N`` (archive cards
kept, story pages not fetched), then the same with ``follow=authors,stories``. For each run:
archive requests and stories from the crawl's stats, page requests from the site's log.

Responses: the default site's two threads (5 rows with replies; 30 plain responses) with
``-a follow=stories -a responses=N``: GraphQL requests and response rows from the stats.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from tests.crawl_helpers import run_crawl
from topics_crawler.site.author_archive import author_archive_site
from topics_crawler.site.content import default_site
from topics_crawler.site.entities import ArchiveSpec
from topics_crawler.site.server import SiteServer

TAG = "distributed-training"
ARCHIVES = {"meetvaddoriya": ArchiveSpec("state", 10), "varuntej": ArchiveSpec("stream", 10)}


def crawl(site: SiteServer, out: Path, *arguments: str) -> dict[str, Any]:
    site.clear_log()
    run = run_crawl(site.base_url, out, f"tags={TAG}", *arguments)
    if run.returncode != 0:
        raise SystemExit(f"crawl failed ({run.returncode}):\n{run.log[-3000:]}")
    return run.stats


def archive(extra: int, limit: int) -> list[dict[str, Any]]:
    rows = []
    with (
        SiteServer(author_archive_site(extra, ARCHIVES)) as site,
        tempfile.TemporaryDirectory() as tmp,
    ):
        for follow in ("authors", "authors,stories"):
            cards = ["cards=stories"] if "stories" not in follow else []  # archive cards kept
            stats = crawl(site, Path(tmp) / follow, f"follow={follow}", *cards,
                          f"author_stories={limit}")  # fmt: skip
            listing, stories = stats["author_archive/requests"], stats["author_archive/stories"]
            pages = sum(1 for method, path, _ in site.requests if path != "/robots.txt")
            rows.append({
                "extra_stories_per_author": extra, "author_stories": limit, "follow": follow,
                "archive_requests": listing, "archived_stories": stories,
                "archive_requests_per_story": round(listing / stories, 3),
                "site_requests": pages,
            })  # fmt: skip
    return rows


def responses(limit: int) -> dict[str, Any]:
    with SiteServer(default_site()) as site, tempfile.TemporaryDirectory() as tmp:
        stats = crawl(site, Path(tmp), "follow=stories", f"responses={limit}")
    requests, rows = stats["responses/requests"], stats["responses/rows"]
    return {
        "responses": limit, "stories_with_responses": stats["responses/stories"],
        "requests": requests, "rows": rows, "rows_per_request": round(rows / requests, 2),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=int, nargs="+", default=[30, 100])
    parser.add_argument("--responses", type=int, nargs="+", default=[10, 30, 100])
    args = parser.parse_args(argv)
    for extra in args.archive:
        for row in archive(extra, limit=extra):
            print(json.dumps(row))
    for limit in args.responses:
        print(json.dumps(responses(limit)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
