"""Shared by the browser benchmarks: one tag page of the local JS site, fetched N times in a row.

The requests go through the project's real stack (settings, mirror, render
policy, lazy scrapy-playwright handler, Debian's chromium); ``RENDER_MODE``
decides whether they are plain or rendered. One request at a time: the next one
is made by the callback of the previous one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from scrapy import Request, Spider
from scrapy.http import Response

TAG = "distributed-training"
TAG_URL = f"https://medium.com/tag/{TAG}"
#: Called after each page: (index from 1, response, seconds since the request was made).
PageHook = Callable[[int, Response, float], None]


def bench_settings(base_url: str, mode: str) -> dict[str, Any]:
    """Project settings for a quiet, unthrottled, sequential benchmark crawl."""
    return {
        "MEDIUM_BASE_URL": base_url,
        "RENDER_MODE": mode,
        "LOG_LEVEL": "WARNING",
        "AUTOTHROTTLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "CONCURRENT_REQUESTS": 1,
        "HEALTH_ENABLED": False,
        "ITEM_PIPELINES": {},
        "EXTENSIONS": {},
        "TELNETCONSOLE_ENABLED": False,
    }


class RepeatSpider(Spider):
    """Fetch :data:`TAG_URL` ``count`` times, one after the other."""

    name = "render_bench"

    def __init__(self, count: int, on_page: PageHook, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.count = count
        self.on_page = on_page

    async def start(self) -> Any:
        yield self.page_request(1)

    def page_request(self, index: int) -> Request:
        return Request(
            TAG_URL,
            callback=self.parse,
            dont_filter=True,
            meta={"entity_kind": "tag", "bench_started": time.perf_counter()},
            cb_kwargs={"index": index},
        )

    def parse(self, response: Response, index: int) -> Iterator[Request]:
        self.on_page(index, response, time.perf_counter() - response.meta["bench_started"])
        if index < self.count:
            yield self.page_request(index + 1)


def run_crawls(crawls: list[tuple[dict[str, Any], int, PageHook]]) -> None:
    """Run ``(settings, count, hook)`` crawls one after the other in this process."""
    from scrapy.crawler import CrawlerRunner
    from scrapy.utils.project import get_project_settings
    from scrapy.utils.reactor import install_reactor

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    from twisted.internet import defer, reactor

    @defer.inlineCallbacks
    def all_crawls() -> Any:
        for overrides, count, hook in crawls:
            settings = get_project_settings()
            settings.setdict(overrides, priority="cmdline")
            yield CrawlerRunner(settings).crawl(RepeatSpider, count=count, on_page=hook)
        reactor.stop()  # type: ignore[attr-defined]

    all_crawls()
    reactor.run()  # type: ignore[attr-defined]


def descendant_rss_kib(root: int | None = None) -> tuple[int, int]:
    """``(RSS KiB summed, process count)`` of the chromium processes under ``root``
    (this process by default), read from ``/proc`` (psutil is not a dependency)."""
    root = root or os.getpid()
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    total, count, stack = 0, 0, list(children.get(root, []))
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, []))
        rss = _chromium_rss_kib(pid)
        if rss is not None:
            total, count = total + rss, count + 1
    return total, count


def _chromium_rss_kib(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    if "chrom" not in fields.get("Name", ""):
        return None
    return int(fields.get("VmRSS", "0 kB").split()[0])
