"""Validate pipeline: an item that breaks its documented format is not exported as data.

Each item is checked against its type's field declarations
(:mod:`topics_crawler.items.fields`): required fields, id / URL / timestamp / count formats,
known ``item_type``. A rejected item is written with its reasons to ``rejects.jsonl`` (see
:mod:`.rejects`), counted as ``validate/rejected/<type>/<reason>`` and dropped
with a ``DropItem`` whose message (logged by Scrapy) names its URL and reasons.

Reasons read ``<field>:<problem>``, e.g. ``story_id:missing``, ``url:not_canonical``,
``claps:negative``, ``published_at:unreadable``, ``item_type:unknown``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import fields
from datetime import datetime
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.statscollectors import StatsCollector

from topics_crawler.items import ITEM_CLASSES, ITEM_TYPES, Item, item_from_dict, record_of
from topics_crawler.items.fields import (
    DOMAIN_RE,
    HEX_ID_RE,
    LANGUAGE_RE,
    POST_ID_RE,
    SLUG_RE,
    TIMESTAMP_RE,
    USERNAME_RE,
    Kind,
    kinds,
    raw_companion,
    required_groups,
    specs_of,
)
from topics_crawler.items.layers import is_empty
from topics_crawler.items.values import tag_slug
from topics_crawler.pipelines.rejects import RejectsWriter, reject_record, rejects_path
from topics_crawler.urls import canonical_url

Check = Callable[[Any], str | None]
"""A format check: None when the (non-None) value is fine, else the problem name."""


def _matches(pattern: Any, problem: str) -> Check:
    def check(value: Any) -> str | None:
        return None if isinstance(value, str) and pattern.match(value) else problem

    return check


def _canonical(value: Any) -> str | None:
    return None if isinstance(value, str) and canonical_url(value) == value else "not_canonical"


def _http_url(value: Any) -> str | None:
    ok = isinstance(value, str) and value.startswith(("https://", "http://"))
    return None if ok else "not_http_url"


def _tag(value: Any) -> str | None:
    return None if isinstance(value, str) and tag_slug(value) == value else "not_slug"


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return "not_text"
    return None if value.strip() else "blank"


def _timestamp(value: Any) -> str | None:
    if not isinstance(value, str) or not TIMESTAMP_RE.match(value):
        return "not_iso"
    try:
        datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return "not_iso"
    return None


def _count(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return "not_int"
    return "negative" if value < 0 else None


def _minutes(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return "not_number"
    return "negative" if value < 0 else None


def _bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else "not_bool"


def _tag_list(value: Any) -> str | None:
    if not isinstance(value, list):
        return "not_list"
    if any(_tag(tag) for tag in value):
        return "bad_tag"
    return "duplicates" if len(set(value)) != len(value) else None


def _text_list(value: Any) -> str | None:
    if not isinstance(value, list):
        return "not_list"
    return "bad_text" if any(_text(text) for text in value) else None


def _record_list(value: Any) -> str | None:
    if not isinstance(value, list):
        return "not_list"
    for record in value:
        if not isinstance(record, dict):
            return "bad_record"
        if not all(isinstance(key, str) and _optional_text(text) for key, text in record.items()):
            return "bad_record"
    return None


def _optional_text(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _sections(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "not_mapping"
    for ids in value.values():
        if not isinstance(ids, list) or not all(_is_post_id(story_id) for story_id in ids):
            return "bad_story_ids"
    return None


def _is_post_id(value: Any) -> bool:
    return isinstance(value, str) and POST_ID_RE.match(value) is not None


def _any(value: Any) -> str | None:
    return None


CHECKS: dict[Kind, Check] = {
    Kind.POST_ID: _matches(POST_ID_RE, "not_post_id"),
    Kind.HEX_ID: _matches(HEX_ID_RE, "not_hex_id"),
    Kind.URL: _canonical,
    Kind.LINK: _http_url,
    Kind.USERNAME: _matches(USERNAME_RE, "bad_username"),
    Kind.SLUG: _matches(SLUG_RE, "not_slug"),
    Kind.TAG: _tag,
    Kind.DOMAIN: _matches(DOMAIN_RE, "bad_domain"),
    Kind.LANGUAGE: _matches(LANGUAGE_RE, "bad_language"),
    Kind.TEXT: _text,
    Kind.BODY: _text,
    Kind.RAW: _text,
    Kind.TIMESTAMP: _timestamp,
    Kind.COUNT: _count,
    Kind.MINUTES: _minutes,
    Kind.BOOL: _bool,
    Kind.TAG_LIST: _tag_list,
    Kind.TEXT_LIST: _text_list,
    Kind.RECORD_LIST: _record_list,
    Kind.SECTIONS: _sections,
    Kind.ITEM_TYPE: _any,
}


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
        problem = CHECKS[kind](value) or _undeclared_members(item_class, name, kind, value)
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
        if not crawler.settings.getbool("VALIDATE_ENABLED", True):
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
