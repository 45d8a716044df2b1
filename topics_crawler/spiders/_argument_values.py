"""Each ``-a`` value on its own: parsed and checked, alone or against the one argument it
depends on (``cards`` against ``follow``), each refusal a :class:`SpiderArgumentError`
naming the argument; :class:`~topics_crawler.spiders._arguments.CrawlOptions` puts them
together and checks how they combine. A tag with a space is refused with the slug it
probably meant (``Machine Learning`` → ``machine-learning``): tags are separated by commas.
"""

from __future__ import annotations

import calendar
import re
from datetime import date
from typing import Literal

from topics_crawler.urls import classify_url, tag_url

FOLLOW_CHOICES = ("stories", "authors", "publications")
#: How a tag's history is listed: the GraphQL archive feed in one of its sort orders
#: (the day archive standing in when Medium refuses it), or the day archive alone.
HistoryMode = Literal["NEWEST", "MOST_READ", "ARCHIVE"]
#: ``-a history`` values → the history's mode.
HISTORY_CHOICES: dict[str, HistoryMode] = {
    "newest": "NEWEST",
    "most_read": "MOST_READ",
    "archive": "ARCHIVE",
}
#: Medium opened in August 2012; an earlier ``since`` is a typo.
FIRST_YEAR = 2012
_DAY_RE = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")
_TAG_SLUG_RE = re.compile(r"^[^\W_][\w\-]{0,99}$")
#: Largest ``-a max_tags``.
MAX_TAGS = 100_000
#: ``-a access`` values: only free stories, or only member-only ones.
ACCESS_CHOICES = ("free", "member_only")


class SpiderArgumentError(ValueError):
    """A spider argument is missing or malformed; the message names it."""


def _split(value: str | list[str] | None, separators: str = r"[,\s]+") -> list[str]:
    if value is None:
        return []
    parts = value if isinstance(value, list) else re.split(separators, value)
    return [p.strip() for p in parts if p and p.strip()]


def probable_slug(text: str) -> str:
    """The tag slug a name with spaces probably means: ``Machine Learning`` → ``machine-learning``
    (Medium's slugs join words with ``-``)."""
    return re.sub(r"[\W_]+", "-", text.lower()).strip("-")


def parse_tags(tags: str | None) -> dict[str, str]:
    result = {}
    for raw in _split(tags, separators=r","):  # a space is inside a tag: refused below
        slug = raw.lower()
        if re.search(r"\s", slug):
            raise SpiderArgumentError(
                f"tags: {raw!r} has a space, a tag slug has none: did you mean "
                f"{probable_slug(raw)}? (as in medium.com/tag/{probable_slug(raw)}; "
                "separate tags with commas)"
            )
        if not _TAG_SLUG_RE.match(slug):
            raise SpiderArgumentError(
                f"tags: {raw!r} is not a tag slug (letters, digits and '-', "
                "as in medium.com/tag/<slug>)"
            )
        result[slug] = tag_url(slug)
    return result


def parse_start_urls(start_urls: str | list[str] | None) -> dict[str, str]:
    result = {}
    for raw in _split(start_urls):
        link = classify_url(raw)
        if link is None or link.kind != "tag":
            raise SpiderArgumentError(
                f"start_urls: {raw!r} is not a Medium tag page URL (https://medium.com/tag/<slug>)"
            )
        result[link.key] = link.url
    return result


