"""Dedupe pipeline: one record per entity, merged from every arrival, new or changed only.

Keys: ``story_id``; ``author_id`` or ``username``; ``publication_id`` or ``slug``;
``tag`` (an author seen once by id and once by username is one entity when some
arrival carries both). Merge rules: :mod:`._merge`.

Streaming contract, within one run:

* the first arrival of an entity passes;
* a later arrival that changes the merged record passes *as the merged record*
  (``dedupe/merged/<type>``); the dataset writer keeps the last record per key;
* a later arrival that adds nothing is dropped (``dedupe/duplicate/<type>``).

Across runs (:mod:`topics_crawler.dedupe_state`): an arrival whose content hash
(normalised record without ``scraped_at``) the previous run already recorded for
the key is dropped as ``dedupe/unchanged/<type>`` — unless this run has already
emitted the entity, in which case the in-run rules above apply, so the last
emitted record always holds everything this run saw. ``DEDUPE_EMIT_ALL`` turns
the cross-run check off (everything is emitted; the state is still updated).

Memory: the merged records of the current run are held in memory (one per
entity), since a card and its page must meet; the cross-run state is on disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.statscollectors import StatsCollector

from topics_crawler.dedupe_state import DedupeState, open_dedupe_state
from topics_crawler.items import (
    ITEM_CLASSES,
    ITEM_TYPES,
    Item,
    entity_keys,
    item_from_dict,
    record_of,
)
from topics_crawler.pipelines._merge import (
    content_hash,
    content_of,
    merge_records,
)


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


class DedupePipeline:
    """Passes the first, merged and changed records of each entity; drops the rest."""

    def __init__(self, stats: StatsCollector, state: DedupeState, emit_all: bool) -> None:
        self.stats = stats
        self.state = state
        self.emit_all = emit_all
        self._entities: dict[str, Entity] = {}
        self._unsaved: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DedupePipeline:
        settings = crawler.settings
        if not settings.getbool("DEDUPE_ENABLED", True):
            raise NotConfigured("DEDUPE_ENABLED is off")
        assert crawler.stats is not None
        emit_all = settings.getbool("DEDUPE_EMIT_ALL", False)
        return cls(crawler.stats, open_dedupe_state(settings), emit_all)

    def close_spider(self) -> None:
        self.state.close()
        self.stats.set_value("dedupe/entities", len(set(map(id, self._entities.values()))))

    def process_item(self, item: Any) -> Any:
        record = record_of(item)
        if record is None:
            self.stats.inc_value("dedupe/no_key/unknown")
            return item
        item_type = record.get("item_type")
        keys = entity_keys(str(item_type), record) if item_type in ITEM_CLASSES else []
        if not keys:
            self.stats.inc_value(f"dedupe/no_key/{item_type}")
            return item
        entity = self._find(keys)
        if entity is None:
            return self._first_arrival(item, str(item_type), record, keys)
        return self._later_arrival(entity, str(item_type), record)

    def _find(self, keys: list[str]) -> Entity | None:
        for key in keys:
            if key in self._entities:
                return self._entities[key]
        return None

    def _first_arrival(
        self, item: Any, item_type: str, record: dict[str, Any], keys: list[str]
    ) -> Any:
        entity = Entity(record=record)
        self._register(entity, keys)
        arrival = self._remember(entity, record)
        if arrival in entity.previous and not self.emit_all:
            raise self._drop("unchanged", item_type, record)
        entity.emitted = True
        self.stats.inc_value(f"dedupe/new/{item_type}")
        return item if isinstance(item, ITEM_TYPES) else _as_item(record, item)

    def _later_arrival(self, entity: Entity, item_type: str, record: dict[str, Any]) -> Any:
        merged = merge_records(item_type, entity.record, record)
        changed = content_of(merged) != content_of(entity.record)
        if changed:
            entity.record = merged
            self._register(entity, entity_keys(item_type, merged))
        arrival = self._remember(entity, record)
        if not entity.emitted and arrival in entity.previous and not self.emit_all:
            raise self._drop("unchanged", item_type, record)
        if not changed:
            raise self._drop("duplicate", item_type, record)
        entity.emitted = True
        self.stats.inc_value(f"dedupe/merged/{item_type}")
        return _as_item(entity.record, record)

    def _register(self, entity: Entity, keys: list[str]) -> None:
        """Index the entity under new keys, loading what the previous run stored for them."""
        for key in keys:
            if key not in entity.keys:
                entity.keys.add(key)
                entity.previous |= self.state.get(key)
                self._entities[key] = entity
                self._unsaved.add(key)

    def _remember(self, entity: Entity, record: dict[str, Any]) -> str:
        """Store this run's hashes under every key of the entity when they grew; return the hash."""
        arrival = content_hash(record)
        if arrival not in entity.seen or entity.keys & self._unsaved:
            entity.seen.add(arrival)
            for key in entity.keys:
                self.state.put(key, entity.seen)
            self._unsaved -= entity.keys
        return arrival

    def _drop(self, why: str, item_type: str, record: dict[str, Any]) -> DropItem:
        self.stats.inc_value(f"dedupe/{why}/{item_type}")
        return DropItem(f"{why.capitalize()} {item_type} {record.get('url')}", log_level="DEBUG")


def _as_item(record: dict[str, Any], fallback: Any) -> Item | Any:
    """The dataclass of ``record``; ``fallback`` when the record has keys no item has."""
    try:
        return item_from_dict(record)
    except (TypeError, ValueError):
        return fallback
