"""Where the dedupe pipeline keeps what the run knows of each entity: a SQLite file on disk.

One row per entity (its merged record, keys, hashes, whether it was emitted) and one
per key, so the pipeline's memory does not grow with the crawl: a million-story run
holds its entities on disk, not in RAM. The file is a scratch file of the run (in the
temporary directory, removed at close); nothing in it needs to survive a crash, so it
is written without journal or fsync.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Entity:
    """What this run knows of one entity."""

    record: dict[str, Any]
    """The merged record so far."""
    keys: set[str] = field(default_factory=set)
    """Every key the entity is known under."""
    previous: set[str] = field(default_factory=set)
    """Content hashes the previous run recorded for those keys."""
    seen: set[str] = field(default_factory=set)
    """Content hashes of this run's arrivals."""
    emitted: bool = False
    """Whether a record of the entity has passed in this run."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "record": self.record,
                "keys": sorted(self.keys),
                "previous": sorted(self.previous),
                "seen": sorted(self.seen),
                "emitted": self.emitted,
            },
            ensure_ascii=False,
            separators=(",", ":"),
            default=repr,
        )

    @classmethod
    def from_json(cls, text: str) -> Entity:
        data = json.loads(text)
        return cls(
            record=data["record"],
            keys=set(data["keys"]),
            previous=set(data["previous"]),
            seen=set(data["seen"]),
            emitted=bool(data["emitted"]),
        )


class EntityStore:
    """Entities by id and by key, in a scratch SQLite file."""

    def __init__(self, directory: Path | None = None) -> None:
        self._folder = Path(tempfile.mkdtemp(prefix="topics-dedupe-", dir=directory))
        self._db = sqlite3.connect(self._folder / "entities.sqlite")
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("CREATE TABLE entities (id INTEGER PRIMARY KEY, data TEXT NOT NULL)")
        self._db.execute(
            "CREATE TABLE keys (key TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID"
        )

    def find(self, keys: Iterable[str]) -> list[tuple[int, Entity]]:
        """The entities known under any of ``keys``, with their ids, oldest first (several
        when an arrival carries keys that two entities were known under apart)."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        rows = self._db.execute(
            "SELECT DISTINCT e.id, e.data FROM keys k JOIN entities e ON e.id = k.id"
            f" WHERE k.key IN ({marks}) ORDER BY e.id",
            wanted,
        )
        return [(int(entity_id), Entity.from_json(data)) for entity_id, data in rows]

    def add(self, entity: Entity) -> int:
        cursor = self._db.execute("INSERT INTO entities (data) VALUES (?)", (entity.to_json(),))
        return int(cursor.lastrowid or 0)

    def save(self, entity_id: int, entity: Entity) -> None:
        self._db.execute("UPDATE entities SET data = ? WHERE id = ?", (entity.to_json(), entity_id))

    def remove(self, entity_id: int) -> None:
        """Forget an entity (folded into another; its keys are indexed anew)."""
        self._db.execute("DELETE FROM entities WHERE id = ?", (entity_id,))

    def index(self, entity_id: int, key: str) -> None:
        """Point ``key`` at the entity (a key moves to the entity that claims it last)."""
        self._db.execute(
            "INSERT INTO keys (key, id) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET id = ?",
            (key, entity_id, entity_id),
        )

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM entities").fetchone()[0])

    def close(self) -> None:
        self._db.close()
        shutil.rmtree(self._folder, ignore_errors=True)
