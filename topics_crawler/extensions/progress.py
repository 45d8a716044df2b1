"""Crawl progress a person can watch: a live line on a terminal, a periodic line in the log.

Both show pages fetched (and the rate), items per type, errors (parse errors,
download errors), the requests waiting in the scheduler, for a tag history
of known size the share done and an ETA, and the rate each rate-limited host
allows as learned so far (:mod:`topics_crawler.middlewares.rate`), e.g.::

    Progress: 412 pages (96/min), items story=380 author=120 publication=9 tag_page=2,
    errors parse=1 download=0, 37 requests waiting, history 38% of 1,870 stories via GraphQL,
    ETA 4m10s,
    rate medium.com=4.2/s

In the log (Scrapyd, ``LOG_FILE``) the first line comes ``PROGRESS_FIRST_LOG``
seconds (10) after the start, then one every ``LOGSTATS_INTERVAL`` seconds (60),
and a last one when the spider closes.
When stderr is a terminal (``PROGRESS_LIVE = "auto"``; ``"on"``/``"off"`` force
it) the line is also redrawn in place every ``PROGRESS_REFRESH`` seconds; log
records printed to that terminal clear it first, so the two never mix.

Items per type are counted as ``item_scraped_count/<item_type>`` stats. A history's
size is what the tag pages claim (``history/claimed/<tag>``, their story counts capped by
``max_stories``; summed in ``history/expected_stories``, over ``history/expected_tags``
tags) until a tag's listing ends: from then on that tag counts with the stories its listing
really had (``history/listed/<tag>``; a tag page claiming 4,870 stories whose history lists
3,008 counts 3,008). Its progress is ``history/stories``; once every such tag's listing
ended the line says so.
"""

from __future__ import annotations

import logging
import shutil
import sys
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Self

from itemadapter import ItemAdapter
from scrapy import Spider, signals
from scrapy.exceptions import NotConfigured
from scrapy.extensions.logstats import LogStats
from scrapy.utils.asyncio import create_looping_call

from topics_crawler.middlewares.rate import LEARNED_RATE_STAT

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

ITEM_TYPES = ("story", "author", "publication", "tag_page")
HISTORY_EXPECTED_STAT = "history/expected_stories"
HISTORY_SIZED_TAGS_STAT = "history/expected_tags"  # tags whose size is in the expected count
HISTORY_DONE_STAT = "history/stories"
#: ``history/claimed/<tag>``: the stories a tag page claims (capped by ``max_stories``).
HISTORY_CLAIMED_PREFIX = "history/claimed/"
#: ``history/listed/<tag>``: the stories a tag's ended listing really had.
HISTORY_LISTED_PREFIX = "history/listed/"
RATE_WINDOW = 30.0  # seconds of samples behind the live line's page rate


@dataclass(frozen=True)
class ProgressConfig:
    """When to log and whether to draw the live line."""

    interval: float
    first_log: float
    refresh: float
    live: bool

    @classmethod
    def from_settings(cls, settings: BaseSettings, stream: IO[str]) -> Self:
        mode = str(settings.get("PROGRESS_LIVE", "auto")).lower()
        if mode not in ("auto", "on", "off"):
            raise ValueError(f"PROGRESS_LIVE must be auto, on or off, got {mode!r}")
        isatty = getattr(stream, "isatty", None)
        interval = settings.getfloat("LOGSTATS_INTERVAL")
        return cls(
            interval=interval,
            first_log=min(settings.getfloat("PROGRESS_FIRST_LOG", 10.0), interval),
            refresh=settings.getfloat("PROGRESS_REFRESH", 1.0),
            live=mode == "on" or (mode == "auto" and bool(isatty and isatty())),
        )

    @property
    def tick(self) -> float:
        """How often the extension wakes up."""
        slowest = min(self.first_log, self.interval)
        return min(self.refresh, slowest) if self.live else slowest


