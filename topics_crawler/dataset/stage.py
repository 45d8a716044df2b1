"""One crawl's staged rows, sightings and dedupe hashes, in one SQLite file on disk.

Each scraped item replaces the staged row of its entity (matched by any of its
:func:`~topics_crawler.items.entity_keys`): the dedupe pipeline passes a later arrival
as the entity's merged record, so the last one holds everything the run saw, and the
stage merges nothing. Rows *carried* from the stage of a killed crawl are stored rows of
an earlier run: an arrival for one of them is merged into it by the commit's rule
(:func:`~topics_crawler.items.merge.merge_records`), as the commit merges stored rows.
The stage holds one row per entity, whatever the crawl's size, and memory stays flat.

Every sighting of an entity (changed or not) keeps its counts for the snapshot tables
(one per entity per run). The dedupe pipeline's hashes of the run are stored beside the
rows; a key's hashes are *confirmed* only when a row of its entity is staged, and only
confirmed hashes reach the dataset's dedupe state at commit, in the same step as the
rows: what the crawl remembers as exported is always in the dataset.

The stage commits its SQLite transaction at most every ``commit_interval`` seconds and
before each ``JOBDIR`` journal checkpoint (so a page marked done has its rows staged).
A killed crawl's stage stays on disk; the next crawl into the dataset carries it.
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
from topics_crawler.items.merge import content_of, merge_records
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
    "CREATE TABLE IF NOT EXISTS sightings (key TEXT PRIMARY KEY, item_type TEXT NOT NULL,"
    " record TEXT NOT NULL) WITHOUT ROWID",
)
#: Columns added since the first stages (a killed crawl's stage may lack them).
_ADDED_COLUMNS = {"state": "TEXT", "carried": "INTEGER NOT NULL DEFAULT 0"}
#: ``rows.state`` after the commit compared a row with the stored one.
CHANGED, SAME = "changed", "same"
_LOOKUP_CHUNK = 500
#: Stages open in this process, by path: the dataset extension and the dedupe state share one.
_OPEN: dict[Path, Stage] = {}


def _json(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


class Stage:
    """Rows, sightings and hashes of one crawl; writes are durable at :meth:`commit`."""

    def __init__(self, path: Path, commit_interval: float = 1.0) -> None:
        self.path = path
        self.commit_interval = commit_interval
        self._db = open_sqlite(path, _SCHEMA)
        known = {row[1] for row in self._db.execute("PRAGMA table_info(rows)")}
        for name, declaration in _ADDED_COLUMNS.items():
            if name not in known:
                self._db.execute(f"ALTER TABLE rows ADD COLUMN {name} {declaration}")
        self._db.commit()
        self._last_commit = time.monotonic()

    @classmethod
    def open(cls, path: Path, commit_interval: float = 1.0) -> Self:
        """The stage at ``path``, shared by everyone in this process who asks."""
        path = path.absolute()
        if path not in _OPEN:
            _OPEN[path] = cls(path, commit_interval)
        return _OPEN[path]  # type: ignore[return-value]

    # --- rows ---------------------------------------------------------------------------

    def put(self, item_type: str, record: dict[str, Any], carried: bool = False) -> None:
        """Stage ``record`` as its entity's row: it replaces the row this run staged (the
        dedupe pipeline's merged record holds it); it is merged into a row carried from
        a killed crawl, or into a second staged row its keys link (one entity now)."""
        keys = entity_keys(item_type, record)
        found = self._entities_of(keys)
        if not found:
            cursor = self._db.execute(
                "INSERT INTO rows (item_type, record, carried) VALUES (?, ?, ?)",
                (item_type, _json(record), int(carried)),
            )
            entity = int(cursor.lastrowid or 0)
        else:
            entity = found[0]
            merged = record
            for other in reversed(found):  # newest first into the arrival
                row, row_carried = self._row(other)
                if carried or row_carried or other != entity:
                    merged = merge_records(item_type, row, merged)
            self._db.execute(
                "UPDATE rows SET record = ?, carried = ? WHERE entity = ?",
                (_json(merged), int(carried), entity),
            )
            for other in found[1:]:
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

    def _row(self, entity: int) -> tuple[dict[str, Any], bool]:
        row = self._db.execute(
            "SELECT record, carried FROM rows WHERE entity = ?", (entity,)
        ).fetchone()
        return (dict(json.loads(row[0])), bool(row[1])) if row else ({}, False)

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

    def distinct(self, item_type: str, name: str) -> list[str]:
        """The distinct text values of field ``name`` in the staged rows of ``item_type``
        (merged with the stored ones where the commit did), sorted."""
        rows = self._db.execute(
            "SELECT DISTINCT json_extract(COALESCE(merged, record), ?) FROM rows"
            " WHERE item_type = ?",
            (f"$.{name}", item_type),
        )
        return sorted(value for (value,) in rows if isinstance(value, str) and value)

    def rows(self, item_type: str) -> Iterator[dict[str, Any]]:
        """The staged records of ``item_type`` as the crawl staged them, in arrival order."""
        rows = self._db.execute(
            "SELECT record FROM rows WHERE item_type = ? ORDER BY entity", (item_type,)
        )
        for (text,) in rows:
            yield dict(json.loads(text))

    # --- the dataset merge -------------------------------------------------------------

    def start_merge(self, item_type: str) -> None:
        """Forget the stored rows merged in by an earlier, interrupted merge."""
        self._db.execute(
            "UPDATE rows SET merged = NULL, state = NULL WHERE item_type = ?", (item_type,)
        )

    def keys_of(self, item_type: str) -> list[str]:
        """Every identity key of the staged entities of ``item_type``."""
        rows = self._db.execute(
            "SELECT key FROM keys WHERE key >= ? AND key < ?", (f"{item_type}:", f"{item_type};")
        )
        return [key for (key,) in rows]

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

    def absorb(self, item_type: str, entity: int, stored: dict[str, Any]) -> bool:
        """Merge a stored dataset row into the staged row of its entity (the commit's rule,
        :func:`~topics_crawler.items.merge.merge_records`); False when the merged row says
        nothing the stored one did not (the stored row then stays as it is)."""
        merged = merge_records(item_type, stored, self._record(entity))
        state = self._db.execute("SELECT state FROM rows WHERE entity = ?", (entity,)).fetchone()
        changed = content_of(merged) != content_of(stored) or (state and state[0]) == CHANGED
        self._db.execute(
            "UPDATE rows SET merged = ?, state = ? WHERE entity = ?",
            (_json(merged), CHANGED if changed else SAME, entity),
        )
        return changed

    def merged_rows(self, item_type: str) -> Iterator[tuple[dict[str, Any], bool]]:
        """(row merged with the stored one, True when it replaces a stored row) for the
        staged rows of ``item_type`` that are new or changed, in arrival order."""
        rows = self._db.execute(
            "SELECT COALESCE(merged, record), state FROM rows WHERE item_type = ?"
            " AND (state IS NULL OR state != ?) ORDER BY entity",
            (item_type, SAME),
        )
        for text, state in rows:
            yield dict(json.loads(text)), state == CHANGED

    def unconfirm(self, keys: Iterable[str]) -> None:
        """Keep the hashes of ``keys`` out of the dataset's dedupe state (their rows were
        rejected: a later run must offer them again)."""
        self._db.executemany(
            "UPDATE hashes SET confirmed = NULL WHERE key = ?", [(key,) for key in keys]
        )

    # --- sightings (snapshot rows) ------------------------------------------------------

    def sight(self, item_type: str, key: str, row: dict[str, Any]) -> None:
        """Keep ``row`` (identity, ``scraped_at``, counts) as this run's sighting of the
        entity known by ``key`` (a later sighting in the run replaces it)."""
        self._db.execute(
            "INSERT INTO sightings (key, item_type, record) VALUES (?, ?, ?)"
            " ON CONFLICT(key) DO UPDATE SET record = excluded.record",
            (key, item_type, _json(row)),
        )
        self.maybe_commit()

    def sightings(self, item_type: str) -> Iterator[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT record FROM sightings WHERE item_type = ? ORDER BY key", (item_type,)
        )
        for (text,) in rows:
            yield dict(json.loads(text))

    def sighting_count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM sightings").fetchone()[0])

    def carry(self, other: Stage) -> int:
        """Take the rows, sightings and confirmed hashes of a killed crawl's stage into
        this one (rows as stored rows of an earlier run); how many rows."""
        carried = 0
        for (item_type,) in list(other._db.execute("SELECT DISTINCT item_type FROM rows")):
            for record in other.rows(item_type):
                self.put(item_type, record, carried=True)
                carried += 1
        self._db.executemany(
            "INSERT INTO sightings (key, item_type, record) VALUES (?, ?, ?)"
            " ON CONFLICT(key) DO NOTHING",
            other._db.execute("SELECT key, item_type, record FROM sightings"),
        )
        self._db.executemany(
            "INSERT INTO hashes (key, hashes, confirmed) VALUES (?, ?, ?)"
            " ON CONFLICT(key) DO NOTHING",
            other._db.execute(
                "SELECT key, hashes, confirmed FROM hashes WHERE confirmed IS NOT NULL"
            ),
        )
        self.commit()
        return carried

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