def parse_max_stories(value: str | int | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise SpiderArgumentError(f"max_stories: {value!r} is not a whole number") from None
    if number <= 0:
        raise SpiderArgumentError(f"max_stories: must be 1 or more, got {number}")
    return number


def parse_follow(value: str | None) -> frozenset[str]:
    if value is None:
        return frozenset(FOLLOW_CHOICES)
    chosen = {v.lower() for v in _split(value)}
    if chosen in ({"none"}, set()):
        return frozenset()
    unknown = sorted(chosen - set(FOLLOW_CHOICES))
    if unknown:
        raise SpiderArgumentError(
            f"follow: unknown value(s) {', '.join(unknown)}; choose from "
            f"{','.join(FOLLOW_CHOICES)} or none"
        )
    return frozenset(chosen)


def parse_cards(value: str | None, follow: frozenset[str], source: str) -> frozenset[str]:
    """``-a cards``: kinds not followed whose listing cards are exported as they are."""
    chosen = {v.lower() for v in _split(value)} - {"none"}
    unknown = sorted(chosen - set(FOLLOW_CHOICES))
    if unknown:
        raise SpiderArgumentError(
            f"cards: unknown value(s) {', '.join(unknown)}; choose from "
            f"{','.join(FOLLOW_CHOICES)} or none"
        )
    followed = sorted(chosen & follow)
    if followed:
        raise SpiderArgumentError(
            f"cards: {','.join(followed)} followed already (their pages give the rows): "
            f"leave {'it' if len(followed) == 1 else 'them'} out of -a follow "
            "(e.g. -a follow=none -a cards=stories)"
        )
    if source == "feed" and "stories" not in follow | chosen:
        raise SpiderArgumentError(
            "follow: -a source=feed lists stories; follow them (the default) "
            "or keep the feed's own with -a cards=stories"
        )
    return frozenset(chosen)


def parse_history(value: str | None) -> HistoryMode | None:
    if value is None or value == "":
        return None
    choice = HISTORY_CHOICES.get(value.strip().lower())
    if choice is None:
        raise SpiderArgumentError(
            f"history: unknown value {value!r}; choose from {'|'.join(HISTORY_CHOICES)}"
        )
    return choice


def _parse_day(name: str, value: str | None, *, last: bool) -> date | None:
    """``YYYY-MM`` (its first day, or its ``last`` day) or ``YYYY-MM-DD``; None when empty."""
    if value is None or value == "":
        return None
    match = _DAY_RE.match(value.strip())
    try:
        if match is None:
            raise ValueError(value)
        year, month = int(match.group(1)), int(match.group(2))
        day = int(match.group(3)) if match.group(3) else None
        if day is None:
            day = calendar.monthrange(year, month)[1] if last else 1
        return date(year, month, day)
    except ValueError:
        raise SpiderArgumentError(
            f"{name}: {value!r} is not a month or a day as YYYY-MM or YYYY-MM-DD (2024-06, "
            "2024-06-15)"
        ) from None


def parse_range(
    since: str | None, until: str | None, today: date
) -> tuple[date | None, date | None]:
    """The history's first and last day (each None when not given), checked."""
    first = _parse_day("since", since, last=False)
    last = _parse_day("until", until, last=True)
    if first is not None and first > today:
        raise SpiderArgumentError(f"since: {since} is in the future (today is {today:%Y-%m-%d})")
    if first is not None and first.year < FIRST_YEAR:
        raise SpiderArgumentError(f"since: Medium has no stories before {FIRST_YEAR}")
    if last is not None and last.year < FIRST_YEAR:
        raise SpiderArgumentError(f"until: Medium has no stories before {FIRST_YEAR}")
    if first is not None and last is not None and last < first:
        raise SpiderArgumentError(f"until: {until} is before since ({since})")
    return first, last


#: Most responses per story ``-a responses`` accepts (a thread beyond is not a sample).
MAX_RESPONSES = 1000


def parse_responses(value: str | int | None) -> int:
    if value is None or value == "":
        return 0
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise SpiderArgumentError(f"responses: {value!r} is not a whole number") from None
    if not 0 <= number <= MAX_RESPONSES:
        raise SpiderArgumentError(f"responses: must be 0 to {MAX_RESPONSES}, got {number}")
    return number


SOURCE_CHOICES = ("tags", "feed")


def parse_source(value: str | None, history: HistoryMode | None) -> str:
    if value is None or value == "":
        return "tags"
    choice = value.strip().lower()
    if choice not in SOURCE_CHOICES:
        raise SpiderArgumentError(
            f"source: unknown value {value!r}; choose from {'|'.join(SOURCE_CHOICES)}"
        )
    if choice == "feed" and history is not None:
        raise SpiderArgumentError("source: feed reads the latest items only; drop -a history")
    return choice


def parse_access(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    choice = value.strip().lower().replace("-", "_")
    if choice not in ACCESS_CHOICES:
        raise SpiderArgumentError(
            f"access: unknown value {value!r}; choose from {'|'.join(ACCESS_CHOICES)}"
        )
    return choice


def whole_number(name: str, value: str | int | None, low: int, high: int) -> int | None:
    """``value`` as a whole number in ``low..high`` (None when not given)."""
    if value is None or value == "":
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise SpiderArgumentError(f"{name}: {value!r} is not a whole number") from None
    if not low <= number <= high:
        raise SpiderArgumentError(f"{name}: must be {low} to {high}, got {number}")
    return number


def parse_max_tags(value: str | int | None, depth: int, seeds: int) -> int | None:
    cap = whole_number("max_tags", value, 1, MAX_TAGS)
    if cap is None:
        return None
    if not depth:
        raise SpiderArgumentError("max_tags: only applies with -a related_depth=N (1 or more)")
    if cap < seeds:
        raise SpiderArgumentError(
            f"max_tags: counts the seed tags too; {cap} is fewer than the {seeds} given"
        )
    return cap
