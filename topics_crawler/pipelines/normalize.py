"""Normalize pipeline: items from elsewhere into their documented format.

The parsers build items normalized (the value parsers of :mod:`topics_crawler.items.values`
applied where each value is read); those pass through untouched. A dict with the same
keys, or another item object, leaves as the matching
dataclass with canonical URLs, int counts, float minutes, UTC timestamps,
NFC-trimmed text and tag slugs. Each field kind's normaliser is declared on the kind
(:class:`topics_crawler.items.fields.Kind`); this module only applies them per field.

A value that cannot be normalised is never silently dropped: when the field
has a ``*_raw`` companion the field becomes None and the source text goes to
the companion; otherwise the value stays as it came. Either way the validate
pipeline sees it and rejects the item with a reason.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.statscollectors import StatsCollector

from topics_crawler import settings as defaults
from topics_crawler.items import ITEM_CLASSES, ITEM_TYPES, Item, item_from_dict, record_of
from topics_crawler.items.fields import Kind, kinds, raw_companion
from topics_crawler.items.normalisers import Unreadable
from topics_crawler.items.values import parse_timestamp

logger = logging.getLogger(__name__)


def reference_time(scraped_at: Any) -> datetime:
    """The "now" that relative card dates refer to: the item's ``scraped_at`` when readable.

    An item without a readable ``scraped_at`` is rejected by validation anyway;
    its relative dates resolve against the current time meanwhile.
    """
    iso, raw = parse_timestamp(scraped_at, datetime.now(UTC))
    if iso is None or raw is not None:
        return datetime.now(UTC)
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def normalize_record(item_type: str, record: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Normalised copy of ``record`` (a known ``item_type``) and the fields it could not read.

    Pure and idempotent: normalising the output again changes nothing.
    """
    now = reference_time(record.get("scraped_at"))
    item_class = ITEM_CLASSES[item_type]
    field_kinds = kinds(item_class)
    out = dict(record)
    unreadable: list[str] = []
    for name, kind in field_kinds.items():
        if out.get(name) is None or kind is Kind.RAW:
            continue
        try:
            out[name], raw = kind.normalise(out[name], now)
        except Unreadable as problem:
            unreadable.append(name)
            _keep_unreadable(out, item_class, name, problem.raw)
            continue
        companion = raw_companion(item_class, name)
        if companion and raw is not None:
            out[companion] = raw
    for name, kind in field_kinds.items():
        if kind is Kind.RAW and out.get(name) is not None:
            try:
                out[name], _ = kind.normalise(out[name], now)
            except Unreadable:
                unreadable.append(name)
    return out, unreadable


def _keep_unreadable(out: dict[str, Any], item_class: type, name: str, raw: str) -> None:
    """Field with a ``*_raw`` companion: value None, source text in the companion."""
    companion = raw_companion(item_class, name)
    if companion:
        out[name] = None
        out[companion] = raw


def known_item_type(item: Any) -> tuple[str | None, dict[str, Any] | None]:
    """``(item_type, plain dict)`` of an item or dict of a known type, else ``(None, None)``."""
    record = record_of(item)
    if record is None:
        return None, None
    item_type = record.get("item_type")
    if not isinstance(item_type, str) or item_type not in ITEM_CLASSES:
        return None, None
    return item_type, record


class NormalizePipeline:
    """A guard for items from elsewhere: applies :func:`normalize_record` to dicts and
    other item objects of a known type and returns dataclass items.

    This project's own items are built normalized by the parsers (a test holds every
    fixture's output to it) and pass through unchanged, as the same object
    (``normalize/built_normalized/<type>``).

    Stats: ``normalize/items/<type>``, ``normalize/unreadable/<type>/<field>``,
    ``normalize/not_an_item`` and ``normalize/unknown_fields/<type>`` (passed on as a
    dict for validation to reject),
    ``normalize/errors/<type>`` (a bug in a normaliser; the item passes on as it came).
    """

    def __init__(self, stats: StatsCollector) -> None:
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> NormalizePipeline:
        if not crawler.settings.getbool("NORMALIZE_ENABLED", defaults.NORMALIZE_ENABLED):
            raise NotConfigured("NORMALIZE_ENABLED is off")
        assert crawler.stats is not None
        return cls(crawler.stats)

    def process_item(self, item: Any) -> Any:
        if isinstance(item, ITEM_TYPES):
            self.stats.inc_value(f"normalize/built_normalized/{item.item_type}")
            return item
        item_type, record = known_item_type(item)
        if item_type is None or record is None:
            self.stats.inc_value("normalize/not_an_item")
            return item
        self.stats.inc_value(f"normalize/items/{item_type}")
        try:
            normalised, unreadable = normalize_record(item_type, record)
        except Exception:
            self.stats.inc_value(f"normalize/errors/{item_type}")
            logger.exception("normalize failed for %s %s", item_type, record.get("url"))
            return item
        for name in unreadable:
            self.stats.inc_value(f"normalize/unreadable/{item_type}/{name}")
            logger.debug("unreadable %s.%s in %s", item_type, name, record.get("url"))
        return self._as_dataclass(normalised, item)

    def _as_dataclass(self, record: dict[str, Any], original: Any) -> Item | dict[str, Any]:
        """The dataclass for ``record``; the record itself when it has unknown keys."""
        try:
            return item_from_dict(record)
        except (TypeError, ValueError):
            self.stats.inc_value(f"normalize/unknown_fields/{record['item_type']}")
            return record if isinstance(original, dict) else original
