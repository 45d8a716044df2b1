"""Validate pipeline: an item that breaks its documented format is not exported as data.

Each item is checked against its type's field declarations
(:mod:`topics_crawler.items.fields`): required fields, each field's format (the check its
kind declares: id, URL, timestamp, count…), known ``item_type``. A rejected item is
written with its reasons to ``rejects.jsonl`` (see :mod:`.rejects`), counted as
``validate/rejected/<type>/<reason>`` and dropped with a ``DropItem`` whose message
(logged by Scrapy) names its URL and reasons.

Reasons read ``<field>:<problem>``, e.g. ``story_id:missing``, ``url:not_canonical``,
``claps:negative``, ``published_at:unreadable``, ``item_type:unknown``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import fields
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.statscollectors import StatsCollector

from topics_crawler import settings as defaults
from topics_crawler.items import ITEM_CLASSES, ITEM_TYPES, Item, item_from_dict, record_of
from topics_crawler.items.fields import Kind, kinds, raw_companion, required_groups, specs_of
from topics_crawler.items.layers import is_empty
from topics_crawler.pipelines.rejects import RejectsWriter, reject_record, rejects_path


class FieldView(Mapping[str, Any]):
    """A read-only mapping over an item dataclass's fields: validation reads the item
    itself instead of a copy of it."""

    def __init__(self, item: Item) -> None:
        self.item = item
        self._names = [f.name for f in fields(item)]

    def __getitem__(self, name: str) -> Any:
        if name not in self._names:
            raise KeyError(name)
        return getattr(self.item, name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def item_type_of(item: Any) -> tuple[str, Mapping[str, Any] | None, list[str]]:
    """``(type for stats, the item as a mapping, reasons)``; reasons are set when the type
    is unusable. The project's items are read in place (:class:`FieldView`)."""
    record: Mapping[str, Any] | None = (
        FieldView(item) if isinstance(item, ITEM_TYPES) else record_of(item)
    )
    if record is None:
        return "unknown", None, ["item:not_an_item"]
    item_type = record.get("item_type")
    if item_type is None:
        return "unknown", record, ["item_type:missing"]
    if not isinstance(item_type, str) or item_type not in ITEM_CLASSES:
        return "unknown", record, ["item_type:unknown"]
    return item_type, record, []


def validate_record(item_type: str, record: Mapping[str, Any]) -> list[str]:
    """Reasons why ``record`` (of a known type) is not a valid item; empty when it is."""
    item_class = ITEM_CLASSES[item_type]
    field_kinds = kinds(item_class)
    reasons = [f"{name}:unknown_field" for name in record if name not in field_kinds]
    missing = _missing(item_class, record)
    reasons += [f"{'|'.join(names)}:missing" for names in missing]
    reported = {name for names in missing for name in names}
    for name, kind in field_kinds.items():
        value = record.get(name)
        if name in reported:
            continue
        if value is None:
            reasons += _unreadable(item_class, name, record)
            continue
        problem = kind.check(value) or _undeclared_members(item_class, name, kind, value)
        if problem:
            reasons.append(f"{name}:{problem}")
    return reasons


def _undeclared_members(item_class: type, name: str, kind: Kind, value: Any) -> str | None:
    """``unknown_key`` for a record with a key its field does not declare (the Parquet
    struct has no column for it: it would be lost)."""
    if kind is not Kind.RECORD_LIST:
        return None
    members = set(specs_of(item_class)[name].members)
    return "unknown_key" if any(set(record) - members for record in value) else None


def _missing(item_class: type, record: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """Required fields (or groups of alternatives) that are empty."""
    missing = []
    for names in required_groups(item_class):
        if all(is_empty(record.get(name)) for name in names):
            missing.append(names)
    return missing


def _unreadable(item_class: type, name: str, record: Mapping[str, Any]) -> list[str]:
    """A None value whose ``*_raw`` companion holds source text: normalisation failed."""
    companion = raw_companion(item_class, name)
    raw = record.get(companion) if companion else None
    if raw is None:
        return []
    return [f"{name}:{'negative' if str(raw).strip().startswith('-') else 'unreadable'}"]


class ValidatePipeline:
    """Passes valid items on (as dataclasses); rejects the rest with a record and a reason.

    Stats: ``validate/valid/<type>``, ``validate/rejected/<type>``,
    ``validate/rejected/<type>/<reason>`` (one per reason of each rejected item).
    """

    def __init__(self, stats: StatsCollector, rejects: RejectsWriter) -> None:
        self.stats = stats
        self.rejects = rejects

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ValidatePipeline:
        if not crawler.settings.getbool("VALIDATE_ENABLED", defaults.VALIDATE_ENABLED):
            raise NotConfigured("VALIDATE_ENABLED is off")
        assert crawler.stats is not None
        return cls(crawler.stats, RejectsWriter(rejects_path(crawler.settings)))

    def close_spider(self) -> None:
        self.rejects.close()
        if self.rejects.written:
            self.stats.set_value("validate/rejects_file", str(self.rejects.path))

    def process_item(self, item: Any) -> Item:
        item_type, record, reasons = item_type_of(item)
        if record is not None and not reasons:
            reasons = validate_record(item_type, record)
        if not reasons and record is not None:
            self.stats.inc_value(f"validate/valid/{item_type}")
            return item if isinstance(item, ITEM_TYPES) else item_from_dict(dict(record))
        raise self._reject(item_type, record, reasons, item)

    def _reject(
        self, item_type: str, record: Mapping[str, Any] | None, reasons: list[str], item: Any
    ) -> DropItem:
        url = record.get("url") if record else None
        record = dict(record) if record is not None else None
        self.stats.inc_value(f"validate/rejected/{item_type}")
        for reason in reasons:
            self.stats.inc_value(f"validate/rejected/{item_type}/{reason}")
        self.rejects.write(reject_record(item_type, url, reasons, record or item))
        return DropItem(f"Rejected {item_type} {url}: {', '.join(reasons)}", log_level="WARNING")
