"""Scheduler of a crash-safe ``JOBDIR`` crawl: pending requests and the seen-set in the journal.

Requests wait in memory (a priority heap) and in the journal; every
``RESUME_CHECKPOINT_INTERVAL`` seconds, when no callback output is between the spider
and the feeds or the scheduler, the feed files are flushed and the journal committed
with their sizes. On open, feed files are cut back to their checkpointed size, and a journal
with progress means a resume: the pending requests are scheduled again. Then, before
anything is fetched, the size of each appended local feed the journal does not know yet
is committed: a job killed (or stopped by a full disk) before its first checkpoint is cut
back to where it started, never exported twice; a journal that cannot be written at all
fetches nothing and stops the crawl with one line.

Stats as Scrapy's scheduler keeps them: ``scheduler/enqueued`` and ``scheduler/dequeued``
(with ``/journal`` twins, as Scrapy's have ``/memory`` and ``/disk``), each request once
however long the not-before gate holds it; requests resumed from the journal were
enqueued by the earlier run, so they count as dequeued only. A resume also records
``resume/exported_before/<type>``: the entities the job's earlier processes exported
(the health checks and the run summary count them as found).
"""

from __future__ import annotations

import heapq
import logging
import os
import pickle
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Self

from scrapy import Request, Spider
from scrapy.core.scheduler import BaseScheduler
from scrapy.utils.asyncio import create_looping_call
from scrapy.utils.request import request_from_dict

from topics_crawler.errors import record_write_failure, stop_crawl
from topics_crawler.output.feeds import local_feed_paths, open_feed_files
from topics_crawler.resume.journal import CrawlJournal
from topics_crawler.scheduling.not_before import NotBeforeGate

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: Stat prefix: entities the earlier processes of a resumed job exported, per item type.
EXPORTED_BEFORE_STAT = "resume/exported_before/"
#: Heap entry: (-priority, seq, fingerprint, the request or its pickled dict).
_Entry = tuple[int, int, str, Request | bytes]


