"""One crawl's staged rows and dedupe hashes, in one SQLite file on disk.

Each scraped item is merged into the row of its entity (matched by any of its
:func:`~topics_crawler.items.entity_keys`), so the stage holds one row per entity,
whatever the crawl's size, and memory stays flat. The dedupe pipeline's hashes of the
run are stored beside the rows; a key's hashes are *confirmed* only when a row of its
entity is staged, and only confirmed hashes reach the dataset's dedupe state at commit,
in the same step as the rows: what the crawl remembers as exported is always in the
dataset.

The stage commits its SQLite transaction at most every ``commit_interval`` seconds and
before each ``JOBDIR`` journal checkpoint (so a page marked done has its rows staged).
A killed crawl's stage stays on disk; the next crawl into the dataset merges it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Self

from scrapy.settings import BaseSettings

from topics_crawler.items import entity_keys
from topics_crawler.items.merge import merge_records
from topics_crawler.pipelines.dedupe_state import STATE_SUBPATH
from topics_crawler.utils.sqlite import open_sqlite

STAGE_NAME = "stage.sqlite"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS rows (entity INTEGER PRIMARY KEY, item_type TEXT NOT NULL,"
    " record TEXT NOT NULL, merged TEXT)",
    "CREATE INDEX IF NOT EXISTS rows_by_type ON rows (item_type, entity)",
    "CREATE TABLE IF NOT EXISTS keys (key TEXT PRIMARY KEY, entity INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS hashes (key TEXT PRIMARY KEY, hashes TEXT NOT NULL,"
    " confirmed TEXT) WITHOUT ROWID",
)
_LOOKUP_CHUNK = 500
#: Stages open in this process, by path: the dataset extension and the dedupe state share one.
_OPEN: dict[Path, Stage] = {}


def _json(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


class Stage:
    """Rows and hashes of one crawl; writes are durable at :meth:`commit`."""

    def __init__(self, path: Path, commit_interval: float = 1.0) -> None:
        self.path = path
        self.commit_interval = commit_interval
        self._db = open_sqlite(path, _SCHEMA)
        self._last_commit = time.monotonic()

    @classmethod
    def open(cls, path: Path, commit_interval: float = 1.0) -> Self:
        """The stage at ``path``, shared by everyone in this process who asks."""
        path = path.absolute()
        if path not in _OPEN:
            _OPEN[path] = cls(path, commit_interval)
        return _OPEN[path]  # type: ignore[return-value]

    # --- rows ---------------------------------------------------------------------------

    def put(self, item_type: str, record: dict[str, Any]) -> None:
        """Merge ``record`` into the staged row of its entity (a new row for a new entity)."""
        keys = entity_keys(item_type, record)
        found = self._entities_of(keys)
        if not found:
            cursor = self._db.execute(
                "INSERT INTO rows (item_type, record) VALUES (?, ?)", (item_type, _json(record))
            )
            entity = int(cursor.lastrowid or 0)
        else:
            entity, merged = found[0], None
            for other in found:  # oldest first: later arrivals win as the merge says
                row = self._record(other)
                merged = row if merged is None else merge_records(item_type, merged, row)
            assert merged is not None
            merged = merge_records(item_type, merged, record)
            self._db.execute("UPDATE rows SET record = ? WHERE entity = ?", (_json(merged), entity))
            for other in found[1:]:  # one arrival linked two staged entities: now one
                self._db.execute("DELETE FROM rows WHERE entity = ?", (other,))
                self._db.execute("UPDATE keys SET entity = ? WHERE entity = ?", (entity, other))
            keys = entity_keys(item_type, merged)
        self._db.executemany(
            "INSERT INTO keys (key, entity) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET entity = excluded.entity",
            [(key, entity) for key in keys],
        )
        self._db.executemany(
            "UPDATE hashes SET confirmed = hashes WHERE key = ?", [(key,) for key in keys]
        )
        self.maybe_commit()

    def _entities_of(self, keys: list[str]) -> list[int]:
        if not keys:
            return []
        marks = ",".join("?" * len(keys))
        rows = self._db.execute(
            f"SELECT DISTINCT entity FROM keys WHERE key IN ({marks}) ORDER BY entity", keys
        )
        return [int(entity) for (entity,) in rows]

    def _record(self, entity: int) -> dict[str, Any]:
        row = self._db.execute(
            "SELECT COALESCE(merged, record) FROM rows WHERE entity = ?", (entity,)
        ).fetchone()
        return dict(json.loads(row[0])) if row else {}

    def count(self, item_type: str) -> int:
        row = self._db.execute("SELECT COUNT(*) FROM rows WHERE item_type = ?", (item_type,))
        return int(row.fetchone()[0])

    def total(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM rows").fetchone()[0])

    # --- the dataset merge -------------------------------------------------------------

    def start_merge(self, item_type: str) -> None:
        """Forget the existing rows merged in by an earlier, interrupted merge."""
        self._db.execute("UPDATE rows SET merged = NULL WHERE item_type = ?", (item_type,))

    def owners(self, keys: Iterable[str]) -> dict[str, int]:
        """Key → staged entity, for the keys the stage knows."""
        wanted = list(dict.fromkeys(keys))
        owners: dict[str, int] = {}
        for start in range(0, len(wanted), _LOOKUP_CHUNK):
            chunk = wanted[start : start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            owners.update(
                self._db.execute(f"SELECT key, entity FROM keys WHERE key IN ({marks})", chunk)
            )
        return owners

    def absorb(self, item_type: str, entity: int, existing: dict[str, Any]) -> None:
        """Merge an existing dataset row into the staged row of the same entity."""
        merged = merge_records(item_type, existing, self._record(entity))
        self._db.execute("UPDATE rows SET merged = ? WHERE entity = ?", (_json(merged), entity))

    def merged_rows(self, item_type: str) -> Iterator[dict[str, Any]]:
        """The staged rows of ``item_type`` in arrival order, merged with the dataset's."""
        rows = self._db.execute(
            "SELECT COALESCE(merged, record) FROM rows WHERE item_type = ? ORDER BY entity",
            (item_type,),
        )
        for (text,) in rows:
            yield dict(json.loads(text))

    # --- dedupe hashes ------------------------------------------------------------------

    def put_hashes(self, key: str, hashes: Iterable[str]) -> None:
        """This run's hashes for ``key``; confirmed by the next :meth:`put` of its entity."""
        self._db.execute(
            "INSERT INTO hashes (key, hashes) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET hashes = excluded.hashes",
            (key, " ".join(sorted(hashes))),
        )

    def confirmed_hashes(self) -> Iterator[tuple[str, str]]:
        """(key, space-separated hashes) that may enter the dataset's dedupe state."""
        yield from self._db.execute("SELECT key, confirmed FROM hashes WHERE confirmed IS NOT NULL")

    # --- transactions -------------------------------------------------------------------

    def maybe_commit(self) -> None:
        if time.monotonic() - self._last_commit >= self.commit_interval:
            self.commit()

    def commit(self) -> None:
        """Make every staged row and hash durable."""
        self._db.commit()
        self._last_commit = time.monotonic()

    def close(self) -> None:
        _OPEN.pop(self.path, None)
        self._db.commit()
        self._db.close()


def global_state_path(dataset_dir: Path) -> Path:
    """The dataset's dedupe state: entity key → hashes of the arrivals committed."""
    return dataset_dir / STATE_SUBPATH


class StagedDedupeState:
    """The dedupe pipeline's state in a dataset crawl: reads what the dataset committed,
    writes into the run's stage (committed with the rows, see :mod:`.commit`)."""

    def __init__(self, committed: Path, stage: Stage) -> None:
        self.stage = stage
        self._db: sqlite3.Connection | None = None
        if committed.exists():
            self._db = sqlite3.connect(f"{committed.as_uri()}?mode=ro", uri=True)

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Self:
        dataset_dir = Path(settings["DATASET_DIR"])
        stage = Stage.open(Path(settings["DATASET_STAGE"]))
        return cls(global_state_path(dataset_dir), stage)

    def get(self, key: str) -> frozenset[str]:
        if self._db is None:
            return frozenset()
        row = self._db.execute("SELECT hashes FROM seen WHERE key = ?", (key,)).fetchone()
        return frozenset(row[0].split()) if row else frozenset()

    def put(self, key: str, hashes: Iterable[str]) -> None:
        self.stage.put_hashes(key, hashes)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
