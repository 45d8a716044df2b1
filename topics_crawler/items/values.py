"""Pure value normalisers: counts, reading times, timestamps, text and tag slugs.

Parsers call these where a page gives a value in source form; the normalize
pipeline applies them again to every item (they are idempotent), so items
from any source end in one well-defined format.
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import unquote

ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"

#: A count: digits grouped by thousands with one separator (``1,234``, ``1.234``,
#: ``1 234``, ``1'234``, no-break spaces), or plain digits with an optional decimal part
#: (only meaningful before a ``K``/``M``/``B`` suffix: ``1.2K``, ``1,2K``).
_COUNT_RE = re.compile(
    r"^\s*(?P<num>\d{1,3}(?P<sep>[,.'\u00a0\u202f ])\d{3}(?:(?P=sep)\d{3})*(?![\d])"
    r"|\d+(?:[.,]\d+)?)(?:\s*(?P<suffix>[kKmMbB])\b)?(?![\d.,])"
)
_SUFFIX = {"k": 1_000, "m": 1_000_000, "b": 1_000_000_000}
_READING_RE = re.compile(r"(\d+(?:\.\d+)?)\s*min", re.IGNORECASE)
_RELATIVE_RE = re.compile(
    r"^(?P<n>\d+|an?|one)\s*(?P<unit>s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|"
    r"d|days?|w|wk|wks|weeks?|mo|months?|y|yr|yrs|years?)\s+ago$",
    re.IGNORECASE,
)
_UNIT_SECONDS = {
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "w": 604800, "wk": 604800, "wks": 604800, "week": 604800, "weeks": 604800,
    "mo": 2592000, "month": 2592000, "months": 2592000,
    "y": 31536000, "yr": 31536000, "yrs": 31536000, "year": 31536000, "years": 31536000,
}  # fmt: skip
_DAY_FORMATS = ("%b %d, %Y", "%B %d, %Y", "%d %b %Y", "%d %B %Y", "%Y-%m-%d")
_DAY_NO_YEAR_FORMATS = ("%b %d", "%B %d")
_SLUG_STRIP_RE = re.compile(r"[\W_]+")
#: Blank runs that fold to one space: two or more blanks, or a lone non-space blank
#: (a lone space is left alone, so ordinary prose needs no substitution at all).
_BLANKS_RE = re.compile(r"[ \t\r\f\v]{2,}|[\t\r\f\v]")
_LINE_EDGE_RE = re.compile(r" *\n *")


def clean_text(value: Any) -> str | None:
    """Trimmed, NFC-normalised text with runs of white space folded; None when empty."""
    if value is None:
        return None
    text = unicodedata.normalize("NFC", str(value)).replace("\u00a0", " ")
    if "  " in text or not text.isprintable():  # else there is nothing to fold (fast path)
        text = _BLANKS_RE.sub(" ", text)
        if "\n" in text:
            text = _LINE_EDGE_RE.sub("\n", text)
    return text.strip() or None


def parse_count(value: Any) -> tuple[int | None, str | None]:
    """``(count, raw)`` from ``33159``, ``"1,234"``, ``"1.2K"``, ``"3M"``, ``"23 responses"``.

    ``raw`` is the source text when abbreviation loses precision, else None.
    Negative, boolean or unreadable values give ``(None, raw text or None)``.
    """
    if value is None or isinstance(value, bool):
        return None, None
    if isinstance(value, int):
        return (value, None) if value >= 0 else (None, str(value))
    if isinstance(value, float):
        if not math.isfinite(value) or value < 0 or value != int(value):
            return None, str(value)
        return int(value), None
    text = clean_text(value)
    if text is None:
        return None, None
    match = _COUNT_RE.match(text)
    if not match:
        return None, text
    digits, separator, suffix = match.group("num", "sep", "suffix")
    if suffix:
        if separator in (".", ",") and digits.count(separator) == 1:  # 1.234K: a decimal
            separator = None
        number = float(digits.replace(separator, "") if separator else digits.replace(",", "."))
        return round(number * _SUFFIX[suffix.lower()]), text
    if separator:
        return int(digits.replace(separator, "")), None
    if not digits.isdigit():  # 1.5 claps: not a count
        return None, text
    return int(digits), None


def parse_reading_time(value: Any) -> float | None:
    """Minutes as float from ``3.32``, ``"5 min read"``, ``"5"``; None when unreadable."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if value >= 0 else None
    text = str(value).strip()
    match = _READING_RE.search(text)
    if match:
        return float(match.group(1))
    try:
        minutes = float(text)
    except ValueError:
        return None
    return minutes if minutes >= 0 else None


