"""Which entities a page leads to, a part of the ``topics`` spider (a base class of
:class:`~topics_crawler.spiders.topics.TopicsSpider`, whose callbacks the requests carry):
a request per entity followed (``-a follow``), its fingerprint the entity's identity; what
a page knew of the kinds kept as cards (``-a cards``); the ``tag_story`` rows of a listing;
a page's item with its gaps filled from what the listing knew.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from scrapy import Request

from topics_crawler.items import Item, Story, TagPage, TagStory
from topics_crawler.items.merge import ENTITY_KEY_META, link_identity, merge_items
from topics_crawler.pages import PageResult
from topics_crawler.pipelines.access import wanted
from topics_crawler.spiders._arguments import CrawlOptions
from topics_crawler.spiders._helpers import item_key
from topics_crawler.spiders._page_outcomes import PageOutcomes
from topics_crawler.urls import MEDIUM_CUSTOM_DOMAIN_META, MediumLink, is_medium_domain

#: Entity kind → its ``-a follow`` / ``-a cards`` value.
FOLLOW_KEY = {"story": "stories", "author": "authors", "publication": "publications"}


class EntityFollowing(PageOutcomes):
    """Follow a page's links to entities, keep cards, fill a page's item from its card."""

    options: CrawlOptions

    def listed(self, rows: Iterable[TagStory]) -> Iterable[TagStory]:
        """The rows saying which tag's listing showed which story, when the crawl exports
        stories (followed or as cards): ``-a follow=none`` alone exports none."""
        return rows if "tag_story" in self.options.item_types else ()

    def take_stories(self, result: PageResult, limit: int | None) -> Iterator[Item | Request]:
        """Follow the first ``limit`` story cards (or, with ``-a cards=stories``, yield them)."""
        cards = {s.story_id: s for s in result.items_of("story") if isinstance(s, Story)}
        for link in result.links_of("story")[:limit]:
            card = cards.get(link.key)
            if "stories" in self.options.follow:
                yield from self.follow_entity(link, known=card)
            elif card is not None and "stories" in self.options.cards:
                yield card

    def entity_item(self, result: PageResult, item_type: str, known: Item | None) -> Iterator[Item]:
        item = next(iter(result.items_of(item_type)), None)
        if item is None:
            if known is not None:
                yield known
            return
        yield merge_items(known, item) if known is not None else item

    def follow_entities(self, result: PageResult, kinds: tuple[str, ...]) -> Iterator[Any]:
        """Request the pages of the ``kinds`` followed that a page links to; yield what it
        knew of the kinds kept as cards (``-a cards``); the other kinds are not exported."""
        known = {item_key(item): item for item in result.items if not isinstance(item, TagPage)}
        follow, cards = self.options.follow, self.options.cards
        for kind in kinds:
            for link in result.links_of(kind):
                item = known.pop((kind, link.key), None)
                if FOLLOW_KEY[kind] in follow:
                    yield from self.follow_entity(link, known=item)
                elif item is not None and FOLLOW_KEY[kind] in cards:
                    yield item
        for (kind, _key), item in known.items():
            if kind in kinds and FOLLOW_KEY[kind] in follow | cards:
                yield item  # data from the page state without a link to follow

    def follow_entity(self, link: MediumLink, known: Item | None = None) -> Iterator[Any]:
        """A request for the entity's page; its fingerprint is the entity's identity
        (:mod:`topics_crawler.items.merge`), so the dupefilter lets one request per entity through
        (aliases of the same story share its id) and the spider keeps no set of its own.
        A link to a host that left Medium is not fetched: what was known is yielded. A story
        whose card says it is of the kind ``-a access`` leaves out is not fetched."""
        if self.left_medium.skips(link.url):
            if known is not None:
                yield known
            return
        said = known.is_member_only if isinstance(known, Story) else None
        if said is not None and not wanted(self.options.access, said):
            self.crawler.stats.inc_value("access_filter/not_fetched")
            return
        meta: dict[str, Any] = {"entity_kind": link.kind}
        identity = link_identity(link.kind, link.key)
        if identity is not None:
            meta[ENTITY_KEY_META] = identity
        host = link.url.split("/")[2]
        if not is_medium_domain(host):
            meta[MEDIUM_CUSTOM_DOMAIN_META] = True
        yield Request(
            link.url,
            callback=getattr(self, f"parse_{link.kind}"),
            errback=self.on_error,
            cb_kwargs={"known": known} if known is not None else {},
            meta=meta,
        )
