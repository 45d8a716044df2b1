"""Spider arguments (``-a name=value``) parsed and checked once, into :class:`CrawlOptions`.

A name the spider does not know is refused with the closest known one (``-a max_storys=2``:
"did you mean max_stories?"), except Scrapyd's own: Scrapyd passes ``_job`` (and ``_version``
when a job names one) as spider arguments, and every name it adds starts with ``_``.
A tag with a space is refused with the slug it probably meant (``Machine Learning`` →
``machine-learning``): tags are separated by commas.
"""

from __future__ import annotations

import calendar
import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Literal

from topics_crawler.urls import classify_url, tag_url

FOLLOW_CHOICES = ("stories", "authors", "publications")
#: ``-a follow`` / ``-a cards`` value → the item type it exports.
ITEM_TYPE_OF_KIND = {"stories": "story", "authors": "author", "publications": "publication"}
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


#: The spider's ``-a`` arguments; any other is refused (:func:`unknown_arguments_error`),
#: except Scrapyd's own (:data:`SCRAPYD_PREFIX`).
SPIDER_ARGUMENTS = frozenset(
    {"tags", "start_urls", "max_stories", "follow", "history", "since", "until", "responses"}
    | {"source", "access"}
    | {"related_depth", "max_tags", "author_stories"}
    | {"cards"}
)
#: ``-a access`` values: only free stories, or only member-only ones.
ACCESS_CHOICES = ("free", "member_only")
#: Deepest ``-a related_depth`` (each hop multiplies the tags by about ten).
MAX_RELATED_DEPTH = 10
#: Largest ``-a max_tags``.
MAX_TAGS = 100_000
#: Most archive stories per author ``-a author_stories`` accepts.
MAX_AUTHOR_STORIES = 100_000

#: Scrapyd's own spider arguments (``_job``, ``_version``) start with this; they are accepted
#: and left alone.
SCRAPYD_PREFIX = "_"

NO_TAGS = (
    "give at least one tag: -a tags=distributed-training,machine-learning "
    "or -a start_urls=https://medium.com/tag/<slug>"
)


class SpiderArgumentError(ValueError):
    """A spider argument is missing or malformed; the message names it."""


@dataclass(frozen=True)
class CrawlOptions:
    """What one ``topics`` crawl is asked to do."""

    tag_urls: dict[str, str]
    """Tag slug → canonical tag page URL, in the order given."""
    max_stories: int | None = None
    """Stories taken per tag page (None: all the page lists)."""
    follow: frozenset[str] = field(default_factory=lambda: frozenset(FOLLOW_CHOICES))
    """The entities (``stories``, ``authors``, ``publications``) whose pages are fetched and
    exported; an entity of another kind is not in the output, unless in :attr:`cards`."""
    cards: frozenset[str] = frozenset()
    """Entities not followed whose listing cards (what a tag page, a feed or a listing knew)
    are exported as they are, their pages not fetched."""
    history: HistoryMode | None = None
    """List each tag's whole history: over GraphQL in this order (``NEWEST``, ``MOST_READ``;
    the day archive standing in when Medium refuses it), or through the day archive alone
    (``ARCHIVE``); None: tag pages only."""
    since: date | None = None
    """First day of the history (``-a since=YYYY-MM[-DD]``; None: from the start)."""
    until: date | None = None
    """Last day of the history (``-a until=YYYY-MM[-DD]``; None: to today)."""
    responses: int = 0
    """Responses (replies included) fetched per story over GraphQL; 0: none."""
    source: str = "tags"
    """Where stories come from: ``tags`` (tag pages) or ``feed`` (each tag's RSS feed)."""
    related_depth: int = 0
    """Follow related tags breadth-first up to this many hops from the seed tags (0: none)."""
    max_tags: int | None = None
    """Most tags one crawl requests, seed tags included (None: as many as the depth reaches)."""
    author_stories: int = 0
    """Stories paged from each followed author's archive beyond the profile's first page."""
    access: str | None = None
    """``free`` or ``member_only``: only those stories are taken (None: all)."""

    @property
    def item_types(self) -> frozenset[str]:
        """The item types this crawl exports: tag pages and their topic-map edges, each kind
        followed or kept as cards, with the stories which tag listed them (``tag_story``),
        responses of followed stories."""
        kinds = self.follow | self.cards
        types = {"tag_page", "tag_edge"} | {ITEM_TYPE_OF_KIND[kind] for kind in kinds}
        if "story" in types:
            types.add("tag_story")
        if self.responses and "stories" in self.follow:
            types.add("response")
        return frozenset(types)

    @classmethod
    def from_spider_arguments(
        cls, arguments: Mapping[str, Any], *, require_tags: bool = True
    ) -> CrawlOptions:
        """From every ``-a`` argument as given: the known ones by name; Scrapyd's own
        (``_job``…) are left alone, any other name is refused (:func:`unknown_arguments_error`)."""
        error = unknown_arguments_error(arguments)
        if error is not None:
            raise SpiderArgumentError(error)
        known = {k: v for k, v in arguments.items() if k in SPIDER_ARGUMENTS}
        return cls.from_arguments(**known, require_tags=require_tags)

    @classmethod
    def from_arguments(
        cls,
        tags: str | None = None,
        start_urls: str | list[str] | None = None,
        max_stories: str | int | None = None,
        follow: str | None = None,
        *,
        history: str | None = None,
        since: str | None = None,
        until: str | None = None,
        responses: str | int | None = None,
        source: str | None = None,
        related_depth: str | int | None = None,
        max_tags: str | int | None = None,
        author_stories: str | int | None = None,
        access: str | None = None,
        cards: str | None = None,
        today: date | None = None,
        require_tags: bool = True,
    ) -> CrawlOptions:
        """``require_tags=False`` accepts no tag (``scrapy parse``/``shell`` of one page)."""
        tag_urls = {**_parse_tags(tags), **_parse_start_urls(start_urls)}
        if not tag_urls and require_tags:
            raise SpiderArgumentError(NO_TAGS)
        sort_order = _parse_history(history)
        first, last = _parse_range(since, until, today or datetime.now(UTC).date())
        for name, value in (("since", first), ("until", last)):
            if value is not None and sort_order is None:
                raise SpiderArgumentError(
                    f"{name}: only applies with -a history={'|'.join(HISTORY_CHOICES)}"
                )
        source_choice = _parse_source(source, sort_order)
        depth = _whole_number("related_depth", related_depth, 0, MAX_RELATED_DEPTH) or 0
        tag_cap = _parse_max_tags(max_tags, depth, len(tag_urls))
        if depth and source_choice == "feed":
            raise SpiderArgumentError("related_depth: follows tag pages; drop -a source=feed")
        followed = _parse_follow(follow)
        kept_cards = _parse_cards(cards, followed, source_choice)
        return cls(
            tag_urls=tag_urls,
            max_stories=_parse_max_stories(max_stories),
            follow=followed,
            cards=kept_cards,
            history=sort_order,
            since=first,
            until=last,
            responses=_parse_responses(responses),
            source=source_choice,
            related_depth=depth,
            max_tags=tag_cap,
            author_stories=_whole_number("author_stories", author_stories, 0, MAX_AUTHOR_STORIES)
            or 0,
            access=_parse_access(access),
        )


