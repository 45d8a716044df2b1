"""The crawl journal: requests, done pages, dedupe state and feed sizes in one SQLite file."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from scrapy.settings import BaseSettings

from topics_crawler.errors import CrawlNotStarted
from topics_crawler.utils.sqlite import open_sqlite

JOURNAL_NAME = "journal.sqlite"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS requests (fp TEXT PRIMARY KEY, url TEXT NOT NULL,"
    " priority INTEGER NOT NULL, seq INTEGER NOT NULL, done INTEGER NOT NULL DEFAULT 0,"
    " request BLOB)",
    "CREATE TABLE IF NOT EXISTS dedupe (key TEXT PRIMARY KEY, hashes TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS feeds (path TEXT PRIMARY KEY, size INTEGER NOT NULL)",
)
#: Journals open in this process, by path: the scheduler, the spider middleware and the
#: dedupe pipeline of one crawl share one connection (so one transaction).
_OPEN: dict[Path, CrawlJournal] = {}
#: Journals this process made (a new job's, not an earlier run's).
_MADE: set[Path] = set()


@dataclass
class PendingRequest:
    """A scheduled request not yet done, as stored."""

    fp: str
    priority: int
    seq: int
    request: bytes


@dataclass
class PageProgress:
    """Outputs of each page in flight: yielded by its callback vs handled.

    An item is handled once out of the pipelines (exported, dropped or failed), a
    request once it reached the scheduler (so it is in the journal).
    """

    yielded: dict[str, int] = field(default_factory=dict)
    finished: dict[str, int] = field(default_factory=dict)
    output_done: set[str] = field(default_factory=set)

    @property
    def outputs_in_flight(self) -> int:
        return sum(self.yielded.values()) - sum(self.finished.values())

    def complete(self, fp: str) -> bool:
        """Whether ``fp``'s callback has ended and all its items are out; forgets it if so."""
        if fp not in self.output_done or self.finished.get(fp, 0) < self.yielded.get(fp, 0):
            return False
        self.output_done.discard(fp)
        self.yielded.pop(fp, None)
        self.finished.pop(fp, None)
        return True


class CrawlJournal:
    """One crawl's journal; writes become durable at :meth:`commit` only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.exists():
            _MADE.add(path.absolute())
        try:
            self._db = open_sqlite(path, _SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            cause = getattr(exc, "strerror", None) or str(exc)
            raise CrawlNotStarted(f"the crawl journal {path} cannot be written: {cause}") from exc
        self.progress = PageProgress()
        self._commit_hooks: list[Callable[[], None]] = []
        self._seq = int(
            self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM requests").fetchone()[0]
        )

    @classmethod
    def check(cls, jobdir: str | Path) -> bool:
        """Open (making it if need be) and close the journal of ``jobdir``, raising
        :class:`~topics_crawler.errors.CrawlNotStarted` when it cannot be written (a full
        disk); True when it holds an earlier process's job (a resume), not one this
        process made. The crawl opens it again in its own thread."""
        path = (Path(jobdir) / JOURNAL_NAME).absolute()
        resume = path.exists() and path not in _MADE
        if path not in _OPEN:
            cls(path).close()
        return resume

    @classmethod
    def for_jobdir(cls, jobdir: str | Path) -> Self:
        """The journal of ``jobdir``, shared by everyone in this process who asks."""
        path = (Path(jobdir) / JOURNAL_NAME).absolute()
        if path not in _OPEN:
            _OPEN[path] = cls(path)
        return _OPEN[path]  # type: ignore[return-value]

    # --- requests -------------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """Scheduling order of the request added last."""
        return self._seq

    def add(self, fp: str, url: str, priority: int, request: bytes, *, replace: bool) -> bool:
        """Record a scheduled request; False when ``fp`` is known and not ``replace``."""
        self._seq += 1
        if replace:
            self._db.execute(
                "INSERT INTO requests (fp, url, priority, seq, request) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT(fp) DO UPDATE SET done = 0, priority = excluded.priority,"
                " seq = excluded.seq, request = excluded.request",
                (fp, url, priority, self._seq, request),
            )
            return True
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO requests (fp, url, priority, seq, request)"
            " VALUES (?, ?, ?, ?, ?)",
            (fp, url, priority, self._seq, request),
        )
        return cursor.rowcount == 1

    def mark_done(self, fp: str) -> None:
        self._db.execute("UPDATE requests SET done = 1, request = NULL WHERE fp = ?", (fp,))

    def pending(self) -> Iterator[PendingRequest]:
        """Requests scheduled and not done at the last commit, in scheduling order."""
        rows = self._db.execute(
            "SELECT fp, priority, seq, request FROM requests WHERE done = 0 ORDER BY seq"
        )
        for fp, priority, seq, request in rows:
            yield PendingRequest(fp, priority, seq, request)

    def counts(self) -> tuple[int, int]:
        """(done, pending) requests."""
        row = self._db.execute("SELECT SUM(done), SUM(1 - done) FROM requests").fetchone()
        return int(row[0] or 0), int(row[1] or 0)

    # --- feeds and commits ------------------------------------------------------------

    def feed_sizes(self) -> dict[str, int]:
        return dict(self._db.execute("SELECT path, size FROM feeds").fetchall())

    def add_commit_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` before each commit: what it makes durable (the dataset stage) is
        then never behind the journal; an exception from it cancels the commit."""
        self._commit_hooks.append(hook)

    def commit(self, feed_sizes: dict[str, int]) -> None:
        """Make everything since the last commit durable, with the feeds' flushed sizes."""
        for hook in self._commit_hooks:
            hook()
        self._db.executemany(
            "INSERT INTO feeds (path, size) VALUES (?, ?)"
            " ON CONFLICT(path) DO UPDATE SET size = excluded.size",
            feed_sizes.items(),
        )
        self._db.commit()

    def close(self) -> None:
        _OPEN.pop(self.path, None)
        self._db.close()

    # --- dedupe state -------------------------------------------------------------------

    def get_hashes(self, key: str) -> frozenset[str]:
        row = self._db.execute("SELECT hashes FROM dedupe WHERE key = ?", (key,)).fetchone()
        return frozenset(row[0].split()) if row else frozenset()

    def entities_by_type(self) -> dict[str, int]:
        """Entities whose records the job exported so far (as of the last commit), per item
        type: an entity known under two keys (an author's id and username) shares its
        hashes, so it counts once."""
        rows = self._db.execute(
            "SELECT substr(key, 1, instr(key, ':') - 1), COUNT(DISTINCT hashes) FROM dedupe"
            " WHERE instr(key, ':') > 0 GROUP BY 1"
        )
        return {str(item_type): int(count) for item_type, count in rows}

    def put_hashes(self, key: str, hashes: Iterable[str]) -> None:
        self._db.execute(
            "INSERT INTO dedupe (key, hashes) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET hashes = excluded.hashes",
            (key, " ".join(sorted(hashes))),
        )


class JournalDedupeState:
    """The dedupe pipeline's state inside the journal: committed with the feeds it matches."""

    def __init__(self, journal: CrawlJournal) -> None:
        self.journal = journal

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Self:
        return cls(CrawlJournal.for_jobdir(settings["JOBDIR"]))

    def get(self, key: str) -> frozenset[str]:
        return self.journal.get_hashes(key)

    def put(self, key: str, hashes: Iterable[str]) -> None:
        self.journal.put_hashes(key, hashes)

    def close(self) -> None:
        """Committed by the scheduler's last checkpoint, with the feeds."""
