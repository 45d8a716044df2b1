"""What grows in a long crawl: a bench-only extension (``-s EXTENSIONS``) for bench.flat_memory.

At ``MEMORY_PROBE_START`` items it starts :mod:`tracemalloc` and counts live objects
by type; every ``MEMORY_PROBE_EVERY`` items after that it logs the allocations made
since the start that are still alive (top ``MEMORY_PROBE_TOP`` source lines), the
object types whose counts grew, and the process's RSS. Allocations before the start
are not traced, so what it shows is what the crawl keeps after that point: growth.
"""

from __future__ import annotations

import gc
import logging
import resource
import tracemalloc
from collections import Counter
from typing import TYPE_CHECKING, Any, Self

from scrapy import signals

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


def _type_counts() -> Counter[str]:
    return Counter(type(item).__qualname__ for item in gc.get_objects())


class MemoryProbe:
    """Logs what was allocated after the start and is still alive (see the module docstring)."""

    def __init__(self, start: int, every: int, top: int) -> None:
        self.start, self.every, self.top = start, every, top
        self.items = 0
        self.baseline: Counter[str] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        probe = cls(
            settings.getint("MEMORY_PROBE_START", 5000),
            settings.getint("MEMORY_PROBE_EVERY", 5000),
            settings.getint("MEMORY_PROBE_TOP", 25),
        )
        crawler.signals.connect(probe.item_scraped, signals.item_scraped)
        return probe

    def item_scraped(self, item: Any) -> None:
        self.items += 1
        if self.items == self.start:
            tracemalloc.start(8)
            self.baseline = _type_counts()
            self._log("start")
        elif self.items > self.start and (self.items - self.start) % self.every == 0:
            self._log("since start")

    def _log(self, what: str) -> None:
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        lines = [f"MEMORY PROBE at {self.items} items ({what}): peak RSS {rss:.0f} MiB"]
        if tracemalloc.is_tracing() and what != "start":
            snapshot = tracemalloc.take_snapshot()
            stats = snapshot.statistics("traceback")
            total = sum(stat.size for stat in stats)
            lines.append(f"  traced alive since start: {total / 2**20:.1f} MiB")
            for stat in stats[: self.top]:
                frames = " <- ".join(
                    f"{frame.filename.rsplit('site-packages/', 1)[-1]}:{frame.lineno}"
                    for frame in list(stat.traceback)[:4]
                )
                lines.append(f"  {stat.size / 1024:9.0f} KiB {stat.count:8d}  {frames}")
            if self.baseline is not None:
                grown = _type_counts() - self.baseline
                lines.append(
                    "  grown types: " + ", ".join(f"{k}+{v}" for k, v in grown.most_common(15))
                )
        logger.warning("\n".join(lines))
