"""Every page that finally failed, one JSON line each in ``failures.jsonl``, and summed in stats.

Listens to :data:`topics_crawler.signals.page_failed` (sent by the spider for
final fetch and parse failures). Each failure becomes a line
``{"url", "kind", "status", "reason", "attempts", "time"}`` (plus ``"detail"`` when the
spider gave one: which GraphQL operation Medium refused, and its first message), written and
flushed at once, so a crash loses none (a file that cannot be written stops the crawl
with one line, as any failed write: :func:`~topics_crawler.errors.record_write_failure`).
Where the file goes:

1. ``FAILURES_FILE`` when set;
2. else ``<DATASET_DIR>/failures.jsonl`` when ``DATASET_DIR`` is set;
3. else beside the first local ``FEEDS`` file, named after it (``-o out.jsonl``:
   ``out.failures.jsonl``);
4. else nowhere (the failures are still counted and logged).

One file per run: the file always holds the last run's failures (empty when it had none),
and an earlier run's failures are never overwritten: a run that finds the file holding
some first renames it after the time it was last written (``out.failures.jsonl`` →
``out.failures.20261202T120036Z.jsonl``). The run summary says where the file is.

A 404/410 for a story, author or publication means the entity was deleted: it
is recorded with reason ``gone`` and counted as ``failures/gone`` only; a tag that does not
exist (reason ``tag_not_found``, :mod:`topics_crawler.spiders._missing_tags`) is counted as
``failures/tag_not_found`` only; every other failure of a page counts in ``failures/total``
and ``failures/<reason>``. A story's
image (kind ``image``, :mod:`topics_crawler.pipelines.images`) is no page: it is listed
and counted as ``failures/image/<reason>``, outside the pages' failure ratio.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Self

from scrapy import Spider, signals
from scrapy.settings import BaseSettings

from topics_crawler.errors import record_write_failure
from topics_crawler.items.values import format_timestamp
from topics_crawler.output.sidecar import sidecar_path
from topics_crawler.signals import page_failed

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

FAILURES_FILENAME = "failures.jsonl"
#: Stat naming this run's failures file.
FAILURES_FILE_STAT = "failures/file"
#: Stat counting the failures of this run, one per line of the file (every kind and reason).
FAILURES_LISTED_STAT = "failures/listed"
GONE = "gone"
#: Reasons that say the page does not exist rather than that fetching it failed: counted on
#: their own, outside ``failures/total`` (the crawl health's failure ratio).
NOT_PAGE_FAILURES = frozenset({GONE, "tag_not_found"})
GONE_STATUSES = frozenset({404, 410})
ENTITY_KINDS = frozenset({"story", "author", "publication"})
#: Failures of what is not a page (counted apart from the pages' ``failures/total``).
ASSET_KINDS = frozenset({"image"})


def failures_path(settings: BaseSettings) -> Path | None:
    """Where ``failures.jsonl`` goes for these settings (see the module docstring)."""
    return sidecar_path(settings, "FAILURES_FILE", FAILURES_FILENAME, named_after_feed=True)


def keep_earlier_run(path: Path) -> Path | None:
    """Rename an earlier run's non-empty failures file after the time it was last written
    (``<stem>.<YYYYMMDDTHHMMSSZ>.jsonl``, a number added if that name is taken); the new
    name, or None when there was nothing to keep."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    if info.st_size == 0:
        return None
    stamp = datetime.fromtimestamp(info.st_mtime, UTC).strftime("%Y%m%dT%H%M%SZ")
    kept = path.with_name(f"{path.stem}.{stamp}{path.suffix}")
    number = 1
    while kept.exists():
        number += 1
        kept = path.with_name(f"{path.stem}.{stamp}-{number}{path.suffix}")
    path.rename(kept)
    return kept


def failure_reason(kind: str, status: int | None, reason: str) -> str:
    """The recorded reason: ``gone`` for a deleted entity, else the spider's reason."""
    if kind in ENTITY_KINDS and status in GONE_STATUSES:
        return GONE
    return reason or "unknown"


class FailureLog:
    """Extension writing ``failures.jsonl`` and the ``failures/*`` stats."""

    def __init__(self, stats: StatsCollector, path: Path | None, crawler: Crawler) -> None:
        self.stats = stats
        self.path = path
        self.crawler = crawler
        self.file: IO[str] | None = None
        self.reasons: Counter[str] = Counter()
        self.assets: Counter[tuple[str, str]] = Counter()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        assert crawler.stats is not None
        extension = cls(crawler.stats, failures_path(crawler.settings), crawler)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.page_failed, signal=page_failed)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self, spider: Spider) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            kept = keep_earlier_run(self.path)
            self.file = self.path.open("w", encoding="utf-8")  # this run's failures only
        except OSError as exc:
            self._fail(exc)
            return
        if kept is not None:
            logger.info("The last run's failures are kept in %s", kept)
        self.stats.set_value(FAILURES_FILE_STAT, str(self.path))

    def _fail(self, exc: OSError) -> None:
        """One line, the crawl stopped; nothing more is written to the file."""
        file, self.file = self.file, None
        if file is not None:
            with contextlib.suppress(OSError):  # what is buffered cannot be written either
                file.close()
        record_write_failure(
            self.crawler,
            "failures",
            f"Cannot write {self.path}: {exc.strerror or exc}; stopping the crawl",
        )

    def page_failed(
        self,
        url: str,
        kind: str,
        status: int | None,
        reason: str,
        attempts: int | None,
        *,
        detail: str | None = None,
        **_kwargs: Any,
    ) -> None:
        recorded = failure_reason(kind, status, reason)
        self.stats.inc_value(FAILURES_LISTED_STAT)
        if kind in ASSET_KINDS:
            self.assets[kind, recorded] += 1
            self.stats.inc_value(f"failures/{kind}/{recorded}")
        else:
            self.reasons[recorded] += 1
            if recorded not in NOT_PAGE_FAILURES:
                self.stats.inc_value("failures/total")
            self.stats.inc_value(f"failures/{recorded}")
        record = {
            "url": url,
            "kind": kind,
            "status": status,
            "reason": recorded,
            "attempts": attempts,
            "time": format_timestamp(datetime.now(UTC)),
        }
        if detail:
            record["detail"] = detail
        if self.file is not None:
            try:
                self.file.write(json.dumps(record, ensure_ascii=False) + "\n")
                self.file.flush()
            except OSError as exc:
                self._fail(exc)

    def spider_closed(self, spider: Spider) -> None:
        if self.file is not None:
            try:
                self.file.close()
            except OSError as exc:
                self._fail(exc)
            self.file = None
            if self.path is not None and not self.stats.get_value(FAILURES_LISTED_STAT):
                # opened at start (a disk that cannot take it stops the crawl then); a run
                # with no failure leaves no empty file behind
                with contextlib.suppress(OSError):
                    self.path.unlink()
                self.stats.set_value(FAILURES_FILE_STAT, None)
        where = f"; listed in {self.path}" if self.path is not None else ""
        if self.reasons:
            summary = ", ".join(f"{reason}: {n}" for reason, n in self.reasons.most_common())
            logger.info("Pages that failed for good: %s%s", summary, where)
        if self.assets:
            counts = self.assets.most_common()
            summary = ", ".join(f"{kind} {reason}: {n}" for (kind, reason), n in counts)
            logger.info("Not stored: %s%s", summary, where)
