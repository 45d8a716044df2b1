"""``make demo``: the whole product on the local site, one command, no network.

    python -m topics_crawler.site.demo --out data/demo

    topics-crawler demo --out data/demo          # the same, from an installed package

Serves the local site in-process on a free port — the seed tag with a 1,000-story
archive and its JavaScript sections — and runs two crawls, ``python -m topics_crawler
crawl topics`` subprocesses (``scrapy crawl topics`` from any folder, ``MEDIUM_BASE_URL``
pointing at the site), into one bulk dataset at ``<out>`` (``DATASET_DIR``: Parquet +
JSONL per type, ``manifest.json`` with both runs):

1. the seed tag and its whole history over the GraphQL endpoint
   (``-a history=newest``), the tag page through Chromium when it is installed (its
   JavaScript sections; without Chromium one line says how to get them);
2. a second tag, its stories, authors and publications from their own pages.

Then it writes the web report (``<out>/report/report.html``) and prints items per
type and three lines to paste: a DuckDB query, a pandas line, the report's path. Without
the ``report`` extra (matplotlib, DuckDB, pandas) it ends after the dataset, with one line
saying how to get them.
Crawl logs go to ``<out>/crawl-<n>.log``. A previous demo dataset in ``<out>`` is
replaced, so the demo gives the same result every time. Exits 1 with a clear
message when a crawl fails or yields nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import random
import shlex
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from topics_crawler.dataset.layout import ENTITIES
from topics_crawler.report import ReportInputError, build_report
from topics_crawler.site.content import default_site
from topics_crawler.site.model import SiteContent
from topics_crawler.site.server import SiteServer

SEED_TAG = "distributed-training"
SECOND_TAG = "machine-learning"
DEFAULT_TAGS = (SEED_TAG, SECOND_TAG)
ARCHIVE_STORIES = 1000
FILLER_WORDS = (
    "the", "model", "shard", "we", "measured", "a", "gradient", "cluster", "and", "batch",
    "of", "throughput", "to", "latency", "with", "checkpoint", "on", "each", "node", "run",
)  # fmt: skip
SENTENCE_WORDS = 20
LOG_TAIL_LINES = 20
CHROMIUM = os.environ.get("TOPICS_CRAWLER_CHROMIUM", "/usr/bin/chromium")
NO_CHROMIUM = (
    f"JavaScript sections skipped: no Chromium at {CHROMIUM} — `make system-deps` "
    "(Debian: apt-get install chromium) adds them to the next demo"
)
#: What the report and the paste lines import: the ``report`` extra.
REPORT_MODULES = ("matplotlib", "duckdb", "pandas")
REPORT_EXTRA = "pip install 'topics_crawler[report]'"
#: A local site answers at once: no politeness delays, more requests in flight.
FAST_LOCAL = {
    "AUTOTHROTTLE_ENABLED": "False",
    "CONCURRENT_REQUESTS": "16",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "16",
}


@dataclass(frozen=True)
class DemoCrawl:
    """One crawl of the demo: what it shows and its spider arguments."""

    title: str
    arguments: tuple[str, ...]


CRAWLS = (
    DemoCrawl(
        f"{SEED_TAG}: tag page and its {ARCHIVE_STORIES:,}-story history over GraphQL",
        (f"tags={SEED_TAG}", "history=newest", "follow=authors,publications", "cards=stories"),
    ),
    DemoCrawl(f"{SECOND_TAG}: tag page, stories, authors, publications", (f"tags={SECOND_TAG}",)),
)


@dataclass
class CrawlRun:
    """Outcome of the demo crawls (the last one run)."""

    command: list[str]
    returncode: int
    dataset_dir: Path
    log_path: Path
    counts: Counter[str]
    bad_lines: int
    titles: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def demo_site() -> SiteContent:
    """The default site with the seed tag's archive, its stories given lengths and claps
    drawn like real ones (log-normal: most stories 4-10 minutes and a few dozen claps, a
    long tail of long reads and hits), so the report's charts show real distributions."""
    content = default_site().with_archive(SEED_TAG, ARCHIVE_STORIES, seed=0)
    rng = random.Random("topics_crawler demo")
    for story in content.stories.values():
        if "-archive-" not in story.slug:
            continue
        words = max(120, round(rng.lognormvariate(math.log(1400), 0.55)))
        sentences = [
            " ".join(rng.choices(FILLER_WORDS, k=SENTENCE_WORDS)).capitalize() + "."
            for _ in range(words // SENTENCE_WORDS)
        ]
        story.paragraphs = [
            " ".join(sentences[i : i + 5]) for i in range(0, len(sentences), 5)
        ] or story.paragraphs
        story.claps = round(rng.lognormvariate(math.log(60), 1.6))
        story.voters = max(0, story.claps // 7)
        story.responses = round(story.claps / 40 * rng.random())
    return content


def crawl_command(
    base_url: str,
    arguments: list[str],
    dataset_dir: Path,
    spider: str,
    settings: dict[str, str] | None = None,
) -> list[str]:
    """The command line of one demo crawl: ``scrapy crawl`` with the project's settings,
    from any folder (:mod:`topics_crawler.cli.scrapy_command`)."""
    command = [sys.executable, "-m", "topics_crawler", "crawl", spider]
    for argument in arguments:
        command += ["-a", argument]
    for name, value in {**(settings or {}), "MEDIUM_BASE_URL": base_url}.items():
        command += ["-s", f"{name}={value}"]
    return [*command, "-s", f"DATASET_DIR={dataset_dir}"]


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


def run_crawls(
    out: Path,
    crawls: tuple[DemoCrawl, ...] = CRAWLS,
    *,
    spider: str = "topics",
    timeout: float = 600.0,
    browser: bool = True,
) -> CrawlRun:
    """Serve the demo site and run ``crawls`` into ``out``; stops at the first failure."""
    clear_previous_demo(out)
    out.mkdir(parents=True, exist_ok=True)
    settings = {**FAST_LOCAL, **({} if browser else {"RENDER_MODE": "never"})}
    command, returncode, log_path, titles = [], 0, out / "crawl-1.log", []
    with SiteServer(demo_site(), js_sections=True, access_log=out / "access.log") as site:
        for number, crawl in enumerate(crawls, 1):
            print(f"[demo] crawl {number}/{len(crawls)}: {crawl.title}", flush=True)
            command = crawl_command(site.base_url, list(crawl.arguments), out, spider, settings)
            log_path = out / f"crawl-{number}.log"
            returncode = run_one(command, log_path, timeout)
            titles.append(crawl.title)
            if returncode != 0:
                break
    counts, bad = count_dataset(out)
    return CrawlRun(command, returncode, out, log_path, counts, bad, titles)


def run_one(command: list[str], log_path: Path, timeout: float) -> int:
    """Run one crawl with its log in ``log_path``; -1 when it timed out."""
    with log_path.open("w", encoding="utf-8") as log:
        try:
            done = subprocess.run(
                command, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            log.write(f"\n[demo] crawl killed after {timeout:.0f} s\n")
            return -1
    return done.returncode


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


def shown_path(path: Path) -> str:
    """``path`` relative to the working directory when it is under it (paste-friendly)."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def double_quoted(text: str) -> str:
    """``text`` as one bash word in double quotes (readable with SQL's single quotes)."""
    escaped = "".join("\\" + c if c in '\\"$`' else c for c in text)
    return f'"{escaped}"'


def paste_lines(dataset_dir: Path, report: Path) -> list[str]:
    """A DuckDB query, a pandas line and the report's path, runnable as they are."""
    python = shown_path(Path(sys.executable).absolute())
    stories = shown_path(dataset_dir / "stories.parquet")  # a folder of parts
    query = (
        "SELECT author_name, count(*) AS stories, sum(claps) AS claps "
        f"FROM '{stories}/*.parquet' GROUP BY 1 ORDER BY claps DESC NULLS LAST LIMIT 5"
    )
    duckdb_code = f'import duckdb; duckdb.sql("{query}").show()'
    pandas_code = (
        "import pandas as pd; "
        f"print(pd.read_parquet('{stories}')[['reading_time_min', 'claps']].describe())"
    )
    return [
        f"{shlex.quote(python)} -c {double_quoted(duckdb_code)}",
        f"{shlex.quote(python)} -c {double_quoted(pandas_code)}",
        shown_path(report),
    ]


def pyarrow_line(dataset_dir: Path) -> str:
    """A line that reads the stories with pyarrow alone (no extra needed), runnable as is."""
    python = shown_path(Path(sys.executable).absolute())
    stories = shown_path(dataset_dir / "stories.parquet")
    code = (
        "import pyarrow.parquet as pq; "
        f"t = pq.read_table('{stories}'); print(t.num_rows, 'stories:', t.column_names[:8])"
    )
    return f"{shlex.quote(python)} -c {double_quoted(code)}"


def missing_report_modules() -> list[str]:
    """The ``report`` extra's modules this Python lacks (none with ``[report]`` installed)."""
    return [name for name in REPORT_MODULES if importlib.util.find_spec(name) is None]


def summary(run: CrawlRun, report: Path | None) -> str:
    """Short human summary of a successful demo, ending with the three paste lines; without
    a report (no ``report`` extra), a pyarrow line and how to get the rest."""
    rows = [f"  {kind:<12} {count:>5}" for kind, count in sorted(run.counts.items())]
    if report is not None:
        ending = [
            "Try (DuckDB, pandas, the report in a browser):",
            *paste_lines(run.dataset_dir, report),
        ]
    else:
        ending = [
            "Try (pyarrow):",
            pyarrow_line(run.dataset_dir),
            f"The report, DuckDB and pandas: {REPORT_EXTRA} (then run the demo again)",
        ]
    return "\n".join(
        [
            f"Crawled the local site in {len(run.titles)} runs: {run.total} items",
            *rows,
            f"dataset: {shown_path(run.dataset_dir)} (Parquet + JSONL per type, manifest.json)",
            f"logs:    {shown_path(run.dataset_dir)}/crawl-*.log",
            "",
            *ending,
        ]
    )


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Run the demo; ``prog`` names the command in its help."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("data/demo"), help="output folder")
    parser.add_argument("--spider", default="topics", help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=600.0, help="crawl time limit, seconds")
    args = parser.parse_args(argv)
    browser = Path(CHROMIUM).exists()
    if not browser:
        print(NO_CHROMIUM, flush=True)
    run = run_crawls(args.out.absolute(), spider=args.spider, timeout=args.timeout, browser=browser)
    problem = failure(run)
    if problem is not None:
        print(f"demo failed: {problem}", file=sys.stderr)
        print(f"command: {' '.join(run.command)}", file=sys.stderr)
        print(f"last lines of {run.log_path}:\n{log_tail(run.log_path)}", file=sys.stderr)
        return 1
    if missing_report_modules():
        print(summary(run, None))
        return 0
    try:
        report = build_report(run.dataset_dir, run.dataset_dir / "report", "html")
    except ReportInputError as exc:
        print(f"demo failed: the dataset report could not be written: {exc}", file=sys.stderr)
        return 1
    print(summary(run, report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
