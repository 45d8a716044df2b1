"""``make demo``: crawl the local site into a bulk dataset, report on it, summarise.

    python -m tests.site.demo --out data/demo

Starts the site in-process on a free port, runs ``scrapy crawl topics`` in a
subprocess (cwd = repo root) with ``MEDIUM_BASE_URL`` pointing at the site and
``DATASET_DIR=<out>`` (``stories.parquet``, ``stories.jsonl``, …,
``manifest.json``), keeps the log in ``<out>/crawl.log``, writes the dataset
report to ``<out>/report/``, then prints the items per type. A previous demo
dataset in ``<out>`` is replaced, so the demo gives the same result every time.
Exits 1 with a clear message when the crawl fails or yields nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tests.site.content import default_site
from tests.site.server import SiteServer
from topics_crawler.cli import main as cli_main
from topics_crawler.dataset.layout import ENTITIES

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TAGS = ("distributed-training", "machine-learning")
LOG_TAIL_LINES = 20


@dataclass
class CrawlRun:
    """Outcome of one demo crawl."""

    command: list[str]
    returncode: int
    dataset_dir: Path
    log_path: Path
    counts: Counter[str]
    bad_lines: int

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def crawl_command(base_url: str, tags: list[str], dataset_dir: Path, spider: str) -> list[str]:
    """The ``scrapy crawl`` command line of the demo."""
    return [
        sys.executable, "-m", "scrapy", "crawl", spider,
        "-a", f"tags={','.join(tags)}",
        "-s", f"MEDIUM_BASE_URL={base_url}",
        "-s", f"DATASET_DIR={dataset_dir}",
    ]  # fmt: skip


def count_dataset(dataset_dir: Path) -> tuple[Counter[str], int]:
    """Items per type in the dataset's JSONL files, and the number of unreadable lines."""
    counts: Counter[str] = Counter()
    bad = 0
    for entity in ENTITIES:
        found, unreadable = count_items(dataset_dir / entity.jsonl_name)
        counts.update(found)
        bad += unreadable
    return counts, bad


def clear_previous_demo(out: Path) -> None:
    """Remove an earlier demo dataset from ``out`` (only a folder holding a manifest)."""
    if (out / "manifest.json").is_file():
        shutil.rmtree(out)


def count_items(items_path: Path) -> tuple[Counter[str], int]:
    """Items per ``item_type`` in a JSON Lines file, and the number of unreadable lines."""
    counts: Counter[str] = Counter()
    bad = 0
    if not items_path.exists():
        return counts, bad
    with items_path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError:
                bad += 1
                continue
            counts[
                str(item.get("item_type", "unknown")) if isinstance(item, dict) else "unknown"
            ] += 1
    return counts, bad


def run_crawl(
    out: Path, tags: list[str], *, spider: str = "topics", timeout: float = 600.0
) -> CrawlRun:
    """Serve the default site and crawl it into ``out``; never raises for a failed crawl."""
    clear_previous_demo(out)
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / "crawl.log"
    with SiteServer(default_site(), access_log=out / "access.log") as site:
        command = crawl_command(site.base_url, tags, out, spider)
        with log_path.open("w", encoding="utf-8") as log:
            try:
                done = subprocess.run(
                    command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, timeout=timeout,
                    check=False,
                )  # fmt: skip
                returncode = done.returncode
            except subprocess.TimeoutExpired:
                log.write(f"\n[demo] crawl killed after {timeout:.0f} s\n")
                returncode = -1
    counts, bad = count_dataset(out)
    return CrawlRun(command, returncode, out, log_path, counts, bad)


def failure(run: CrawlRun) -> str | None:
    """Why the demo failed, or None when it succeeded."""
    if run.returncode == -1:
        return "the crawl timed out"
    if run.returncode != 0:
        return f"the crawl exited with status {run.returncode}"
    if run.bad_lines:
        return f"{run.bad_lines} line(s) of the dataset in {run.dataset_dir} are not JSON"
    if run.total == 0:
        return "the crawl finished but yielded no items"
    return None


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last ``lines`` lines of the crawl log."""
    if not path.exists():
        return ""
    return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def summary(run: CrawlRun) -> str:
    """Short human summary of a successful crawl."""
    rows = [f"  {kind:<12} {count:>5}" for kind, count in sorted(run.counts.items())]
    return "\n".join(
        [
            f"Crawled the local site: {run.total} items",
            *rows,
            f"dataset: {run.dataset_dir} (Parquet + JSONL per type, manifest.json)",
            f"report:  {run.dataset_dir / 'report'}",
            f"log:     {run.log_path}",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("data/demo"), help="output folder")
    parser.add_argument("--tags", default=",".join(DEFAULT_TAGS), help="comma-separated tags")
    parser.add_argument("--spider", default="topics", help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=600.0, help="crawl time limit, seconds")
    args = parser.parse_args(argv)
    tags = [t.strip() for t in args.tags.split(",") if t.strip()]
    run = run_crawl(args.out.resolve(), tags, spider=args.spider, timeout=args.timeout)
    problem = failure(run)
    if problem is not None:
        print(f"demo failed: {problem}", file=sys.stderr)
        print(f"command: {' '.join(run.command)}", file=sys.stderr)
        print(f"last lines of {run.log_path}:\n{log_tail(run.log_path)}", file=sys.stderr)
        return 1
    if cli_main(["report", str(run.dataset_dir), "--out", str(run.dataset_dir / "report")]) != 0:
        print("demo failed: the dataset report could not be written", file=sys.stderr)
        return 1
    print(summary(run))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
