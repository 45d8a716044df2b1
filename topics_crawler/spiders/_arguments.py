"""Spider arguments (``-a name=value``) parsed and checked once, into :class:`CrawlOptions`:
each value by :mod:`topics_crawler.spiders._argument_values`, how they combine here.

A name the spider does not know is refused with the closest known one (``-a max_storys=2``:
"did you mean max_stories?"), except Scrapyd's own: Scrapyd passes ``_job`` (and ``_version``
when a job names one) as spider arguments, and every name it adds starts with ``_``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from topics_crawler.spiders._argument_values import (
    FOLLOW_CHOICES,
    HISTORY_CHOICES,
    HistoryMode,
    SpiderArgumentError,
    parse_access,
    parse_cards,
    parse_follow,
    parse_history,
    parse_max_stories,
    parse_max_tags,
    parse_range,
    parse_responses,
    parse_source,
    parse_start_urls,
    parse_tags,
    whole_number,
)

#: ``-a follow`` / ``-a cards`` value → the item type it exports.
ITEM_TYPE_OF_KIND = {"stories": "story", "authors": "author", "publications": "publication"}


#: The spider's ``-a`` arguments; any other is refused (:func:`unknown_arguments_error`),
#: except Scrapyd's own (:data:`SCRAPYD_PREFIX`).
SPIDER_ARGUMENTS = frozenset(
    {"tags", "start_urls", "max_stories", "follow", "history", "since", "until", "responses"}
    | {"source", "access"}
    | {"related_depth", "max_tags", "author_stories"}
    | {"cards"}
)
#: Deepest ``-a related_depth`` (each hop multiplies the tags by about ten).
MAX_RELATED_DEPTH = 10
#: Most archive stories per author ``-a author_stories`` accepts.
MAX_AUTHOR_STORIES = 100_000

#: Scrapyd's own spider arguments (``_job``, ``_version``) start with this; they are accepted
#: and left alone.
SCRAPYD_PREFIX = "_"

NO_TAGS = (
    "give at least one tag: -a tags=distributed-training,machine-learning "
    "or -a start_urls=https://medium.com/tag/<slug>"
)


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
        tag_urls = {**parse_tags(tags), **parse_start_urls(start_urls)}
        if not tag_urls and require_tags:
            raise SpiderArgumentError(NO_TAGS)
        sort_order = parse_history(history)
        first, last = parse_range(since, until, today or datetime.now(UTC).date())
        for name, value in (("since", first), ("until", last)):
            if value is not None and sort_order is None:
                raise SpiderArgumentError(
                    f"{name}: only applies with -a history={'|'.join(HISTORY_CHOICES)}"
                )
        source_choice = parse_source(source, sort_order)
        depth = whole_number("related_depth", related_depth, 0, MAX_RELATED_DEPTH) or 0
        tag_cap = parse_max_tags(max_tags, depth, len(tag_urls))
        if depth and source_choice == "feed":
            raise SpiderArgumentError("related_depth: follows tag pages; drop -a source=feed")
        followed = parse_follow(follow)
        kept_cards = parse_cards(cards, followed, source_choice)
        return cls(
            tag_urls=tag_urls,
            max_stories=parse_max_stories(max_stories),
            follow=followed,
            cards=kept_cards,
            history=sort_order,
            since=first,
            until=last,
            responses=parse_responses(responses),
            source=source_choice,
            related_depth=depth,
            max_tags=tag_cap,
            author_stories=whole_number("author_stories", author_stories, 0, MAX_AUTHOR_STORIES)
            or 0,
            access=parse_access(access),
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
