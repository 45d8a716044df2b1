"""The feed fast path (``-a source=feed``): what is new on a tag, one request per tag.

Instead of the tag page, the crawl reads the tag's RSS feed, ``medium.com/feed/tag/<tag>``
(Medium's feeds list only the latest items, about ten, with no paging: STRUCTURE.md).
Each item already gives a partial story (title, author name, date, tags, the body of a
full-content item); the story's own page is fetched only for stories the dataset does not
have yet, or for every item when the crawl writes no dataset. That makes a scheduled run
cost about one request per tag plus one per *new* story (docs/feeds.md).

"The dataset has it" means the story id is in ``<DATASET_DIR>/stories.parquet`` when the
crawl starts (its ``story_id`` column only is read). Stats: ``feed/requests``,
``feed/items``, ``feed/new``, ``feed/known``, ``feed/known_in_dataset`` (ids read at start).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from scrapy import Request
from scrapy.statscollectors import StatsCollector

from topics_crawler.dataset.parts import read_table
from topics_crawler.items import Story
from topics_crawler.pages import PageResult
from topics_crawler.urls import MEDIUM_ROOT, MediumLink

STORIES_FILE = "stories.parquet"


def tag_feed_url(slug: str) -> str:
    """The RSS feed of a tag (``https://medium.com/feed/tag/<slug>``)."""
    return f"{MEDIUM_ROOT}/feed/tag/{slug}"


def known_story_ids(dataset_dir: str | Path | None) -> frozenset[str]:
    """Story ids already in the dataset (none without one, or before its first commit)."""
    if not dataset_dir:
        return frozenset()
    table = read_table(Path(dataset_dir) / STORIES_FILE, columns=["story_id"])
    if "story_id" not in table.column_names:
        return frozenset()
    column = table.column("story_id")
    return frozenset(value for value in column.to_pylist() if isinstance(value, str))


class FeedSource:
    """Start requests of a feed crawl, and the stories of a feed worth a page request."""

    def __init__(
        self,
        *,
        known: frozenset[str],
        callback: Callable[..., Any],
        errback: Callable[..., Any],
        stats: StatsCollector,
        logger: logging.Logger | logging.LoggerAdapter[logging.Logger],
    ) -> None:
        self.known = known
        self.callback = callback
        self.errback = errback
        self.stats = stats
        self.logger = logger
        stats.set_value("feed/known_in_dataset", len(known))

    def start(self, slug: str) -> Request:
        """The feed request of tag ``slug``."""
        self.stats.inc_value("feed/requests")
        return Request(
            tag_feed_url(slug),
            callback=self.callback,
            errback=self.errback,
            meta={"entity_kind": "feed", "feed_tag": slug},
        )

    def new_stories(self, result: PageResult) -> Iterator[tuple[MediumLink, Story | None]]:
        """``(link, feed item)`` of each listed story the dataset does not have, in feed
        order; the others are counted and left alone."""
        items = {s.story_id: s for s in result.items_of("story") if isinstance(s, Story)}
        links = result.links_of("story")
        self.stats.inc_value("feed/items", len(links))
        for link in links:
            if link.key in self.known:
                self.stats.inc_value("feed/known")
                continue
            self.stats.inc_value("feed/new")
            yield link, items.get(link.key)
        self.logger.info(
            "Feed %s: %d item(s), %d new", result.url, len(links),
            sum(1 for link in links if link.key not in self.known),
        )  # fmt: skip
