"""Which stored rows are the run's entities: found by their identity columns alone.

A commit reads only the identity columns of each part (``story_id``; ``author_id`` and
``username``; …), normalised as :func:`~topics_crawler.items.entity_keys` does (trimmed,
lowercased), and tests them against the staged keys in Arrow. A part without a match is
not read further; the matched rows are merged with the staged ones
(:meth:`~topics_crawler.dataset.stage.Stage.absorb`, the one merge rule).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from topics_crawler.dataset.layout import Entity
from topics_crawler.dataset.rows import read_part, strings
from topics_crawler.dataset.stage import Stage
from topics_crawler.items import entity_keys
from topics_crawler.output.exporters import records_of


def key_prefixes(entity: Entity) -> dict[str, str]:
    """Identity field → the text its keys start with (``username`` → ``author:@``)."""
    out = {}
    for name in entity.keys:
        (probe,) = entity_keys(entity.item_type, {name: "x"})
        out[name] = probe[:-1]
    return out


def values_by_field(entity: Entity, keys: Iterable[str]) -> dict[str, pa.Array]:
    """The staged identity values per identity field, as the stored columns hold them
    (an ambiguous key counts for every field its prefix fits)."""
    prefixes = key_prefixes(entity)
    longest = max(len(prefix) for prefix in prefixes.values())
    values: dict[str, list[str]] = {name: [] for name in prefixes}
    for key in keys:
        fits = [(len(p), n) for n, p in prefixes.items() if key.startswith(p)]
        best = max(length for length, _ in fits) if fits else longest + 1
        for length, name in fits:
            if length == best:
                values[name].append(key[length:])
    return {name: strings(found) for name, found in values.items() if found}


def matches(ids: pa.Table, values: dict[str, pa.Array]) -> pa.ChunkedArray | None:
    """Rows of ``ids`` whose identity (trimmed, lowercased) is among ``values``."""
    mask = None
    for name, value_set in values.items():
        if name not in ids.column_names:
            continue
        column = ids.column(name)
        if not pa.types.is_string(column.type):
            continue
        found = pc.is_in(pc.utf8_lower(pc.utf8_trim_whitespace(column)), value_set=value_set)
        mask = found if mask is None else pc.or_(mask, found)
    return mask


@dataclass
class Touched:
    """A stored part holding staged entities: which of its entities the run changed."""

    path: Path
    name: str
    changed_keys: list[str]


def absorb_stored(
    entity: Entity, stage: Stage, paths: list[Path], names: dict[Path, str]
) -> list[Touched]:
    """Merge every stored row of a staged entity into its staged row; the parts holding
    rows that the run changed."""
    values = values_by_field(entity, stage.keys_of(entity.item_type))
    touched = []
    for path in paths if values else ():
        columns = [n for n in entity.keys if n in pq.ParquetFile(path).schema_arrow.names]
        mask = matches(read_part(path, columns), values)
        if mask is None or not pc.any(mask).as_py():
            continue
        matched = read_part(path).filter(mask)
        changed = []
        for stored in records_of(matched):
            keys = entity_keys(entity.item_type, stored)
            owners = stage.owners(keys)
            owner = next((owners[key] for key in keys if key in owners), None)
            if owner is not None and stage.absorb(entity.item_type, owner, stored):
                changed += keys
        if changed:
            touched.append(Touched(path, names[path], changed))
    return touched


def without_keys(entity: Entity, table: pa.Table, keys: list[str]) -> pa.Table:
    """``table`` without the rows known under ``keys``."""
    if not keys:
        return table
    values = values_by_field(entity, keys)
    mask = matches(table.select([n for n in entity.keys if n in table.column_names]), values)
    return table if mask is None else table.filter(pc.invert(mask))
