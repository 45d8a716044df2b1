"""A table of the dataset: a directory of Parquet parts that readers glob as one table.

``stories.parquet/part-000012-000.parquet`` … (the name says which commit wrote it). A
commit adds parts for what the run brought, rewrites only the parts holding rows it
changed, and merges small parts (:func:`plan_merges`), so its cost follows the run, not
the table. A dataset written before parts existed holds one file at the table's path:
:func:`part_paths` reads it as the table's only part until a commit adopts it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pyarrow as pa
import pyarrow.parquet as pq

from topics_crawler.output.exporters import DEFAULT_COMPRESSION

PART_PREFIX = "part-"
PART_GLOB = f"{PART_PREFIX}*.parquet"
#: A part stops growing at this size on disk: one changed row rewrites at most this much.
PART_MAX_BYTES = 32 * 2**20
#: ... and at this many rows (a row of a synthetic story is a few bytes).
PART_MAX_ROWS = 65_536
#: Parts below this size are merged once :data:`MERGE_FANOUT` of them pile up; each
#: tier above holds parts ``MERGE_FANOUT`` times larger, up to :data:`PART_MAX_BYTES`.
MERGE_BASE_BYTES = 512 * 2**10
MERGE_FANOUT = 8


@dataclass(frozen=True)
class Part:
    """One Parquet file of a table: its name in the table, rows and bytes on disk."""

    name: str
    rows: int
    bytes: int


def part_name(commit: int, index: int) -> str:
    return f"{PART_PREFIX}{commit:06d}-{index:03d}.parquet"


def part_paths(table: Path) -> list[Path]:
    """The table's parts in name order; a legacy single file is its one part."""
    if table.is_file():
        return [table]
    if not table.is_dir():
        return []
    return sorted(table.glob(PART_GLOB))


def describe(path: Path, name: str | None = None) -> Part:
    """The :class:`Part` of a written file (rows from its footer)."""
    rows = int(pq.ParquetFile(path).metadata.num_rows)
    return Part(name or path.name, rows, path.stat().st_size)


def tier(size: int) -> int | None:
    """The merge tier of a part of ``size`` bytes; None for a full part (never merged)."""
    if size >= PART_MAX_BYTES:
        return None
    level, bound = 0, MERGE_BASE_BYTES
    while size >= bound:
        level, bound = level + 1, bound * MERGE_FANOUT
    return level


def plan_merges(parts: Iterable[Part]) -> list[list[Part]]:
    """Groups of parts to merge into one part each: any tier holding
    :data:`MERGE_FANOUT` parts or more (size-tiered, as LSM trees compact). Every row
    is rewritten about once per tier over its life; a table keeps at most
    ``MERGE_FANOUT - 1`` parts per tier below the full ones."""
    tiers: dict[int, list[Part]] = {}
    for part in parts:
        level = tier(part.bytes)
        if level is not None and part.rows < PART_MAX_ROWS:
            tiers.setdefault(level, []).append(part)
    return [group for _, group in sorted(tiers.items()) if len(group) >= MERGE_FANOUT]


class PartWriter:
    """Write Arrow tables into new parts of one table, starting a new part when the
    current one reaches :data:`PART_MAX_BYTES` or :data:`PART_MAX_ROWS`."""

    def __init__(
        self, directory: Path, schema: pa.Schema, names: Iterator[str], row_group_size: int
    ) -> None:
        self.directory = directory
        self.schema = schema
        self.names = names
        self.row_group_size = row_group_size
        self.written: list[Part] = []
        self._file: IO[bytes] | None = None
        self._writer: pq.ParquetWriter | None = None
        self._name = ""
        self._rows = 0

    def write(self, table: pa.Table, empty_ok: bool = False) -> None:
        """Write ``table``'s rows (``empty_ok``: a part even for no row)."""
        if empty_ok and not table.num_rows:
            self._open()
        for start in range(0, table.num_rows, self.row_group_size):
            writer = self._open()
            chunk = table.slice(start, self.row_group_size)
            room = PART_MAX_ROWS - self._rows
            if chunk.num_rows > room:
                writer.write_table(chunk.slice(0, room), row_group_size=self.row_group_size)
                self._rows += room
                self._close()
                self.write(chunk.slice(room))
                continue
            writer.write_table(chunk, row_group_size=self.row_group_size)
            self._rows += chunk.num_rows
            assert self._file is not None
            if self._rows >= PART_MAX_ROWS or self._file.tell() >= PART_MAX_BYTES:
                self._close()

    def _open(self) -> pq.ParquetWriter:
        if self._writer is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._name = next(self.names)
            self._file = (self.directory / self._name).open("wb")
            self._writer = pq.ParquetWriter(
                self._file, self.schema, compression=DEFAULT_COMPRESSION
            )
            self._rows = 0
        return self._writer

    def _close(self) -> None:
        if self._writer is None or self._file is None:
            return
        self._writer.close()
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self.written.append(
            Part(self._name, self._rows, (self.directory / self._name).stat().st_size)
        )
        self._writer = self._file = None

    def close(self) -> list[Part]:
        """Finish the last part; every part written (flushed to disk)."""
        self._close()
        return self.written


def read_table(table: Path, columns: list[str] | None = None) -> pa.Table:
    """Every row of a table (all its parts; a legacy single file too) as one Arrow table;
    ``columns`` that a part lacks read as nulls. Empty when the table does not exist."""
    pieces = []
    for path in part_paths(table):
        part = pq.ParquetFile(path)
        names = part.schema_arrow.names
        piece = part.read(columns=[c for c in columns if c in names] if columns else None)
        pieces.append(piece)
    if not pieces:
        return pa.table({})
    return pa.concat_tables(pieces, promote_options="default")


def table_rows(table: Path) -> int:
    """Rows of a table, from its parts' footers."""
    return sum(int(pq.ParquetFile(path).metadata.num_rows) for path in part_paths(table))
