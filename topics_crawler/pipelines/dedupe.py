"""Dedupe pipeline: one record per entity, merged from every arrival, new or changed only.

Keys: ``story_id``; ``author_id`` or ``username``; ``publication_id`` or ``slug``;
``tag`` (an author seen once by id and once by username is one entity when some
arrival carries both). Merge rules: :mod:`topics_crawler.items.merge`.

Streaming contract, within one run:

* the first arrival of an entity passes;
* a later arrival that changes the merged record passes *as the merged record*
  (``dedupe/merged/<type>``);
* a later arrival that adds nothing is dropped (``dedupe/duplicate/<type>``);
* an arrival carrying keys that two entities were known under apart (an author seen
  by id, then by username, then with both) joins them: their records are merged,
  oldest first, with it, and the result passes (``dedupe/linked/<type>``).

So every record that passes for an entity is the merge of all of this run's arrivals of
it (:func:`topics_crawler.items.merge.merge_records`), and the last one passed holds
everything the run saw: a consumer keeps the last record per entity key and merges
nothing (the dataset stage; the dataset commit merges that record with the stored row).

Across runs (:mod:`topics_crawler.pipelines.dedupe_state`): an arrival whose content hash
(normalised record without ``scraped_at``) the previous run already recorded for
the key is dropped as ``dedupe/unchanged/<type>`` — unless this run has already
emitted the entity, in which case the in-run rules above apply, so the last
emitted record always holds everything this run saw. ``DEDUPE_EMIT_ALL`` turns
the cross-run check off (everything is emitted; the state is still updated).

Memory: the merged records of the current run (one per entity, since a card and its
page must meet) are kept on disk in a scratch SQLite file (:mod:`._entity_store`), so
memory does not grow with the crawl; the cross-run state is on disk too.
"""

from __future__ import annotations

from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.statscollectors import StatsCollector

from topics_crawler import settings as defaults
from topics_crawler.items import (
    ITEM_CLASSES,
    ITEM_TYPES,
    Item,
    entity_keys,
    item_from_dict,
    record_of,
)
from topics_crawler.items.merge import (
    content_hash,
    merge_records,
)
from topics_crawler.pipelines._entity_store import Entity, EntityStore
from topics_crawler.pipelines.dedupe_state import DedupeState, open_dedupe_state


class SeenAgain(DropItem):
    """An arrival dropped because the entity did not change (``unchanged``: as a previous
    run recorded it; ``duplicate``: as this run emitted it). The entity was still seen:
    the dataset's snapshot tables count it."""


class DedupePipeline:
    """Passes the first, merged and changed records of each entity; drops the rest."""

    def __init__(self, stats: StatsCollector, state: DedupeState, emit_all: bool) -> None:
        self.stats = stats
        self.state = state
        self.emit_all = emit_all
        self._entities = EntityStore()
        self._unsaved: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DedupePipeline:
        settings = crawler.settings
        if not settings.getbool("DEDUPE_ENABLED", defaults.DEDUPE_ENABLED):
            raise NotConfigured("DEDUPE_ENABLED is off")
        assert crawler.stats is not None
        emit_all = settings.getbool("DEDUPE_EMIT_ALL", defaults.DEDUPE_EMIT_ALL)
        return cls(crawler.stats, open_dedupe_state(settings), emit_all)

    def close_spider(self) -> None:
        self.state.close()
        self.stats.set_value("dedupe/entities", len(self._entities))
        self._entities.close()

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
        found = self._entities.find(keys)
        if not found:
            entity = Entity(record=record)
            entity_id = self._entities.add(entity)
            try:
                return self._first_arrival(item, entity_id, entity, str(item_type), keys)
            finally:
                self._entities.save(entity_id, entity)
        entity_id, entity = self._join(found, str(item_type))
        try:
            return self._later_arrival(
                entity_id, entity, str(item_type), record, linked=len(found) > 1
            )
        finally:
            self._entities.save(entity_id, entity)

    def _first_arrival(
        self, item: Any, entity_id: int, entity: Entity, item_type: str, keys: list[str]
    ) -> Any:
        record = entity.record
        self._register(entity_id, entity, keys)
        arrival = self._remember(entity, record)
        if arrival in entity.previous and not self.emit_all:
            raise self._drop("unchanged", item_type, record)
        entity.emitted = True
        self.stats.inc_value(f"dedupe/new/{item_type}")
        return item if isinstance(item, ITEM_TYPES) else _as_item(record, item)

    def _join(self, found: list[tuple[int, Entity]], item_type: str) -> tuple[int, Entity]:
        """One entity of those an arrival's keys found: the oldest, the others' records
        merged into it in the order they were first seen, their keys and hashes its own."""
        entity_id, entity = found[0]
        for other_id, other in found[1:]:
            self.stats.inc_value(f"dedupe/linked/{item_type}")
            entity.record = merge_records(item_type, entity.record, other.record)
            entity.previous |= other.previous
            entity.seen |= other.seen
            entity.emitted = entity.emitted or other.emitted
            self._entities.remove(other_id)
            self._unsaved |= other.keys  # their hashes are now the joined entity's
            for key in other.keys:
                entity.keys.add(key)
                self._entities.index(entity_id, key)
        return entity_id, entity

    def _later_arrival(
        self,
        entity_id: int,
        entity: Entity,
        item_type: str,
        record: dict[str, Any],
        linked: bool = False,
    ) -> Any:
        merged = merge_records(item_type, entity.record, record)
        # a join is a change: no record passed so far holds what the joined entities knew
        changed = linked or content_hash(merged) != content_hash(entity.record)
        if changed:
            entity.record = merged
            self._register(entity_id, entity, entity_keys(item_type, merged))
        arrival = self._remember(entity, record)
        if not entity.emitted and arrival in entity.previous and not self.emit_all:
            raise self._drop("unchanged", item_type, record)
        if not changed:
            raise self._drop("duplicate", item_type, record)
        entity.emitted = True
        self.stats.inc_value(f"dedupe/merged/{item_type}")
        return _as_item(entity.record, record)

    def _register(self, entity_id: int, entity: Entity, keys: list[str]) -> None:
        """Index the entity under new keys, loading what the previous run stored for them."""
        for key in keys:
            if key not in entity.keys:
                entity.keys.add(key)
                entity.previous |= self.state.get(key)
                self._entities.index(entity_id, key)
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

    def _drop(self, why: str, item_type: str, record: dict[str, Any]) -> SeenAgain:
        self.stats.inc_value(f"dedupe/{why}/{item_type}")
        return SeenAgain(f"{why.capitalize()} {item_type} {record.get('url')}", log_level="DEBUG")


def _as_item(record: dict[str, Any], fallback: Any) -> Item | Any:
    """The dataclass of ``record``; ``fallback`` when the record has keys no item has."""
    try:
        return item_from_dict(record)
    except (TypeError, ValueError):
        return fallback
