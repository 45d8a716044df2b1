"""Run ``scrapy crawl`` against the local site, in a new process or in this one, and read
what it produced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.in_process import scrapy_crawl

ROOT = Path(__file__).resolve().parent.parent
#: Item fields that say when a page was read: two crawls of the same site differ in them.
READ_AT = frozenset({"scraped_at", "first_seen", "last_seen"})


def without_read_times(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` without :data:`READ_AT`: what two crawls of the same pages agree on."""
    return {name: value for name, value in item.items() if name not in READ_AT}


@dataclass
class CrawlRun:
    """A finished crawl: exit status, items, final stats and the log text."""

    returncode: int
    items: list[dict[str, Any]]
    stats: dict[str, Any]
    log: str
    out_dir: Path

    def of_type(self, item_type: str) -> list[dict[str, Any]]:
        return [item for item in self.items if item.get("item_type") == item_type]

    def counts(self) -> Counter[str]:
        return Counter(item.get("item_type", "?") for item in self.items)


def crawl_command(
    *spider_args: str,
    settings: dict[str, Any],
    output: Path | None = None,
    spider: str = "topics",
) -> list[str]:
    """``scrapy crawl <spider>`` with ``spider_args`` (``name=value``) as ``-a``, ``settings``
    as ``-s`` and, with ``output``, ``-o output`` (appending, as a resumed crawl must)."""
    command = [sys.executable, "-m", "scrapy", "crawl", spider]
    for argument in spider_args:
        command += ["-a", argument]
    if output is not None:
        command += ["-o", str(output)]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    return command


def crawl_env(**extra: str) -> dict[str, str]:
    """The environment of a crawl subprocess: this one's, unbuffered, plus ``extra``, without
    a ``MEDIUM_BASE_URL`` of its own (the crawl's settings name the site)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **extra}
    env.pop("MEDIUM_BASE_URL", None)
    return env


def start_crawl(command: list[str]) -> subprocess.Popen[bytes]:
    """``command`` started in the project root (to be waited for or killed; its log goes to
    its ``LOG_FILE``, so stderr is dropped)."""
    return subprocess.Popen(command, cwd=ROOT, env=crawl_env(), stderr=subprocess.DEVNULL)


def crawl_arguments(
    base_url: str,
    out_dir: Path,
    *spider_args: str,
    settings: dict[str, Any] | None = None,
    spider: str = "topics",
    append: bool = False,
) -> list[str]:
    """The arguments after ``scrapy``: ``crawl <spider>``, items to ``out_dir/items.jsonl``
    (``-o`` with ``append``, else ``-O``), ``spider_args`` as ``-a``, then the test settings
    (stats and log files in ``out_dir``, ``MEDIUM_BASE_URL=base_url``) and ``settings`` as
    ``-s``."""
    feed = "-o" if append else "-O"
    arguments = ["crawl", spider, feed, str(out_dir / "items.jsonl")]
    for argument in spider_args:
        arguments += ["-a", argument]
    all_settings = {
        "MEDIUM_BASE_URL": base_url,
        "STATS_FILE": str(out_dir / "stats.json"),
        "LOG_FILE": str(out_dir / "crawl.log"),
        "LOG_LEVEL": "INFO",
        "AUTOTHROTTLE_ENABLED": False,
        # The local site has no rate limit: a crawl opens unpaced instead of probing up from
        # 4 requests/s (which doubles a short test crawl's time). The rate-limit tests pass
        # the default back (tests/test_rate_limit_crawl.py).
        "RATE_START": 0,
        "DISTRIBUTED_STATE_DIR": str(out_dir / "distributed-state"),  # used with REDIS_URL
        **(settings or {}),
    }
    for name, value in all_settings.items():
        arguments += ["-s", f"{name}={value}"]
    return arguments


def read_run(returncode: int, out_dir: Path, stderr: str = "") -> CrawlRun:
    """The :class:`CrawlRun` of a finished crawl from what it wrote to ``out_dir``."""
    items_path = out_dir / "items.jsonl"
    stats_path = out_dir / "stats.json"
    log_path = out_dir / "crawl.log"
    items = []
    if items_path.exists():
        items = [json.loads(line) for line in items_path.read_text("utf-8").splitlines() if line]
    stats = json.loads(stats_path.read_text("utf-8")) if stats_path.exists() else {}
    log = log_path.read_text("utf-8") if log_path.exists() else ""
    return CrawlRun(returncode, items, stats, log + stderr, out_dir)


def run_crawl(
    base_url: str,
    out_dir: Path,
    *spider_args: str,
    settings: dict[str, Any] | None = None,
    spider: str = "topics",
    timeout: float = 300,
    append: bool = False,
) -> CrawlRun:
    """``scrapy crawl <spider>`` in a new process, with ``MEDIUM_BASE_URL=base_url``; items
    to ``out_dir``.

    ``spider_args`` are ``name=value`` strings passed as ``-a``. ``append``: ``-o`` (add to
    the items file, as a resumed ``JOBDIR`` crawl must) instead of ``-O``. For a crawl
    whose exit status, kill or process is not the point, :func:`crawl_in_process` gives
    the same :class:`CrawlRun` without starting Python again.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    arguments = crawl_arguments(
        base_url, out_dir, *spider_args, settings=settings, spider=spider, append=append
    )
    process = subprocess.run(
        [sys.executable, "-m", "scrapy", *arguments],
        cwd=ROOT,
        env=crawl_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return read_run(process.returncode, out_dir, process.stderr)


def crawl_in_process(
    base_url: str,
    out_dir: Path,
    *spider_args: str,
    settings: dict[str, Any] | None = None,
    spider: str = "topics",
    timeout: float = 300,
    append: bool = False,
) -> CrawlRun:
    """:func:`run_crawl`, in this process (:func:`tests.in_process.scrapy_crawl`): the same
    command line, settings and :class:`CrawlRun`, its exit status the one the command
    would exit with."""
    out_dir.mkdir(parents=True, exist_ok=True)
    arguments = crawl_arguments(
        base_url, out_dir, *spider_args, settings=settings, spider=spider, append=append
    )
    completed = scrapy_crawl(*arguments[1:], timeout=timeout)  # after `crawl`
    return read_run(completed.returncode, out_dir, completed.stdout + completed.stderr)


def run_workers(
    base_url: str,
    out_dir: Path,
    *spider_args: str,
    settings: dict[str, Any],
    workers: int = 2,
) -> list[CrawlRun]:
    """``workers`` crawls at once (each in ``out_dir/worker<n>``), e.g. on one shared Redis."""
    with ThreadPoolExecutor(workers) as pool:
        return list(
            pool.map(
                lambda n: run_crawl(
                    base_url, out_dir / f"worker{n}", *spider_args, settings=settings
                ),
                range(workers),
            )
        )