def format_duration(seconds: float) -> str:
    """``250`` → ``4m10s``, ``3700`` → ``1h01m``, ``42`` → ``42s``."""
    seconds = max(0, round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def history_size(stats: Mapping[str, Any]) -> int:
    """The stories the histories will list: per tag, what its ended listing had, else what
    its tag page claims (the sum of the claims when no tag is named)."""
    claimed = _per_tag(stats, HISTORY_CLAIMED_PREFIX)
    listed = _per_tag(stats, HISTORY_LISTED_PREFIX)
    if not claimed and not listed:
        return int(stats.get(HISTORY_EXPECTED_STAT) or 0)
    return sum(listed.get(tag, claimed.get(tag, 0)) for tag in claimed.keys() | listed.keys())


def _per_tag(stats: Mapping[str, Any], prefix: str) -> dict[str, int]:
    return {
        key[len(prefix) :]: int(value) for key, value in stats.items() if key.startswith(prefix)
    }


def history_progress(stats: Mapping[str, Any], elapsed: float) -> str | None:
    """``history 38% of 1,870 stories via GraphQL, ETA 4m10s``; None without a known
    history size."""
    expected = history_size(stats)
    if expected <= 0:
        return None
    listed = int(stats.get(HISTORY_DONE_STAT) or 0)
    ended = int(stats.get("history/done") or 0) + int(stats.get("history/fallback") or 0)
    if ended >= int(stats.get(HISTORY_SIZED_TAGS_STAT) or 1):  # the tags' counts overstate
        return f"history done, {listed:,} stories{history_source(stats)}"
    done = min(listed, expected)
    text = f"history {done / expected:.0%} of {expected:,} stories{history_source(stats)}"
    if 0 < done < expected and elapsed > 0:
        text += f", ETA {format_duration(elapsed * (expected - done) / done)}"
    return text


def history_source(stats: Mapping[str, Any]) -> str:
    """`` via GraphQL``, `` via the day archive`` or both: how the history is being listed
    (GraphQL pages read, day-archive walks started)."""
    sources = [
        name
        for name, stat in (("GraphQL", "history/pages"), ("the day archive", "day_archive/walks"))
        if int(stats.get(stat) or 0) > 0
    ]
    return f" via {' and '.join(sources)}" if sources else ""


def progress_line(
    stats: Mapping[str, Any], page_rate: float, waiting: int | None, elapsed: float
) -> str:
    """The progress line from the crawl's stats (``page_rate`` in pages per minute)."""
    pages = int(stats.get("response_received_count", 0))
    items = " ".join(f"{kind}={stats.get(f'item_scraped_count/{kind}', 0)}" for kind in ITEM_TYPES)
    parse_errors = sum(v for k, v in stats.items() if k.startswith("parse/errors/"))
    download_errors = stats.get("downloader/exception_count", 0)
    fields = [
        f"{pages} pages ({page_rate:.0f}/min)",
        f"items {items}",
        f"errors parse={parse_errors} download={download_errors}",
    ]
    if waiting is not None:
        fields.append(f"{waiting} requests waiting")
    history = history_progress(stats, elapsed)
    if history is not None:
        fields.append(history)
    rates = learned_rates(stats)
    if rates is not None:
        fields.append(rates)
    return "Progress: " + ", ".join(fields)


def learned_rates(stats: Mapping[str, Any]) -> str | None:
    """``"rate medium.com=4.2/s"``: the learned rate of each host that has one, or None."""
    rates = [
        f"{key.removeprefix(LEARNED_RATE_STAT)}={value:g}/s"
        for key, value in sorted(stats.items())
        if key.startswith(LEARNED_RATE_STAT) and value
    ]
    return "rate " + " ".join(rates) if rates else None


class PageRate:
    """Pages per minute over the last ``window`` seconds of samples."""

    def __init__(self, window: float = RATE_WINDOW) -> None:
        self.window = window
        self.samples: deque[tuple[float, int]] = deque()

    def add(self, now: float, pages: int) -> float:
        self.samples.append((now, pages))
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.window:
            self.samples.popleft()
        (first_time, first_pages) = self.samples[0]
        if now <= first_time:
            return 0.0
        return (pages - first_pages) * 60.0 / (now - first_time)


class LiveLine:
    """One line redrawn in place on a terminal; log records to it clear it first."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.shown = False
        self.handlers: list[logging.Handler] = []

    def start(self) -> None:
        """Hook the root logger's handlers that print to the same stream (Scrapy's)."""
        self.handlers = [
            h
            for h in logging.getLogger().handlers
            if isinstance(h, logging.StreamHandler) and h.stream is self.stream
        ]
        for handler in self.handlers:
            handler.addFilter(self.clear_for_record)

    def draw(self, text: str) -> None:
        width = max(20, shutil.get_terminal_size().columns - 1)  # no wrap: \r redraws one line
        self.stream.write("\r" + text[:width] + "\x1b[K")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False

    def clear_for_record(self, record: logging.LogRecord) -> bool:
        self.clear()
        return True

    def stop(self) -> None:
        self.clear()
        for handler in self.handlers:
            handler.removeFilter(self.clear_for_record)


class CrawlProgress(LogStats):
    """Replaces Scrapy's LogStats (``EXTENSIONS``); see the module docstring."""

    def __init__(
        self, crawler: Crawler, config: ProgressConfig, stream: IO[str] | None = None
    ) -> None:
        assert crawler.stats is not None
        super().__init__(crawler.stats, config.interval)
        self.crawler = crawler
        self.config = config
        self.live = LiveLine(stream or sys.stderr) if config.live else None
        self.rate = PageRate()
        self.started = self.next_log = 0.0
        self.logged_pages = 0
        self.logged_at = 0.0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        if not crawler.settings.getfloat("LOGSTATS_INTERVAL"):
            raise NotConfigured("LOGSTATS_INTERVAL is 0")
        extension = cls(crawler, ProgressConfig.from_settings(crawler.settings, sys.stderr))
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(extension.item_scraped, signal=signals.item_scraped)
        return extension

    def item_scraped(self, item: Any, spider: Spider) -> None:
        item_type = ItemAdapter(item).get("item_type") or type(item).__name__.lower()
        self.stats.inc_value(f"item_scraped_count/{item_type}")

    def waiting_requests(self) -> int | None:
        """Requests in the scheduler, or None when the scheduler cannot say."""
        try:
            scheduler = self.crawler.engine.scheduler
            return len(scheduler) if scheduler is not None else None  # type: ignore[arg-type]
        except (RuntimeError, TypeError, AttributeError):  # no engine yet, or no __len__
            return None

    def spider_opened(self, spider: Spider) -> None:
        self.started = self.logged_at = time.monotonic()
        self.next_log = self.started + self.config.first_log
        if self.live is not None:
            self.live.start()
        self.task = create_looping_call(self.tick, spider)
        self.task.start(self.config.tick, now=False)

    def tick(self, spider: Spider) -> None:
        now = time.monotonic()
        stats = self.stats.get_stats()
        pages = int(stats.get("response_received_count", 0))
        live_rate = self.rate.add(now, pages)
        elapsed = now - self.started
        if self.live is not None:
            self.live.draw(progress_line(stats, live_rate, self.waiting_requests(), elapsed))
        if now >= self.next_log - 0.05:  # a tick may fire a hair early
            rate = (pages - self.logged_pages) * 60.0 / max(now - self.logged_at, 1e-9)
            self.logged_pages, self.logged_at = pages, now
            self.next_log = now + self.config.interval
            line = progress_line(stats, rate, self.waiting_requests(), elapsed)
            logger.info(line, extra={"spider": spider})

    def log(self, spider: Spider) -> None:
        """One log line now (LogStats' hook), at the rate since the last one."""
        self.next_log = 0.0
        self.tick(spider)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        """The final line (every crawl logs at least one), then LogStats' per-minute stats."""
        if self.live is not None:
            self.live.stop()
        self.live = None
        if self.started:
            self.log(spider)
        super().spider_closed(spider, reason)
