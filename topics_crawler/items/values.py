"""Pure value normalisers: counts, reading times, timestamps, text and tag slugs.

Parsers call these where a page gives a value in source form; the normalize
pipeline applies them again to every item (they are idempotent), so items
from any source end in one well-defined format.

A value is refused here, not later, when it does not fit its column or cannot be
true: a count past ``int64`` (:data:`COUNT_MAX`: ``"clapCount": 1e30``), a reading
time that is not a finite number, a timestamp outside :func:`plausible` (before 2000 —
Medium started in 2012 — or more than a day after the moment it is read). Each
normaliser then returns no value and the source text, for the ``*_raw`` companion and
the rejects file. Relative dates (``"1d ago"``, ``"Yesterday"``) are read only against
the moment a page was fetched (``now``): in a page's data they are unreadable, never
resolved against the clock of the machine that reads them. Text loses the characters
no dataset should hold: control characters, terminal (ANSI) escape sequences, and lone
UTF-16 surrogates (which cannot be written as UTF-8), each lone surrogate replaced by
U+FFFD so the loss stays visible.
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
#: The largest count a dataset column holds (Parquet ``int64``).
COUNT_MAX = 2**63 - 1
#: The earliest plausible timestamp: Medium started in 2012; an epoch 0, or seconds read
#: as milliseconds, falls before this.
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
#: How far past the moment it is read a timestamp may be (time zones, clock skew).
FUTURE_SLACK = timedelta(days=1)

#: A count: digits grouped by thousands with one separator (``1,234``, ``1.234``,
#: ``1 234``, ``1'234``, no-break spaces), or plain digits with an optional decimal part
#: (only meaningful before a ``K``/``M``/``B`` suffix: ``1.2K``, ``1,2K``).
_COUNT_RE = re.compile(
    r"^\s*(?P<num>\d{1,3}(?P<sep>[,.'\u00a0\u202f ])\d{3}(?:(?P=sep)\d{3})*(?![\d])"
    r"|\d+(?:[.,]\d+)?)(?:\s*(?P<suffix>[kKmMbB])\b)?(?![\d.,])(?![eE][+-]?\d)"
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
#: Terminal escape sequences: CSI (``ESC [ … m``), OSC (``ESC ] … BEL``) and two-byte ones.
_ANSI_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]"
)
#: Control characters that are no white space (C0 but tab, line feed, vertical tab, form
#: feed and carriage return, which fold like spaces; DEL; C1).
_CONTROLS_RE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
#: UTF-16 surrogates: in a Python string they are always lone (a pair is one character).
_SURROGATES_RE = re.compile(r"[\ud800-\udfff]")
#: A number as source text: digits with separators, an exponent or a K/M/B suffix, ``inf``,
#: ``nan``.
NUMBER_TEXT_RE = re.compile(
    r"^\s*[-+]?(\d[\d.,'\u00a0\u202f ]*(?:[eE][+-]?\d+)?\s*[kmb]?|inf(?:inity)?|nan)\s*$",
    re.IGNORECASE,
)
#: Anything :func:`strip_unsafe` would change.
UNSAFE_TEXT_RE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def strip_unsafe(text: str) -> str:
    """``text`` without terminal escape sequences and control characters (tab and line
    breaks kept), each lone surrogate replaced by U+FFFD."""
    if UNSAFE_TEXT_RE.search(text) is None:
        return text
    text = _ANSI_RE.sub("", text)
    text = _CONTROLS_RE.sub("", text)
    return _SURROGATES_RE.sub("\ufffd", text)


def clean_text(value: Any) -> str | None:
    """Trimmed, NFC-normalised text with runs of white space folded and no control
    characters, escape sequences or lone surrogates (:func:`strip_unsafe`); None when empty."""
    if value is None:
        return None
    text = str(value)
    if not text.isprintable():  # else there is nothing to strip nor fold (fast path)
        text = strip_unsafe(text)
    text = unicodedata.normalize("NFC", text).replace("\u00a0", " ")
    if "  " in text or not text.isprintable():  # else there is nothing to fold (fast path)
        text = _BLANKS_RE.sub(" ", text)
        if "\n" in text:
            text = _LINE_EDGE_RE.sub("\n", text)
    return text.strip() or None


def clean_body(value: Any) -> str | None:
    """Multi-line text (a story body): NFC, trimmed, inner white space kept, no control
    characters, escape sequences or lone surrogates; None when empty."""
    if value is None:
        return None
    return unicodedata.normalize("NFC", strip_unsafe(str(value))).strip() or None


def parse_count(value: Any) -> tuple[int | None, str | None]:
    """``(count, raw)`` from ``33159``, ``"1,234"``, ``"1.2K"``, ``"3M"``, ``"23 responses"``.

    ``raw`` is the source text when abbreviation loses precision, else None.
    Negative, boolean, unreadable or out-of-range (past :data:`COUNT_MAX`, ``1e30``)
    values give ``(None, source text or None)``.
    """
    if value is None or isinstance(value, bool):
        return None, None
    if isinstance(value, int):
        return (value, None) if 0 <= value <= COUNT_MAX else (None, str(value))
    if isinstance(value, float):
        if not math.isfinite(value) or value < 0 or value != int(value) or value > COUNT_MAX:
            return None, str(value)
        return int(value), None
    text = clean_text(value)
    if text is None:
        return None, None
    count, raw = _count_from_text(text)
    if count is not None and count > COUNT_MAX:
        return None, text
    return count, raw


def read_count(value: Any) -> tuple[int | None, str | None]:
    """:func:`parse_count` for a count read from a page (its data or its text): a value
    that is no number (``"--"``, ``"lots"``, a list) is no count, ``(None, None)``; a
    number that is not a count (``1e30``, ``-3``, ``1.5``) keeps its source text, which
    validation refuses with the item (``claps:out_of_range``)."""
    count, raw = parse_count(value)
    if count is None and raw is not None and not NUMBER_TEXT_RE.match(raw):
        return None, None
    return count, raw


def shown_time(text: Any, now: datetime | None = None) -> tuple[str | None, str | None]:
    """:func:`parse_timestamp` for a date a page *shows*: one it cannot read, or that
    cannot be true, is no date, ``(None, None)`` (never invented)."""
    moment, raw = parse_timestamp(text, now)
    return (moment, raw) if moment is not None else (None, None)


def _count_from_text(text: str) -> tuple[int | None, str | None]:
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
    """Minutes as float from ``3.32``, ``"5 min read"``, ``"5"``; None when unreadable,
    negative or not finite."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        minutes = float(value) if not isinstance(value, int) or value <= COUNT_MAX else math.inf
    else:
        text = str(value).strip()
        match = _READING_RE.search(text)
        try:
            minutes = float(match.group(1) if match else text)
        except ValueError:
            return None
    return minutes if math.isfinite(minutes) and minutes >= 0 else None


