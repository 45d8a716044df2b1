"""Tag membership as data: a :class:`~topics_crawler.items.TagStory` row for each story a
listing of a tag showed the crawl, with how it was listed, where, and when.

Every listing walker yields them through these two functions: the tag page's sections
(:func:`section_stories`; ``related`` for the page of a tag the topic-graph walk reached,
:mod:`._related`), and the listings paged as a chain of requests (:func:`listed_stories`:
the GraphQL history, :mod:`._history`; the day archive, :mod:`._day_archive`; the feed,
:mod:`._feed`). Pure: a parsed page in, rows out. A story is listed once per listing page
(its first section on a tag page); the dedupe pipeline and the dataset commit merge the
sightings of one tag, story and source (the earliest ``first_seen``, the latest
``last_seen``: the one merge rule, :mod:`topics_crawler.items.merge`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from topics_crawler.items import Story, TagPage, TagStory
from topics_crawler.items.listing import SECTION, membership_id
from topics_crawler.items.values import format_timestamp
from topics_crawler.pages import PageResult


@dataclass(frozen=True)
class Listing:
    """One listing page of a tag: how it lists (``TagStory.source``), its URL, the layer
    its rows come from (``data_source``) and when it was read."""

    tag: str
    source: str
    url: str | None
    data_source: str | None
    seen_at: str

    def row(self, story_id: str, rank: int, section: str | None = None) -> TagStory:
        """The sighting of ``story_id`` at ``rank`` (in ``section``) on this page."""
        return TagStory(
            membership_id=membership_id(self.tag, self.source, story_id),
            tag=self.tag,
            story_id=story_id,
            source=self.source,
            section=section,
            rank=rank,
            url=self.url,
            data_source=self.data_source,
            first_seen=seen_day(self.seen_at),
            last_seen=seen_day(self.seen_at),
        )


def seen_day(timestamp: str) -> str:
    """The UTC day of ``timestamp`` as a timestamp (``2026-12-02T00:00:00Z``): when a listing
    showed a story is kept to the day, so a run that sees the same listings on the same day
    (an hourly feed run) changes and writes nothing, and a run on a later day moves
    ``last_seen`` of what it saw — what it writes is what it listed."""
    return f"{timestamp[:10]}T00:00:00Z"


def section_stories(page: TagPage, source: str = SECTION) -> list[TagStory]:
    """The stories of a tag page's sections, section by section in page order, each at its
    rank in its section; a story two sections show counts once, in the first."""
    if not page.tag:
        return []
    listing = Listing(page.tag, source, page.url, page.data_source, page.scraped_at or _now())
    rows, seen = [], set()
    for section, story_ids in page.sections.items():
        for rank, story_id in enumerate(story_ids, 1):
            if story_id and story_id not in seen:
                seen.add(story_id)
                rows.append(listing.row(story_id, rank, section))
    return rows


def listed_stories(tag: str, source: str, result: PageResult, first_rank: int) -> list[TagStory]:
    """The stories of one page of a paged listing of ``tag`` (a history, day archive or
    feed page), in listing order, ranked from ``first_rank`` (the stories the listing's
    earlier pages gave, plus one)."""
    stories = [s for s in result.items_of("story") if isinstance(s, Story) and s.story_id]
    seen_at = next((s.scraped_at for s in stories if s.scraped_at), None) or _now()
    layer = next((s.data_source for s in stories if s.data_source), None)
    listing = Listing(tag, source, result.url, layer, seen_at)
    ids = _unique(s.story_id for s in stories)
    return [listing.row(story_id, rank) for rank, story_id in enumerate(ids, first_rank)]


def _unique(values: Iterable[str | None]) -> list[str]:
    return list(dict.fromkeys(value for value in values if value))


def _now() -> str:
    return format_timestamp(datetime.now(UTC))
