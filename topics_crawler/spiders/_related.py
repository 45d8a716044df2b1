"""The topic-graph crawl (``-a related_depth=N -a max_tags=M``): related tags, breadth first.

From the seed tags the crawl follows each tag page's related tags (``TagPage.related_tags``,
page order) up to ``related_depth`` hops, each tag once, and requests at most ``max_tags``
tag pages in all, **seed tags included** (so ``max_tags`` is the size of the whole graph the
crawl reads; a cap below the number of seeds is refused). A tag counts once its page is
requested, whether or not the page can be read.

The walk is one chain, like a tag's history listing (``_history``): its whole state — the
breadth-first queue of ``(tag, depth)``, every tag already queued, how many were requested —
travels with the one tag request in flight (``meta["tag_walk"]``, a :class:`TagWalk`), and the
response to it (or its errback) sends the next. Whichever worker of a shared Redis queue
handles that response continues from the state that came with it, so the depth, "each tag
once" and the ``max_tags`` cap hold across any number of workers and across a JOBDIR
resume, with no counter in a shared store. The order is deterministic: the same site gives
the same tags. Each tag request also carries its entity identity (``tag:<slug>``), so the
dupefilter lets one request per tag through; a walk request the dupefilter drops anyway
(that tag was already requested) hands the walk on to the next tag
(:meth:`TagWalker.dropped`). The walk costs one round trip per tag; the stories of the
tags read so far are fetched meanwhile.

A related tag whose page cannot be read (HTTP error, no data) is counted
(``fetch/failed/tag``, ``parse/failed/tag``), logged with its URL and listed in
``failures.jsonl`` by the spider as any tag page; the walk goes on with the next tag.

Stats: ``tags/seeds``, ``tags/followed`` (related tags requested), ``tags/depth/<d>``,
``tags/skipped/depth`` (related tags one hop past ``related_depth``),
``tags/skipped/max_tags`` (tags the cap left out), ``tags/walk_dropped``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from scrapy import Request, signals
from scrapy.statscollectors import StatsCollector

from topics_crawler.items import TagPage
from topics_crawler.items.listing import RELATED, SECTION
from topics_crawler.items.values import tag_slug
from topics_crawler.spiders._helpers import Logger, OptionsSpider
from topics_crawler.spiders._paging import CarriedState
from topics_crawler.urls import tag_url

#: Request meta key: the walk's state (:class:`TagWalk`) as of this tag request.
TAG_WALK_META = "tag_walk"
#: Request meta key: hops from the nearest seed tag of the tag this request asks for.
TAG_DEPTH_META = "tag_depth"


def section_source(meta: dict[str, Any]) -> str:
    """How a tag page's sections list its stories (``TagStory.source``): ``related`` for the
    page of a tag the walk reached from another tag, ``section`` for a tag the crawl
    started from."""
    return RELATED if int(meta.get(TAG_DEPTH_META) or 0) > 0 else SECTION


#: ``request_for(slug, url, meta)``: the requests of one tag page (its page, its history).
RequestsFor = Callable[[str, str, dict[str, Any]], Iterable[Request]]


@dataclass
class TagWalk(CarriedState):
    """Breadth-first state of one topic-graph crawl, carried by its one tag request in
    flight (picklable: the Redis queue and JOBDIR store requests)."""

    meta_key: ClassVar[str] = TAG_WALK_META

    queue: list[tuple[str, int]]
    """``(tag slug, depth)`` queued and not yet requested, in breadth-first order."""
    seen: set[str] = field(default_factory=set)
    """Every tag queued, requested or skipped (each tag once)."""
    requested: int = 0
    """Tag pages requested so far, seeds included (the ``max_tags`` count)."""


class WalkSpider(OptionsSpider, Protocol):
    """What the tag walker needs of the spider: the requests of one tag."""

    def tag_requests(self, slug: str, url: str, meta: dict[str, Any]) -> Iterator[Request]: ...


class TagWalker:
    """Starts the walk, and sends the next tag request when a tag page is done."""

    def __init__(
        self,
        *,
        max_depth: int,
        max_tags: int | None,
        requests_for: RequestsFor,
        stats: StatsCollector,
        logger: Logger,
    ) -> None:
        self.max_depth = max_depth
        self.max_tags = max_tags
        self.requests_for = requests_for
        self.stats = stats
        self.logger = logger

    @classmethod
    def from_spider(cls, spider: WalkSpider) -> TagWalker | None:
        """The walk of ``-a related_depth=N`` crawls (None without it); a walk request the
        dupefilter drops hands the walk on (:meth:`dropped`)."""
        options, crawler = spider.options, spider.crawler
        if not options.related_depth:
            return None
        assert crawler.stats is not None
        walker = cls(
            max_depth=options.related_depth,
            max_tags=options.max_tags,
            requests_for=spider.tag_requests,
            stats=crawler.stats,
            logger=spider.logger,
        )

        def on_request_dropped(request: Request) -> None:
            assert crawler.engine is not None, "requests are dropped while the engine runs"
            for follow_up in walker.dropped(request):
                crawler.engine.crawl(follow_up)

        crawler.signals.connect(on_request_dropped, signal=signals.request_dropped, weak=False)
        return walker

    def start(self, seeds: Iterable[str]) -> Iterator[Request]:
        """The request of the first seed tag; the others wait in its walk's queue."""
        slugs = list(dict.fromkeys(seeds))
        self.stats.set_value("tags/seeds", len(slugs))
        walk = TagWalk(queue=[(slug, 0) for slug in slugs], seen=set(slugs))
        yield from self._next(walk)

    def advance(self, meta: dict[str, Any], pages: Iterable[TagPage]) -> Iterator[Request]:
        """The tag page of a walk request was read (``pages``: what it gave, maybe
        nothing): queue its unseen related tags, then request the next tag."""
        walk = TagWalk.from_meta(meta)
        if walk is None:
            return  # not a walk request (a history fallback, ``scrapy parse``)
        depth = int(meta.get(TAG_DEPTH_META, 0))
        for page in pages:
            for related in page.related_tags:
                slug = tag_slug(related)
                if not slug or slug in walk.seen:
                    continue
                walk.seen.add(slug)
                if depth >= self.max_depth:
                    self.stats.inc_value("tags/skipped/depth")
                else:
                    walk.queue.append((slug, depth + 1))
        yield from self._next(walk)

    def dropped(self, request: Request) -> Iterator[Request]:
        """A walk request the dupefilter dropped (its tag was requested before): the
        walk goes on with the next tag, so it never stalls."""
        walk = TagWalk.from_meta(request.meta)
        if walk is None:
            return
        self.stats.inc_value("tags/walk_dropped")
        self.logger.warning("Topic graph: %s was requested before; next tag", request.url)
        yield from self._next(walk)

    def _next(self, walk: TagWalk) -> Iterator[Request]:
        if not walk.queue:
            self.logger.info("Topic graph done: %d tag(s) requested", walk.requested)
            return
        if self.max_tags is not None and walk.requested >= self.max_tags:
            self.stats.inc_value("tags/skipped/max_tags", len(walk.queue))
            self.logger.info(
                "Topic graph stopped at max_tags=%d; %d queued tag(s) left out: %s",
                self.max_tags, len(walk.queue), ", ".join(slug for slug, _ in walk.queue[:10]),
            )  # fmt: skip
            return
        slug, depth = walk.queue.pop(0)
        walk.requested += 1
        self.stats.inc_value(f"tags/depth/{depth}")
        if depth:
            self.stats.inc_value("tags/followed")
            self.logger.info("Topic graph: following tag %s (depth %d)", slug, depth)
        meta = {TAG_WALK_META: walk.copy(), TAG_DEPTH_META: depth}
        yield from self.requests_for(slug, tag_url(slug), meta)
