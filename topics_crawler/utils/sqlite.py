"""One way to open the project's SQLite files (dedupe state, dataset stage, job journal)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path


def open_sqlite(path: Path, schema: Iterable[str]) -> sqlite3.Connection:
    """A connection to ``path`` (its folder made) in WAL mode with ``synchronous=NORMAL``
    (a commit is durable once the WAL is synced), ``schema``'s statements run and committed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    for statement in schema:
        db.execute(statement)
    db.commit()
    return db