def format_timestamp(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` in UTC; naive datetimes are taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime(ISO_FORMAT)


def parse_timestamp(value: Any, now: datetime | None = None) -> tuple[str | None, str | None]:
    """``(iso, raw)`` from epoch ms/s, ISO 8601, RFC 822, ``"Oct 29, 2016"``, ``"Oct 29"``
    or card text relative to ``now`` (``"1d ago"``, ``"Just now"``, ``"Yesterday"``).

    ``raw`` keeps the source text when the value is relative or day-only.
    """
    if value is None or isinstance(value, bool):
        return None, None
    if isinstance(value, int | float):
        if value <= 0:
            return None, str(value)
        seconds = value / 1000 if value > 10_000_000_000 else value
        try:
            return format_timestamp(datetime.fromtimestamp(seconds, UTC)), None
        except (OverflowError, OSError, ValueError):
            return None, str(value)
    text = clean_text(value)
    if text is None:
        return None, None
    if text.isdigit():
        return parse_timestamp(int(text), now)
    iso = _parse_iso(text)
    if iso is not None:
        return format_timestamp(iso), None
    try:
        return format_timestamp(parsedate_to_datetime(text)), None
    except (TypeError, ValueError, IndexError):
        pass
    for fmt in _DAY_FORMATS:
        try:
            return format_timestamp(datetime.strptime(text, fmt)), text
        except ValueError:
            continue
    reference = now or datetime.now(UTC)
    relative = _parse_relative(text, reference)
    if relative is not None:
        return format_timestamp(relative), text
    for fmt in _DAY_NO_YEAR_FORMATS:
        try:
            day = datetime.strptime(f"{text} {reference.year}", f"{fmt} %Y")
        except ValueError:
            continue
        if day.replace(tzinfo=UTC) > reference:
            day = day.replace(year=reference.year - 1)
        return format_timestamp(day), text
    return None, text


def _parse_iso(text: str) -> datetime | None:
    candidate = text.replace("Z", "+00:00") if text.endswith("Z") else text
    try:
        moment = datetime.fromisoformat(candidate)
    except ValueError:
        return None
    if "T" not in text and " " not in text and moment.tzinfo is None and len(text) == 10:
        return None  # a bare date is handled (and kept raw) with the day formats
    return moment


def _parse_relative(text: str, now: datetime) -> datetime | None:
    lowered = text.lower()
    if lowered in {"just now", "now", "today"}:
        return now
    if lowered == "yesterday":
        return now - timedelta(days=1)
    match = _RELATIVE_RE.match(lowered)
    if not match:
        return None
    count_text = match.group("n")
    count = 1 if count_text in {"a", "an", "one"} else int(count_text)
    return now - timedelta(seconds=count * _UNIT_SECONDS[match.group("unit")])


def tag_slug(value: Any) -> str | None:
    """Medium tag slug from a slug, a display name or a tag URL (``"Machine Learning"`` →
    ``machine-learning``). Letters outside ASCII are kept: ``compétition`` is its own tag."""
    text = clean_text(value)
    if text is None:
        return None
    if "/tag/" in text:
        text = text.split("/tag/", 1)[1].split("/")[0].split("?")[0]
    if text.lower().startswith("tag:"):
        text = text[4:]
    slug = _SLUG_STRIP_RE.sub("-", unicodedata.normalize("NFC", unquote(text)).lower()).strip("-")
    return slug or None


def unique(values: list[str]) -> list[str]:
    """Values in first-seen order without duplicates or empties."""
    seen: set[str] = set()
    out = []
    for value in values:
        if value and value not in seen:
            seen.add(value)
            out.append(value)
    return out
