"""What the dedupe pipeline remembers between runs: entity key → content hashes.

For each entity key (``story:c9700a7cf36d``, ``author:@ev``) the state keeps
the content hashes of the arrivals of the *last run that saw the key* (usually
one; two when a run saw both a listing card and the full page). A later run
compares each arrival's hash with them to skip entities that did not change.

Two implementations behind :class:`DedupeState`: :class:`MemoryDedupeState`
(one process, nothing persisted; the default) and :class:`SqliteDedupeState`
(a file; what ``DEDUPE_STATE`` / ``DATASET_DIR`` select). The Redis one for
distributed crawls is :mod:`topics_crawler.distributed.redis_dedupe_state`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Protocol, cast

from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

from topics_crawler.utils.sqlite import open_sqlite

STATE_SUBPATH = Path(".state") / "dedupe.sqlite"


class DedupeState(Protocol):
    """Key → content hashes of the last run that saw the key."""

    def get(self, key: str) -> frozenset[str]:
        """Hashes stored for ``key``; empty when the key was never stored."""
        ...

    def put(self, key: str, hashes: Iterable[str]) -> None:
        """Replace the hashes stored for ``key``."""
        ...

    def close(self) -> None:
        """Persist what is pending and release resources."""
        ...


class MemoryDedupeState:
    """In-process state: forgets everything when the process ends."""

    def __init__(self) -> None:
        self._hashes: dict[str, str] = {}
        """Key → space-separated hashes (a str is a fifth of a frozenset's size)."""

    def get(self, key: str) -> frozenset[str]:
        return frozenset(self._hashes.get(key, "").split())

    def put(self, key: str, hashes: Iterable[str]) -> None:
        self._hashes[key] = " ".join(sorted(hashes))

    def close(self) -> None:
        """Nothing to persist."""

    def __len__(self) -> int:
        return len(self._hashes)


class SqliteDedupeState:
    """State in one SQLite file (WAL journal, commits every ``batch_size`` writes and on close).

    A crash loses at most the last uncommitted batch, which the next run then
    emits again: the safe direction.
    """

    def __init__(self, path: Path, batch_size: int = 1000) -> None:
        self.path = path
        self.batch_size = batch_size
        self._pending = 0
        self._db = open_sqlite(
            path,
            [
                "CREATE TABLE IF NOT EXISTS seen (key TEXT PRIMARY KEY, hashes TEXT NOT NULL)"
                " WITHOUT ROWID"
            ],
        )

    def get(self, key: str) -> frozenset[str]:
        row = self._db.execute("SELECT hashes FROM seen WHERE key = ?", (key,)).fetchone()
        return frozenset(row[0].split()) if row else frozenset()

    def put(self, key: str, hashes: Iterable[str]) -> None:
        self._db.execute(
            "INSERT INTO seen (key, hashes) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET hashes = excluded.hashes",
            (key, " ".join(sorted(hashes))),
        )
        self._pending += 1
        if self._pending >= self.batch_size:
            self._db.commit()
            self._pending = 0

    def close(self) -> None:
        self._db.commit()
        self._db.close()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM seen").fetchone()[0])


def state_path(settings: BaseSettings) -> Path | None:
    """``DEDUPE_STATE``, else ``<DATASET_DIR>/.state/dedupe.sqlite``, else None (in memory)."""
    explicit = settings.get("DEDUPE_STATE")
    if explicit:
        return Path(explicit)
    dataset_dir = settings.get("DATASET_DIR")
    return Path(dataset_dir) / STATE_SUBPATH if dataset_dir else None


def open_dedupe_state(settings: BaseSettings) -> DedupeState:
    """The state the settings select: ``DEDUPE_STATE_CLASS`` (set by the distributed and
    resume add-ons; a class with ``from_settings``), else see :func:`state_path`."""
    state_class = settings.get("DEDUPE_STATE_CLASS")
    if state_class:
        return cast(DedupeState, load_object(state_class).from_settings(settings))
    path = state_path(settings)
    return SqliteDedupeState(path) if path else MemoryDedupeState()
