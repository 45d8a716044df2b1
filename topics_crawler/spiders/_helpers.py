"""What the spider and its parts share: what a part needs of the spider, entity keys,
a failure's request, response encodings (a failed download's reason and status:
:mod:`topics_crawler.middlewares.download_failures`)."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from scrapy import Request
from scrapy.http import Response
from twisted.python.failure import Failure

from topics_crawler.items import Author, Item, Publication, Story, TagEdge, TagPage, TagStory
from topics_crawler.items.access import FULL, FULL_WITH_SESSION
from topics_crawler.urls import is_medium_domain

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from topics_crawler.spiders._arguments import CrawlOptions

Logger = logging.Logger | logging.LoggerAdapter[logging.Logger]


class OptionsSpider(Protocol):
    """What every part of the spider (a pager, the tag walker, the feed source) builds
    itself from: the crawler (settings, stats, signals), the crawl's options, the logger.
    Each part's own protocol adds the callbacks its requests carry."""

    crawler: Crawler
    options: CrawlOptions

    @property
    def logger(self) -> Logger: ...


def item_key(item: Item) -> tuple[str, str]:
    """``(link kind, key)`` under which links to this entity are recognised."""
    if isinstance(item, Story):
        return "story", item.story_id or ""
    if isinstance(item, Author):
        return "author", (item.username or "").lower()
    if isinstance(item, Publication):
        if item.domain and not is_medium_domain(item.domain.lower()):
            return "publication", item.domain.lower()
        return "publication", (item.slug or "").lower()
    if isinstance(item, TagPage):
        return "tag_page", item.tag or ""
    if isinstance(item, TagEdge):
        return "tag_edge", item.edge_id or ""
    if isinstance(item, TagStory):
        return "tag_story", item.membership_id or ""
    return "response", item.response_id or ""


def seen_with_session(story: Story) -> Story:
    """``story`` as fetched with the user's own session: a member-only story whose whole text
    the page gave is ``full_with_session`` (:mod:`topics_crawler.items.access`); anything
    else is unchanged."""
    if story.access == FULL and story.is_member_only:
        return replace(story, access=FULL_WITH_SESSION)
    return story


def request_of(failure: Failure) -> Request:
    """The request of a failure an errback receives (Scrapy sets ``failure.request``)."""
    request: Request = failure.request  # type: ignore[attr-defined]
    return request


def response_encoding(response: Response) -> str | None:
    """The encoding Scrapy detected for a text response (None for binary ones)."""
    return getattr(response, "encoding", None)
