"""What ``tag_stories`` costs a commit: the demo's history crawled again into its dataset.

    .venv/bin/python -m bench.tag_stories_recrawl [--runs 3]

Serves the demo's site (:func:`topics_crawler.site.demo.demo_site`: the seed tag with a
1,000-story archive) and runs the demo's first crawl (``-a history=newest``) ``--runs`` times
into one new dataset. Per run: the commit's seconds (from the "Closing spider" log line to
"Dataset … updated", millisecond timestamps), the bytes the dataset grew by (``.state`` and
``.staging`` aside) and the rows added and changed per type. ``first_seen``/``last_seen``
are kept to the day: a listing seen again the same day changes no ``tag_stories`` row.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from tests.crawl_helpers import crawl_env
from topics_crawler.site.demo import CRAWLS, FAST_LOCAL, demo_site
from topics_crawler.site.server import SiteServer

ROOT = Path(__file__).resolve().parent.parent
LOG_FORMAT = "%(asctime)s.%(msecs)03d [%(name)s] %(levelname)s: %(message)s"


def dataset_bytes(path: Path) -> int:
    """Bytes of the dataset's files (its dedupe state and stages aside)."""
    if not path.exists():
        return 0
    files = [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files if not {".state", ".staging"} & set(p.parts))


def logged_at(log: str, pattern: str) -> datetime:
    found = re.search(rf"^(\S+ \S+) .*{pattern}", log, re.MULTILINE)
    if found is None:
        raise SystemExit(f"no log line matching {pattern!r}")
    return datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S.%f")


def run(base_url: str, folder: Path, number: int) -> dict[str, object]:
    """One crawl into ``folder/data``: commit seconds, bytes written, rows added/changed."""
    data = folder / "data"
    before = dataset_bytes(data)
    settings = {
        **FAST_LOCAL,
        "MEDIUM_BASE_URL": base_url,
        "DATASET_DIR": str(data),
        "LOG_FILE": str(folder / f"crawl-{number}.log"),
        "LOG_FORMAT": LOG_FORMAT,
        "STATS_FILE": str(folder / f"stats-{number}.json"),
    }
    command = [sys.executable, "-m", "scrapy", "crawl", "topics"]
    for argument in CRAWLS[0].arguments:
        command += ["-a", argument]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    subprocess.run(command, cwd=ROOT, env=crawl_env(), check=True, capture_output=True)
    log = (folder / f"crawl-{number}.log").read_text("utf-8")
    commit = logged_at(log, r"Dataset .* updated") - logged_at(log, "Closing spider")
    stats = json.loads((folder / f"stats-{number}.json").read_text("utf-8"))

    def rows(kind: str) -> dict[str, int]:
        prefix = f"dataset/{kind}/"
        return {
            k.removeprefix(prefix): v
            for k, v in sorted(stats.items())
            if k.startswith(prefix) and v
        }

    return {
        "run": number,
        "commit_s": round(commit.total_seconds(), 2),
        "bytes": dataset_bytes(data) - before,
        "added": rows("added"),
        "changed": rows("changed"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="tag-stories-") as scratch,
        SiteServer(demo_site()) as site,
    ):
        for number in range(1, args.runs + 1):
            print(json.dumps(run(site.base_url, Path(scratch), number)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
