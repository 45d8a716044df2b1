"""Each field kind's normaliser: a value from elsewhere (a dict, another item class) into
the kind's documented format.

:class:`topics_crawler.items.fields.Kind` names the normaliser of each kind; the normalize
pipeline applies it per field. A normaliser is ``(value, now) -> (normalised value, source
text for the field's ``*_raw`` companion or None)`` and raises :class:`Unreadable` for a
value it cannot read. They build on the value parsers of :mod:`.values` (which the page
parsers use where they read a value) and are idempotent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from topics_crawler.items.values import (
    clean_body,
    clean_text,
    parse_count,
    parse_reading_time,
    parse_timestamp,
    tag_slug,
    unique,
)
from topics_crawler.urls import canonical_url

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


def as_text(value: Any, now: datetime) -> tuple[str | None, None]:
    if not isinstance(value, str):
        raise Unreadable(value)
    text = clean_text(value)
    return (_LINE_BREAKS_RE.sub(" ", text) if text else None), None


def as_body(value: Any, now: datetime) -> tuple[str | None, None]:
    if not isinstance(value, str):
        raise Unreadable(value)
    return clean_body(value), None


def as_lower(value: Any, now: datetime) -> tuple[str | None, None]:
    text, _ = as_text(value, now)
    return (text.lower() if text else None), None


def as_username(value: Any, now: datetime) -> tuple[str | None, None]:
    text, _ = as_text(value, now)
    return (text or "").lstrip("@") or None, None


def as_domain(value: Any, now: datetime) -> tuple[str | None, None]:
    text, _ = as_lower(value, now)
    return (text or "").rstrip(".") or None, None


def as_language(value: Any, now: datetime) -> tuple[str | None, None]:
    text, _ = as_lower(value, now)
    return (text.replace("_", "-") if text else None), None


def as_url(value: Any, now: datetime) -> tuple[str | None, None]:
    text, _ = as_text(value, now)
    if text is None:
        return None, None
    canonical = canonical_url(text)
    if canonical is None:
        raise Unreadable(value)
    return canonical, None


def as_tag(value: Any, now: datetime) -> tuple[str | None, None]:
    text, _ = as_text(value, now)
    if text is None:
        return None, None
    slug = tag_slug(text)
    if slug is None:
        raise Unreadable(value)
    return slug, None


def as_timestamp(value: Any, now: datetime) -> tuple[str | None, str | None]:
    iso, raw = parse_timestamp(value, now)
    if iso is None and raw is not None:
        raise Unreadable(raw)
    return iso, raw


def as_count(value: Any, now: datetime) -> tuple[int | None, str | None]:
    if isinstance(value, bool):
        raise Unreadable(value)
    count, raw = parse_count(value)
    if count is None and raw is not None:
        raise Unreadable(raw)
    return count, raw


def as_minutes(value: Any, now: datetime) -> tuple[float | None, None]:
    minutes = parse_reading_time(value)
    if minutes is None:
        raise Unreadable(value)
    return minutes, None


def as_share(value: Any, now: datetime) -> tuple[float, None]:
    try:
        share = float(value)
    except (TypeError, ValueError):
        raise Unreadable(value) from None
    if math.isnan(share):
        raise Unreadable(value)
    return share, None


def as_bool(value: Any, now: datetime) -> tuple[bool, None]:
    if isinstance(value, bool):
        return value, None
    if isinstance(value, int | str) and str(value).strip().lower() in _TRUE | _FALSE:
        return str(value).strip().lower() in _TRUE, None
    raise Unreadable(value)


def as_raw(value: Any, now: datetime) -> tuple[str | None, None]:
    if not isinstance(value, str):
        raise Unreadable(value)
    return clean_text(value), None


def as_tag_list(value: Any, now: datetime) -> tuple[list[str], None]:
    if not isinstance(value, list):
        raise Unreadable(value)
    slugs = [as_tag(tag, now)[0] for tag in value]
    return unique([slug for slug in slugs if slug]), None


def as_text_list(value: Any, now: datetime) -> tuple[list[str], None]:
    if not isinstance(value, list):
        raise Unreadable(value)
    texts = [as_text(text, now)[0] for text in value]
    return [text for text in texts if text], None


def as_record_list(value: Any, now: datetime) -> tuple[list[dict[str, str | None]], None]:
    if not isinstance(value, list) or not all(isinstance(entry, dict) for entry in value):
        raise Unreadable(value)
    records = []
    for entry in value:
        records.append({str(key): _optional_text(text, now) for key, text in entry.items()})
    return records, None


def _optional_text(value: Any, now: datetime) -> str | None:
    return None if value is None else as_text(value, now)[0]


def as_sections(value: Any, now: datetime) -> tuple[dict[str, list[str]], None]:
    if not isinstance(value, dict) or not all(isinstance(ids, list) for ids in value.values()):
        raise Unreadable(value)
    sections = {}
    for key, ids in value.items():
        normalised = [as_lower(story_id, now)[0] for story_id in ids]
        sections[str(key)] = unique([story_id for story_id in normalised if story_id])
    return sections, None


def as_is(value: Any, now: datetime) -> tuple[Any, None]:
    return value, None