def format_timestamp(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` in UTC; naive datetimes are taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime(ISO_FORMAT)


def plausible(moment: datetime, now: datetime | None = None) -> bool:
    """Whether ``moment`` can be a Medium time read at ``now`` (default: the clock): not
    before :data:`EARLIEST`, not more than :data:`FUTURE_SLACK` after ``now``."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return EARLIEST <= moment <= (now or datetime.now(UTC)) + FUTURE_SLACK


def parse_timestamp(value: Any, now: datetime | None = None) -> tuple[str | None, str | None]:
    """``(iso, raw)`` from epoch ms/s, ISO 8601, RFC 822, ``"Oct 29, 2016"``; with ``now``
    (the moment the page was fetched) also from card text relative to it (``"Oct 29"``,
    ``"1d ago"``, ``"Just now"``, ``"Yesterday"``).

    ``raw`` keeps the source text when the value is relative or day-only, and when it is
    unreadable or not :func:`plausible` (the value is None then).
    """
    if value is None or isinstance(value, bool):
        return None, None
    if isinstance(value, int | float):
        return _from_epoch(value, now)
    text = clean_text(value)
    if text is None:
        return None, None
    if text.isdigit():
        return _from_epoch(int(text), now)
    moment, raw = _parse_moment(text, now)
    if moment is None or not plausible(moment, now):
        return None, text
    return format_timestamp(moment), raw


def moment_of(text: str) -> datetime | None:
    """The absolute moment ``text`` names (epoch, ISO 8601, RFC 822, a day), plausible or
    not; None when it names none."""
    if text.isdigit():
        return _epoch_moment(int(text))
    return _parse_moment(text, None)[0]


def _epoch_moment(value: float) -> datetime | None:
    """Epoch seconds, or milliseconds past 10^10; None past what a datetime holds."""
    try:
        return datetime.fromtimestamp(value / 1000 if value > 10_000_000_000 else value, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _from_epoch(value: float, now: datetime | None) -> tuple[str | None, str | None]:
    moment = _epoch_moment(value)
    if moment is None or not plausible(moment, now):
        return None, str(value)
    return format_timestamp(moment), None


def _parse_moment(text: str, now: datetime | None) -> tuple[datetime | None, str | None]:
    """The moment ``text`` names, and the text when it was day-only or relative."""
    iso = _parse_iso(text)
    if iso is not None:
        return iso, None
    try:
        return parsedate_to_datetime(text), None
    except (TypeError, ValueError, IndexError):
        pass
    for fmt in _DAY_FORMATS:
        try:
            return datetime.strptime(text, fmt), text
        except ValueError:
            continue
    if now is None:
        return None, text  # relative to what? Not to the clock of the reading machine
    relative = _parse_relative(text, now)
    if relative is not None:
        return relative, text
    for fmt in _DAY_NO_YEAR_FORMATS:
        try:
            day = datetime.strptime(f"{text} {now.year}", f"{fmt} %Y")
        except ValueError:
            continue
        if day.replace(tzinfo=UTC) > now:
            day = day.replace(year=now.year - 1)
        return day, text
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
