"""Snapshot tables: what each crawl saw of an entity's counts, appended, never rewritten.

``story_stats.parquet/`` holds one row per story per crawl that saw it (the story's
identity, ``scraped_at`` and every count the item declares: claps, responses, …), also
when nothing changed, so growth over time is one query::

    select story_id, scraped_at, claps from 'story_stats.parquet/*.parquet' order by 1, 2

A story, author or publication whose page answers 404 or 410 gets a row with
``gone = true`` at the time it was found gone (its counts empty); the entity's row in
its table stays. When it was last seen is its latest row with ``gone`` false.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from topics_crawler.dataset.layout import ENTITY_OF, GONE_COLUMN, Entity
from topics_crawler.items import entity_keys
from topics_crawler.items.merge import link_identity
from topics_crawler.items.values import format_timestamp
from topics_crawler.output.exporters import arrow_schema
from topics_crawler.urls import classify_url


def stats_schema(entity: Entity) -> pa.Schema:
    """The snapshot table's columns: identity, ``scraped_at``, counts, ``gone``."""
    full = arrow_schema(entity.item_class)
    columns = [full.field(name) for name in entity.stats_fields]
    return pa.schema([*columns, pa.field(GONE_COLUMN, pa.bool_())])


def sighting(entity: Entity, record: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(key, snapshot row) of one arrival of an entity; None without identity."""
    keys = entity_keys(entity.item_type, record)
    if not keys or entity.stats_stem is None:
        return None
    row = {name: record.get(name) for name in entity.stats_fields}
    row["scraped_at"] = row["scraped_at"] or format_timestamp(datetime.now(UTC))
    row[GONE_COLUMN] = False
    return keys[0], row


def gone_sighting(url: str, when: datetime) -> tuple[Entity, str, dict[str, Any]] | None:
    """(entity type, key, snapshot row) for an entity page that answered "gone"."""
    link = classify_url(url)
    key = link_identity(link.kind, link.key) if link else None
    if key is None:
        return None
    entity = ENTITY_OF.get(key.split(":", 1)[0])
    if entity is None or entity.stats_stem is None:
        return None
    identity = _identity_of(entity, key)
    if identity is None:
        return None
    row: dict[str, Any] = dict.fromkeys(entity.stats_fields)
    row |= identity
    row["scraped_at"] = format_timestamp(when)
    row[GONE_COLUMN] = True
    return entity, key, row


def _identity_of(entity: Entity, key: str) -> dict[str, str] | None:
    """The identity field and value a key stands for (``author:@ada`` → username ada)."""
    text = key.split(":", 1)[1]
    for name in entity.keys:
        for value in (text, text[1:]):
            if value and entity_keys(entity.item_type, {name: value}) == [key]:
                return {name: value}
    return None
