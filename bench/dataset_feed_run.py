"""A scheduled feed run into a big dataset and into a small one: the ratio of their costs.

    .venv/bin/python -m bench.dataset_feed_run [--small 2000] [--big 200000] [--rounds 3]

Serves the default local site, crawls it once into a dataset, then adds synthetic stories
(:func:`bench.dataset_merge.story`, as parts written directly) until the dataset holds
``--small`` and ``--big`` stories; publishes 7 new stories with the tag and runs the same
``scrapy crawl topics -a tags=… -a source=feed`` into a copy of each, ``--rounds`` times,
alternating. Per run: wall seconds of the crawl process, bytes it wrote (``wchar`` of
``/proc/self/io`` at exit: every ``write`` of the process, log included) and whether it
imported pandas; the medians and their ratio big ÷ small (target ≤ 1.5).

Start-up: the seconds from the interpreter's start (when ``logging`` is imported) to the
"Spider opened" log line (imports, settings, add-ons, the dataset's recovery and checks,
the known story ids read), from the same runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench.dataset_commit import copy_dataset
from bench.feed_fast_path import TAG, crawl
from tests.crawl_helpers import crawl_env
from topics_crawler.site.content import default_site
from topics_crawler.site.entities import SiteStory, TopicRef, utc
from topics_crawler.site.server import SiteServer

ROOT = Path(__file__).resolve().parent.parent
NEW_STORIES = 7
#: Runs ``scrapy``; at exit, writes its /proc/self/io and whether pandas was imported.
WRAPPER = """
import atexit, json, sys
out = sys.argv.pop(1)
def report():
    io = dict(line.split(": ") for line in open("/proc/self/io").read().splitlines())
    open(out, "w").write(json.dumps({"wchar": int(io["wchar"]), "pandas": "pandas" in sys.modules}))
atexit.register(report)
sys.argv[0] = "scrapy"
from scrapy.cmdline import execute
execute()
"""


def grow(dataset: Path, stories: int) -> None:
    """Add synthetic stories to a crawled dataset until it holds ``stories``."""
    from bench.dataset_merge import story
    from topics_crawler.dataset.commit import encode_rows
    from topics_crawler.dataset.parts import PartWriter, part_name, table_rows
    from topics_crawler.output.exporters import arrow_schema

    table = dataset / "stories.parquet"
    missing = stories - table_rows(table)
    schema = arrow_schema(__import__("topics_crawler.items", fromlist=["Story"]).Story)
    writer = PartWriter(table, schema, (part_name(0, i) for i in range(1000)), 10_000)
    for first in range(0, missing, 50_000):
        records = [story(10**9 + i, 1) for i in range(first, min(missing, first + 50_000))]
        writer.write(encode_rows(records, schema))
    writer.close()


def feed_run(site: SiteServer, dataset: Path, out: Path) -> dict[str, Any]:
    probe = out / "probe.json"
    out.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-c", WRAPPER, str(probe), "crawl", "topics"]
    command += ["-a", f"tags={TAG}", "-a", "follow=stories", "-a", "source=feed"]
    settings = {
        "MEDIUM_BASE_URL": site.base_url,
        "DATASET_DIR": str(dataset),
        "LOG_FILE": str(out / "crawl.log"),
        "AUTOTHROTTLE_ENABLED": False,
        # milliseconds since logging was imported, first thing of the interpreter's
        "LOG_FORMAT": "%(relativeCreated)d %(name)s %(levelname)s: %(message)s",
    }
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=crawl_env(), capture_output=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"feed run failed:\n{(out / 'crawl.log').read_text()[-3000:]}")
    log = (out / "crawl.log").read_text("utf-8")
    opened = next(line for line in log.splitlines() if "Spider opened" in line)
    last_run = json.loads((dataset / "runs.jsonl").read_text("utf-8").splitlines()[-1])
    return {
        "wall_s": wall,
        "startup_s": int(opened.split()[0]) / 1000,
        "new_stories": last_run["added"]["story"],
        **json.loads(probe.read_text()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=2_000)
    parser.add_argument("--big", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    content = default_site()
    sizes = {"small": args.small, "big": args.big}
    with SiteServer(content) as site, tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        crawl(site, root / "seed", root / "seeded")
        for name, stories in sizes.items():
            shutil.copytree(root / "seeded", root / name)
            grow(root / name, stories)
        for n in range(NEW_STORIES):
            content.add_story(SiteStory(
                f"fresh-story-{n}", f"Fresh Story {n}", "Published after the last run",
                "varuntej", utc(2025, 12, 1, 8) + timedelta(minutes=n), [f"Paragraph {n}."],
                tags=[TopicRef(TAG, "Distributed Training")],
            ))  # fmt: skip
        results: dict[str, list[dict[str, Any]]] = {name: [] for name in sizes}
        for round_ in range(args.rounds):
            for name in sizes:
                copy = root / f"{name}-{round_}"
                copy_dataset(root / name, copy)
                results[name].append(feed_run(site, copy, root / f"run-{name}-{round_}"))
                shutil.rmtree(copy)
    medians = {
        name: {key: statistics.median(r[key] for r in runs) for key in ("wall_s", "wchar")}
        for name, runs in results.items()
    }
    for name, runs in results.items():
        print(json.dumps({"dataset": name, "stories": sizes[name], "runs": runs}))
    wall = medians["big"]["wall_s"] / medians["small"]["wall_s"]
    written = medians["big"]["wchar"] / medians["small"]["wchar"]
    startup = statistics.median(r["startup_s"] for runs in results.values() for r in runs)
    print(json.dumps({"wall_ratio": round(wall, 2), "bytes_ratio": round(written, 2),
                      "median_wall_s": medians, "startup_s": round(startup, 2)}))  # fmt: skip
    return 0 if wall <= 1.5 and written <= 1.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