def unknown_arguments_error(arguments: Mapping[str, Any]) -> str | None:
    """Why these ``-a`` names cannot be taken (each unknown one, with the closest known name
    when one is close), or None. Scrapyd's own (``_job``, ``_version``) are fine."""
    unknown = sorted(
        name
        for name in arguments
        if name not in SPIDER_ARGUMENTS and not name.startswith(SCRAPYD_PREFIX)
    )
    if not unknown:
        return None
    said, guessed = [], 0
    for name in unknown:
        close = difflib.get_close_matches(name.lower(), SPIDER_ARGUMENTS, n=1, cutoff=0.75)
        said.append(f"{name}: did you mean {close[0]}?" if close else name)
        guessed += bool(close)
    line = f"unknown argument{'s' if len(unknown) > 1 else ''} {'; '.join(said)}"
    if guessed < len(unknown):
        line += f" (the arguments: {', '.join(sorted(SPIDER_ARGUMENTS))})"
    return line


def _split(value: str | list[str] | None, separators: str = r"[,\s]+") -> list[str]:
    if value is None:
        return []
    parts = value if isinstance(value, list) else re.split(separators, value)
    return [p.strip() for p in parts if p and p.strip()]


def probable_slug(text: str) -> str:
    """The tag slug a name with spaces probably means: ``Machine Learning`` → ``machine-learning``
    (Medium's slugs join words with ``-``)."""
    return re.sub(r"[\W_]+", "-", text.lower()).strip("-")


def _parse_tags(tags: str | None) -> dict[str, str]:
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


def _parse_start_urls(start_urls: str | list[str] | None) -> dict[str, str]:
    result = {}
    for raw in _split(start_urls):
        link = classify_url(raw)
        if link is None or link.kind != "tag":
            raise SpiderArgumentError(
                f"start_urls: {raw!r} is not a Medium tag page URL (https://medium.com/tag/<slug>)"
            )
        result[link.key] = link.url
    return result


def _parse_max_stories(value: str | int | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise SpiderArgumentError(f"max_stories: {value!r} is not a whole number") from None
    if number <= 0:
        raise SpiderArgumentError(f"max_stories: must be 1 or more, got {number}")
    return number


def _parse_follow(value: str | None) -> frozenset[str]:
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


def _parse_cards(value: str | None, follow: frozenset[str], source: str) -> frozenset[str]:
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


def _parse_history(value: str | None) -> HistoryMode | None:
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


def _parse_range(
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


def _parse_responses(value: str | int | None) -> int:
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


def _parse_source(value: str | None, history: HistoryMode | None) -> str:
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


def _parse_access(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    choice = value.strip().lower().replace("-", "_")
    if choice not in ACCESS_CHOICES:
        raise SpiderArgumentError(
            f"access: unknown value {value!r}; choose from {'|'.join(ACCESS_CHOICES)}"
        )
    return choice


def _whole_number(name: str, value: str | int | None, low: int, high: int) -> int | None:
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


def _parse_max_tags(value: str | int | None, depth: int, seeds: int) -> int | None:
    cap = _whole_number("max_tags", value, 1, MAX_TAGS)
    if cap is None:
        return None
    if not depth:
        raise SpiderArgumentError("max_tags: only applies with -a related_depth=N (1 or more)")
    if cap < seeds:
        raise SpiderArgumentError(
            f"max_tags: counts the seed tags too; {cap} is fewer than the {seeds} given"
        )
    return cap
