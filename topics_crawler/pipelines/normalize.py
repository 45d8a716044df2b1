"""Normalize pipeline: items from elsewhere into their documented format.

The parsers build items normalized (the normalisers of :mod:`topics_crawler.items.values`
applied where each value is read); those pass through untouched. A dict with the same
keys, or another item object, leaves as the matching
dataclass with canonical URLs, int counts, float minutes, UTC timestamps,
NFC-trimmed text and tag slugs. The value normalisers live in
:mod:`topics_crawler.items.values`; this module only applies them per field.

A value that cannot be normalised is never silently dropped: when the field
has a ``*_raw`` companion the field becomes None and the source text goes to
the companion; otherwise the value stays as it came. Either way the validate
pipeline sees it and rejects the item with a reason.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.statscollectors import StatsCollector

from topics_crawler.items import ITEM_CLASSES, ITEM_TYPES, Item, item_from_dict, record_of
from topics_crawler.items.fields import Kind, kinds, raw_companion
from topics_crawler.items.values import (
    clean_text,
    parse_count,
    parse_reading_time,
    parse_timestamp,
    tag_slug,
    unique,
)
from topics_crawler.urls import canonical_url

logger = logging.getLogger(__name__)

_LINE_BREAKS_RE = re.compile(r" *\n[\n ]*")
_TRUE = frozenset({"true", "yes", "1"})
_FALSE = frozenset({"false", "no", "0"})


class Unreadable(ValueError):
    """A value that its field's normaliser cannot read; ``raw`` is its source text."""

    def __init__(self, raw: Any) -> None:
        super().__init__(f"unreadable value {raw!r}")
        self.raw = raw if isinstance(raw, str) else repr(raw)


Normaliser = Callable[[Any, datetime], tuple[Any, str | None]]
"""``(value, now) -> (normalised value, source text to keep in *_raw or None)``."""


def _text(value: Any, now: datetime) -> tuple[str | None, None]:
    if not isinstance(value, str):
        raise Unreadable(value)
    text = clean_text(value)
    return (_LINE_BREAKS_RE.sub(" ", text) if text else None), None


def _body(value: Any, now: datetime) -> tuple[str | None, None]:
    if not isinstance(value, str):
        raise Unreadable(value)
    return unicodedata.normalize("NFC", value).strip() or None, None


def _lower(value: Any, now: datetime) -> tuple[str | None, None]:
    text, _ = _text(value, now)
    return (text.lower() if text else None), None


def _username(value: Any, now: datetime) -> tuple[str | None, None]:
    text, _ = _text(value, now)
    return (text or "").lstrip("@") or None, None


def _domain(value: Any, now: datetime) -> tuple[str | None, None]:
    text, _ = _lower(value, now)
    return (text or "").rstrip(".") or None, None


def _language(value: Any, now: datetime) -> tuple[str | None, None]:
    text, _ = _lower(value, now)
    return (text.replace("_", "-") if text else None), None


def _url(value: Any, now: datetime) -> tuple[str | None, None]:
    text, _ = _text(value, now)
    if text is None:
        return None, None
    canonical = canonical_url(text)
    if canonical is None:
        raise Unreadable(value)
    return canonical, None


def _tag(value: Any, now: datetime) -> tuple[str | None, None]:
    text, _ = _text(value, now)
    if text is None:
        return None, None
    slug = tag_slug(text)
    if slug is None:
        raise Unreadable(value)
    return slug, None


def _timestamp(value: Any, now: datetime) -> tuple[str | None, str | None]:
    iso, raw = parse_timestamp(value, now)
    if iso is None and raw is not None:
        raise Unreadable(raw)
    return iso, raw


def _count(value: Any, now: datetime) -> tuple[int | None, str | None]:
    if isinstance(value, bool):
        raise Unreadable(value)
    count, raw = parse_count(value)
    if count is None and raw is not None:
        raise Unreadable(raw)
    return count, raw


def _minutes(value: Any, now: datetime) -> tuple[float | None, None]:
    minutes = parse_reading_time(value)
    if minutes is None:
        raise Unreadable(value)
    return minutes, None


def _bool(value: Any, now: datetime) -> tuple[bool, None]:
    if isinstance(value, bool):
        return value, None
    if isinstance(value, int | str) and str(value).strip().lower() in _TRUE | _FALSE:
        return str(value).strip().lower() in _TRUE, None
    raise Unreadable(value)


def _raw(value: Any, now: datetime) -> tuple[str | None, None]:
    if not isinstance(value, str):
        raise Unreadable(value)
    return clean_text(value), None


def _tag_list(value: Any, now: datetime) -> tuple[list[str], None]:
    if not isinstance(value, list):
        raise Unreadable(value)
    slugs = [_tag(tag, now)[0] for tag in value]
    return unique([slug for slug in slugs if slug]), None


def _text_list(value: Any, now: datetime) -> tuple[list[str], None]:
    if not isinstance(value, list):
        raise Unreadable(value)
    texts = [_text(text, now)[0] for text in value]
    return [text for text in texts if text], None


def _record_list(value: Any, now: datetime) -> tuple[list[dict[str, str | None]], None]:
    if not isinstance(value, list) or not all(isinstance(entry, dict) for entry in value):
        raise Unreadable(value)
    records = []
    for entry in value:
        records.append({str(key): _optional_text(text, now) for key, text in entry.items()})
    return records, None


def _optional_text(value: Any, now: datetime) -> str | None:
    return None if value is None else _text(value, now)[0]


def _sections(value: Any, now: datetime) -> tuple[dict[str, list[str]], None]:
    if not isinstance(value, dict) or not all(isinstance(ids, list) for ids in value.values()):
        raise Unreadable(value)
    sections = {}
    for key, ids in value.items():
        normalised = [_lower(story_id, now)[0] for story_id in ids]
        sections[str(key)] = unique([story_id for story_id in normalised if story_id])
    return sections, None


def _keep(value: Any, now: datetime) -> tuple[Any, None]:
    return value, None


NORMALISERS: dict[Kind, Normaliser] = {
    Kind.POST_ID: _lower,
    Kind.HEX_ID: _lower,
    Kind.URL: _url,
    Kind.LINK: _text,
    Kind.USERNAME: _username,
    Kind.SLUG: _lower,
    Kind.TAG: _tag,
    Kind.DOMAIN: _domain,
    Kind.LANGUAGE: _language,
    Kind.TEXT: _text,
    Kind.BODY: _body,
    Kind.TIMESTAMP: _timestamp,
    Kind.COUNT: _count,
    Kind.MINUTES: _minutes,
    Kind.BOOL: _bool,
    Kind.RAW: _raw,
    Kind.TAG_LIST: _tag_list,
    Kind.TEXT_LIST: _text_list,
    Kind.RECORD_LIST: _record_list,
    Kind.SECTIONS: _sections,
    Kind.ITEM_TYPE: _keep,
}


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
            out[name], raw = NORMALISERS[kind](out[name], now)
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
                out[name], _ = _raw(out[name], now)
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
        if not crawler.settings.getbool("NORMALIZE_ENABLED", True):
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