class JournalScheduler(BaseScheduler):
    """Priority-ordered requests, deduplicated and persisted through the crawl journal."""

    def __init__(self, crawler: Crawler, journal: CrawlJournal, interval: float) -> None:
        self.crawler = crawler
        self.journal = journal
        self.interval = interval
        self.fingerprinter = crawler.request_fingerprinter
        self._heap: list[_Entry] = []
        self._spider: Spider | None = None
        self._checkpoints = create_looping_call(self.checkpoint)
        self._failed = False
        #: Requests not due yet wait here (still pending in the journal), not in a slot.
        self.gate = NotBeforeGate.from_crawler(crawler)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        journal = CrawlJournal.for_jobdir(settings["JOBDIR"])
        return cls(crawler, journal, settings.getfloat("RESUME_CHECKPOINT_INTERVAL", 0.5))

    def open(self, spider: Spider) -> None:
        self._spider = spider
        done, pending = self.journal.counts()
        self._cut_feeds_back()
        if done or pending:
            for entry in self.journal.pending():
                heapq.heappush(self._heap, (-entry.priority, entry.seq, entry.fp, entry.request))
            stats = self.crawler.stats
            for item_type, count in self.journal.entities_by_type().items():
                if stats is not None:
                    stats.set_value(f"{EXPORTED_BEFORE_STAT}{item_type}", count)
            logger.info(
                "Resuming the crawl in %s: %d pages done, %d requests pending",
                self.journal.path.parent,
                done,
                pending,
            )
        self._commit_starting_sizes()
        self._checkpoints.start(self.interval, now=False)

    def close(self, reason: str) -> None:
        self.gate.close()  # held requests stay pending in the journal
        if self._checkpoints.running:
            self._checkpoints.stop()
        self.checkpoint(force=True)
        self.journal.close()

    def has_pending_requests(self) -> bool:
        if self._failed:  # the journal cannot be written: nothing more is done
            return False
        return bool(self._heap) or bool(self.gate)

    def __len__(self) -> int:
        return len(self._heap) + len(self.gate)

    def enqueue_request(self, request: Request) -> bool:
        fp = self.fingerprinter.fingerprint(request).hex()
        data = pickle.dumps(request.to_dict(spider=self._spider), protocol=pickle.HIGHEST_PROTOCOL)
        added = self.journal.add(
            fp, request.url, request.priority, data, replace=request.dont_filter
        )
        stats = self.crawler.stats
        if not added:
            if stats is not None:
                stats.inc_value("scheduler/filtered/journal")
            return False
        heapq.heappush(self._heap, (-request.priority, self.journal.last_seq, fp, request))
        if stats is not None:
            stats.inc_value("scheduler/enqueued/journal")
            stats.inc_value("scheduler/enqueued")
        return True

    def next_request(self) -> Request | None:
        if self._failed:
            stop_crawl(self.crawler)  # failed before the engine ran: it stops now
            return None
        request = self.gate.take(self._pop, self._push_back)
        stats = self.crawler.stats
        if request is not None and stats is not None:
            stats.inc_value("scheduler/dequeued/journal")
            stats.inc_value("scheduler/dequeued")
        return request

    def _push_back(self, request: Request) -> None:
        """A request the gate cannot hold now: first in line again (still in the journal)."""
        fp = self.fingerprinter.fingerprint(request).hex()
        heapq.heappush(self._heap, (-request.priority, 0, fp, request))

    def _pop(self) -> Request | None:
        if not self._heap:
            return None
        _, _, _, stored = heapq.heappop(self._heap)
        if isinstance(stored, Request):
            return stored
        return request_from_dict(pickle.loads(stored), spider=self._spider)  # our own journal

    # --- checkpoints ---------------------------------------------------------------------

    def checkpoint(self, force: bool = False) -> None:
        """Flush the feeds and commit the journal, unless a page's outputs are half handled.

        A commit that fails (disk full, permissions) stops the crawl with one line; the
        journal keeps its last checkpoint, from which the same command resumes."""
        if self._failed or (self.journal.progress.outputs_in_flight and not force):
            return
        if self._commit(self._flush_feeds) and self.crawler.stats is not None:
            self.crawler.stats.inc_value("resume/checkpoints")

    def _commit(self, feed_sizes: Callable[[], dict[str, int]]) -> bool:
        """Commit the journal with ``feed_sizes()``; False (the crawl stopping, one line)
        when it cannot be written."""
        try:
            self.journal.commit(feed_sizes())
        except (OSError, sqlite3.Error) as exc:
            self._failed = True
            cause = getattr(exc, "strerror", None) or str(exc)
            record_write_failure(
                self.crawler,
                "journal",
                f"Crawl journal {self.journal.path} not saved: {cause}; stopping the crawl "
                "(the same command resumes it from the last checkpoint)",
            )
            return False
        return True

    def _commit_starting_sizes(self) -> None:
        """Commit the size of each appended local feed the journal has no size for yet
        (0 when it does not exist), before anything is written to it."""
        known = self.journal.feed_sizes()
        sizes = {
            str(path): path.stat().st_size if path.exists() else 0
            for path in local_feed_paths(self.crawler.settings, overwritten=False)
            if str(path) not in known
        }
        if sizes:
            self._commit(lambda: sizes)

    def _flush_feeds(self) -> dict[str, int]:
        """Flush every open local feed file (:mod:`topics_crawler.output.feeds`); their sizes."""
        sizes = {}
        for path, file in open_feed_files(self.crawler).items():
            file.flush()
            if file.failed is not None:
                raise file.failed
            sizes[path] = os.fstat(file.fileno()).st_size
        return sizes

    def _cut_feeds_back(self) -> None:
        """Drop what was written to the feeds after the last checkpoint."""
        for path, size in self.journal.feed_sizes().items():
            file = Path(path)
            if file.exists() and file.stat().st_size > size:
                logger.info("Cutting %s back to its checkpointed %d bytes", path, size)
                os.truncate(file, size)
