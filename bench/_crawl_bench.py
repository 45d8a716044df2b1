"""Shared by the crawl benchmarks: the scale site as its own process, crawls as subprocesses.

The site (``python -m topics_crawler.site --scale-tags N``) runs in its own process, as the
crawlers do, so the crawler under test never shares an interpreter with the server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: Crawl settings of every benchmark run: the plain HTTP path, no throttling.
PLAIN_HTTP = {"AUTOTHROTTLE_ENABLED": False, "RENDER_MODE": "never", "LOG_LEVEL": "INFO"}


@dataclass
class Site:
    base_url: str
    access_log: Path

    def fetched(self) -> int:
        """Requests served so far (robots.txt included)."""
        if not self.access_log.exists():
            return 0
        with self.access_log.open("rb") as log:
            return sum(1 for _ in log)


@contextmanager
def scale_site(n_tags: int, latency_ms: float, folder: Path) -> Iterator[Site]:
    """``python -m topics_crawler.site --scale-tags n_tags`` on a free port; stopped on exit."""
    access_log = folder / "access.log"
    command = [sys.executable, "-m", "topics_crawler.site", "--scale-tags", str(n_tags)]
    command += ["--latency", str(latency_ms), "--access-log", str(access_log)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield Site(process.stdout.readline().strip(), access_log)
    finally:
        process.terminate()
        process.wait(10)


def crawl_command(site: Site, out: Path, tags: list[str], settings: dict[str, Any]) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "scrapy", "crawl", "topics", "-a", "tags=" + ",".join(tags)]
    command += ["-O", str(out / "items.jsonl")]
    every = {
        **PLAIN_HTTP,
        "MEDIUM_BASE_URL": site.base_url,
        "STATS_FILE": out / "stats.json",
        "LOG_FILE": out / "crawl.log",
        **settings,
    }
    for name, value in every.items():
        command += ["-s", f"{name}={value}"]
    return command


def start_crawl(command: list[str]) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("MEDIUM_BASE_URL", None)
    return subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)


def crawl_stats(out: Path) -> dict[str, Any]:
    return dict(json.loads((out / "stats.json").read_text("utf-8")))


def seconds_between(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def watch_until_done(site: Site, processes: list[subprocess.Popen[bytes]]) -> tuple[float, float]:
    """Wait for ``processes``; (first, last) monotonic times the site's request count grew."""
    first = last = 0.0
    seen = site.fetched()
    while any(p.poll() is None for p in processes):
        time.sleep(0.05)
        now_seen = site.fetched()
        if now_seen != seen:
            first = first or time.monotonic()
            last, seen = time.monotonic(), now_seen
    return first, last
