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

from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from scrapy import Request
from scrapy.http import Response
from scrapy.statscollectors import StatsCollector
from twisted.python.failure import Failure

from topics_crawler.dataset.parts import read_table
from topics_crawler.items import Story, TagStory
from topics_crawler.items.listing import FEED
from topics_crawler.pages import PageResult
from topics_crawler.spiders._helpers import Logger, OptionsSpider
from topics_crawler.spiders._memberships import listed_stories
from topics_crawler.spiders._paging import Callbacks
from topics_crawler.urls import MEDIUM_ROOT, MediumLink

STORIES_FILE = "stories.parquet"
#: Request meta key: the tag slug whose feed a request reads.
FEED_TAG_META = "feed_tag"


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


class FeedSpider(OptionsSpider, Protocol):
    """What the feed source needs of the spider: the feed's callbacks."""

    def parse_feed(self, response: Response) -> Iterator[Any]: ...
    def on_error(self, failure: Failure) -> Iterator[Any]: ...


class FeedSource:
    """Start requests of a feed crawl, and the stories of a feed worth a page request."""

    def __init__(
        self,
        *,
        dataset_dir: str | Path | None,
        callbacks: Callbacks,
        stats: StatsCollector,
        logger: Logger,
    ) -> None:
        self.dataset_dir = dataset_dir
        self.callbacks = callbacks
        self.stats = stats
        self.logger = logger

    @classmethod
    def from_spider(cls, spider: FeedSpider) -> FeedSource | None:
        """The feed fast path of ``-a source=feed`` crawls (None for other sources)."""
        if spider.options.source != "feed":
            return None
        assert spider.crawler.stats is not None
        return cls(
            dataset_dir=spider.crawler.settings.get("DATASET_DIR"),
            callbacks=Callbacks(spider.parse_feed, spider.on_error),
            stats=spider.crawler.stats,
            logger=spider.logger,
        )

    @cached_property
    def known(self) -> frozenset[str]:
        """Story ids in the dataset, read once as the crawl starts (the first feed
        request): after the dataset add-on finished an interrupted commit."""
        return known_story_ids(self.dataset_dir)

    def start(self, slug: str) -> Request:
        """The feed request of tag ``slug``."""
        self.stats.set_value("feed/known_in_dataset", len(self.known))
        self.stats.inc_value("feed/requests")
        return self.callbacks.request(
            tag_feed_url(slug), meta={"entity_kind": "feed", FEED_TAG_META: slug}
        )

    def listed(self, response: Response, result: PageResult) -> list[TagStory]:
        """The tag's ``feed`` rows: every story the feed lists (known ones too), in feed
        order."""
        tag = response.meta.get(FEED_TAG_META)
        return listed_stories(str(tag), FEED, result, 1) if tag else []

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
