"""Each field kind's check: whether a (non-None) value is in the kind's documented format.

:class:`topics_crawler.items.fields.Kind` names the check of each kind; the validate
pipeline applies it per field. A check returns None for a good value, else the problem's
name (``not_post_id``, ``not_canonical``, ``negative``, ``out_of_range``…), which the
rejected item's reason carries (``<field>:<problem>``). Counts and times are range-checked
here as where they are read (:mod:`.values`): a count past ``int64``, a reading time that
is no finite number, a time that is not :func:`~.values.plausible` is ``out_of_range``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from topics_crawler.items.access import ACCESS_LEVELS
from topics_crawler.items.listing import LISTING_SOURCES
from topics_crawler.items.values import (
    COUNT_MAX,
    ISO_FORMAT,
    NUMBER_TEXT_RE,
    moment_of,
    parse_count,
    plausible,
    tag_slug,
)
from topics_crawler.urls import POST_ID_RE, canonical_url

HEX_ID_RE = re.compile(r"^[0-9a-f]{8,16}$")
USERNAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9\-_]{0,99}$")
DOMAIN_RE = re.compile(r"^[a-z0-9]([a-z0-9\-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9\-]*[a-z0-9])?)+$")
LANGUAGE_RE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,8})?$")
TIMESTAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
SOURCE_RE = re.compile(r"^[a-z]+(\+[a-z]+)*$")

Check = Callable[[Any], str | None]
"""A format check: None when the (non-None) value is fine, else the problem name."""


def matches(pattern: Any, problem: str) -> Check:
    def check(value: Any) -> str | None:
        return None if isinstance(value, str) and pattern.match(value) else problem

    return check


def check_canonical(value: Any) -> str | None:
    return None if isinstance(value, str) and canonical_url(value) == value else "not_canonical"


def check_http_url(value: Any) -> str | None:
    ok = isinstance(value, str) and value.startswith(("https://", "http://"))
    return None if ok else "not_http_url"


def check_tag(value: Any) -> str | None:
    return None if isinstance(value, str) and tag_slug(value) == value else "not_slug"


def check_text(value: Any) -> str | None:
    if not isinstance(value, str):
        return "not_text"
    return None if value.strip() else "blank"


def check_timestamp(value: Any) -> str | None:
    if not isinstance(value, str) or not TIMESTAMP_RE.match(value):
        return "not_iso"
    try:
        moment = datetime.strptime(value, ISO_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return "not_iso"
    return None if plausible(moment) else "out_of_range"


def check_count(value: Any) -> str | None:
    if isinstance(value, str) and NUMBER_TEXT_RE.match(value) and parse_count(value)[0] is None:
        return refusal(value, numeric=True)  # a number kept as it came, that no count holds
    if isinstance(value, bool) or not isinstance(value, int):
        return "not_int"
    if value < 0:
        return "negative"
    return "out_of_range" if value > COUNT_MAX else None


def check_minutes(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "not_number"
    if isinstance(value, float) and math.isnan(value):
        return "not_number"
    if value < 0:
        return "negative"
    fits = value <= COUNT_MAX if isinstance(value, int) else math.isfinite(value)
    return None if fits else "out_of_range"


def refusal(raw: str, *, numeric: bool = False, timestamp: bool = False) -> str:
    """Why a normaliser gave no value for the source text ``raw`` (of a count, reading
    time or time when ``numeric``; of a time when ``timestamp``): ``negative``,
    ``out_of_range`` (a number or a time that does not fit) or ``unreadable``."""
    text = raw.strip()
    if text.startswith("-"):
        return "negative"
    if timestamp and moment_of(text) is not None:
        return "out_of_range"
    if numeric and NUMBER_TEXT_RE.match(text):
        return "out_of_range"
    return "unreadable"


def check_share(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return "not_number"
    return None if 0 <= value <= 1 else "not_share"


def check_access(value: Any) -> str | None:
    return None if value in ACCESS_LEVELS else "bad_access"


def check_listing(value: Any) -> str | None:
    return None if value in LISTING_SOURCES else "bad_listing"


def check_bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else "not_bool"


def check_tag_list(value: Any) -> str | None:
    if not isinstance(value, list):
        return "not_list"
    if any(check_tag(tag) for tag in value):
        return "bad_tag"
    return "duplicates" if len(set(value)) != len(value) else None


def check_text_list(value: Any) -> str | None:
    if not isinstance(value, list):
        return "not_list"
    return "bad_text" if any(check_text(text) for text in value) else None


def check_record_list(value: Any) -> str | None:
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


def check_sections(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "not_mapping"
    for ids in value.values():
        if not isinstance(ids, list) or not all(_is_post_id(story_id) for story_id in ids):
            return "bad_story_ids"
    return None


def _is_post_id(value: Any) -> bool:
    return isinstance(value, str) and POST_ID_RE.match(value) is not None


def check_any(value: Any) -> str | None:
    return None
