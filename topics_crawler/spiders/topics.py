"""The ``topics`` spider: tag pages → stories, authors and publications.

Thin by design: it turns arguments into start requests, hands every response
to :func:`topics_crawler.pages.parse_page`, yields the items and follows the
links the page parser found. What a listing card or a story page already knew
about an entity travels with the request to that entity's own page, fills the
gaps there, and is yielded as it is if that page cannot be fetched. Following those
links is :mod:`._following`, what becomes of each page (parsed and counted, or failed and
reported) :mod:`._page_outcomes`: base classes of the spider, whose methods the requests
carry; its other parts are built by their own ``from_spider`` (:meth:`TopicsSpider.build_parts`).

    scrapy crawl topics -a tags=distributed-training,machine-learning -O out.jsonl
    scrapy crawl topics -a start_urls=https://medium.com/tag/llm -a max_stories=50
    scrapy crawl topics -a tags=llm -a follow=stories          # tag pages and stories only
    scrapy crawl topics -a tags=llm -a follow=none -a cards=stories   # the cards, no story page
    scrapy crawl topics -a tags=llm -a history=newest -a since=2024-06   # the tag's archive
    scrapy crawl topics -a tags=llm -a history=archive -a since=2026-09-01 -a until=2026-09-07
    scrapy crawl topics -a tags=llm -a responses=20     # each story's responses with threads
    scrapy crawl topics -a tags=llm -a source=feed -s DATASET_DIR=data/llm   # only what is new
    scrapy crawl topics -a tags=llm -a related_depth=2 -a max_tags=50   # the topic graph
    scrapy crawl topics -a tags=llm -a author_stories=100   # each author's archive too

Scrapy's debugging commands take any Medium URL with no argument: ``scrapy parse
--spider=topics <url>`` runs the callback of that page's kind (:meth:`TopicsSpider.parse`)
and ``scrapy shell <url>`` fetches it as a crawl would (see
:mod:`topics_crawler.middlewares.entity_kind`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, Self

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from twisted.python.failure import Failure

from topics_crawler.items import Author, Item, Publication, Story, TagPage
from topics_crawler.items.merge import ENTITY_KEY_META, link_identity
from topics_crawler.middlewares.blocked import RENDER_REASON_META
from topics_crawler.pages import PageKind
from topics_crawler.pages.tag_edges import tag_edges
from topics_crawler.safety.secrets import SESSION_META
from topics_crawler.spiders._argument_values import SpiderArgumentError
from topics_crawler.spiders._arguments import NO_TAGS, SPIDER_ARGUMENTS, CrawlOptions
from topics_crawler.spiders._author_archive import AuthorArchivePager
from topics_crawler.spiders._day_archive import DayArchiveWalker
from topics_crawler.spiders._feed import FeedSource
from topics_crawler.spiders._following import FOLLOW_KEY, EntityFollowing
from topics_crawler.spiders._helpers import seen_with_session
from topics_crawler.spiders._history import HistoryPager
from topics_crawler.spiders._history_span import count_expected_history
from topics_crawler.spiders._left_medium import LeftMediumHosts
from topics_crawler.spiders._listing_requests import is_history_fallback
from topics_crawler.spiders._memberships import section_stories
from topics_crawler.spiders._missing_tags import MissingTags
from topics_crawler.spiders._refetch import REFETCH_META, Refetcher
from topics_crawler.spiders._related import TagWalker, section_source
from topics_crawler.spiders._responses import ResponsesFetcher
from topics_crawler.urls import classify_url

#: Meta of the request that asks for the same page again (see ``spiders/_refetch.py``).
_AGAIN_META = (RENDER_REASON_META, REFETCH_META)


def page_again(outputs: list[Item | Request]) -> Request | None:
    """The request for the same page again, when a callback's whole answer is that."""
    if len(outputs) == 1 and isinstance(outputs[0], Request):
        return outputs[0] if any(key in outputs[0].meta for key in _AGAIN_META) else None
    return None


class TopicsSpider(EntityFollowing):
    """Crawl Medium tag pages and the stories, authors and publications they list."""

    name = "topics"

    def __init__(self, **arguments: Any) -> None:
        super().__init__()
        #: The ``-a`` arguments as given (recorded in the dataset manifest).
        self.arguments: dict[str, Any] = {
            k: v for k, v in arguments.items() if v is not None and k in SPIDER_ARGUMENTS
        }
        self.options = CrawlOptions.from_spider_arguments(arguments, require_tags=False)
        # The crawl's parts, built when the spider opens (:meth:`build_parts`); None when
        # their ``-a`` argument is off.
        #: Turns a page result's fetch-again signals into requests (``_refetch``).
        self.refetcher: Refetcher
        #: Reads each tag's RSS feed instead of its page (``-a source=feed``).
        self.feeds: FeedSource | None = None
        #: Walks related tags breadth first (``-a related_depth=N``).
        self.walker: TagWalker | None = None
        #: Walks tag histories through their day archives (``-a history``: the listing of
        #: ``history=archive``, the stand-in of the GraphQL one otherwise).
        self.day_archive: DayArchiveWalker | None = None
        #: Pages tag histories over GraphQL (``-a history=newest|most_read``).
        self.history: HistoryPager | None = None
        #: Pages each followed author's archive (``-a author_stories=N``).
        self.archives: AuthorArchivePager | None = None
        #: Fetches each story's responses (``-a responses=N``).
        self.threads: ResponsesFetcher | None = None
        #: Hosts whose pages were not Medium's: named once, their links not followed.
        self.left_medium: LeftMediumHosts
        #: Tags found not to exist: one line each, and the run's verdict for given ones.
        self.missing_tags: MissingTags

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.build_parts, signal=signals.spider_opened)
        return spider

    def build_parts(self) -> None:
        """Build the crawl's parts, each by its own ``from_spider``, when the spider opens
        (the crawler's stats exist from then on: Scrapy builds them after the spider)."""
        self.refetcher = Refetcher.from_spider(self)
        self.missing_tags = MissingTags.from_spider(self)
        self.feeds = FeedSource.from_spider(self)
        self.walker = TagWalker.from_spider(self)
        self.day_archive = DayArchiveWalker.from_spider(self)
        self.history = HistoryPager.from_spider(self)  # after the walk: it stands in
        self.archives = AuthorArchivePager.from_spider(self)
        self.threads = ResponsesFetcher.from_spider(self)
        self.left_medium = LeftMediumHosts.from_spider(self)

    @classmethod
    def check_arguments(cls, **spider_args: Any) -> None:
        """Raise :class:`SpiderArgumentError` (a ``ValueError``) for bad ``-a`` arguments."""
        CrawlOptions.from_spider_arguments(spider_args)

    @property
    def exported_types(self) -> frozenset[str]:
        """The item types this crawl exports (``-a follow``, ``-a cards``, ``-a responses``):
        the health check asks for a minimum of these only."""
        return self.options.item_types

    @property
    def one_page_run(self) -> bool:
        """No tag to crawl: the spider serves ``scrapy parse`` or ``scrapy shell`` of one page
        (``scrapy crawl`` refuses to start without a tag), so crawl-level checks do not apply."""
        return not self.options.tag_urls

    @classmethod
    def handles_request(cls, request: Request) -> bool:
        """Medium pages are this spider's (``scrapy parse``/``shell`` without ``--spider``)."""
        return classify_url(request.url) is not None

    async def start(self) -> AsyncIterator[Request]:
        if self.one_page_run:
            raise SpiderArgumentError(NO_TAGS)
        if self.feeds is not None:
            for slug in self.options.tag_urls:
                yield self.feeds.start(slug)
            return
        if self.walker is not None:
            for request in self.walker.start(self.options.tag_urls):
                yield request
            return
        for slug, url in self.options.tag_urls.items():
            for request in self.tag_requests(slug, url, {}):
                yield request

    def tag_requests(self, slug: str, url: str, meta: dict[str, Any]) -> Iterator[Request]:
        """The tag page of ``slug`` (one request per tag: its identity is its fingerprint),
        and the first page of its history with ``-a history``."""
        meta = {"entity_kind": "tag", ENTITY_KEY_META: link_identity("tag", slug), **meta}
        yield Request(url, callback=self.parse_tag, errback=self.on_error, meta=meta)
        if self.history is not None:
            yield self.history.start(slug, url)
        elif self.day_archive is not None:  # -a history=archive
            yield self.day_archive.start(slug, url)

    # --- callbacks ---------------------------------------------------------------

    async def parse(self, response: Response, **kwargs: Any) -> AsyncIterator[Item | Request]:
        """Any Medium page, by the kind its request names (``scrapy parse <url>``, requests
        without a callback); a page of no entity kind (an RSS feed, a JSON payload) gives
        the items its content holds.

        In a one-page run (``scrapy parse``) a page the crawl would ask for again — through
        the browser, when plain HTTP lacked what it shows, or once more for broken state —
        is fetched again here (:meth:`~scrapy.core.engine.ExecutionEngine.download_async`,
        the downloader middlewares applied as for any request), so its items are the
        command's first depth level, as a crawl would export them."""
        outputs = list(self.parse_page(response))
        for _ in range(2):  # broken state, then the browser: each asked at most once
            again = page_again(outputs) if self.one_page_run else None
            if again is None:
                break
            outputs = list(self.parse_page(await self.crawler.engine.download_async(again)))
        for output in outputs:
            yield output

    def parse_page(self, response: Response) -> Iterator[Item | Request]:
        """:meth:`parse` of one response: the callback of its kind, or its content's items."""
        kind = response.meta.get("entity_kind")
        if kind in FOLLOW_KEY or kind == "tag":
            yield from getattr(self, f"parse_{kind}")(response)
            return
        result = self.parse_response(response, None)
        if isinstance(result, Request):
            yield result
            return
        yield from result.items  # a crawl follows no feed

    def parse_feed(self, response: Response) -> Iterator[Item | Request]:
        """A tag's RSS feed (``-a source=feed``): the page of each story the dataset lacks
        (its feed item travels along and is kept if the page fails)."""
        assert self.feeds is not None, "feed requests exist only with a feed source"
        result = self.parse_response(response, "feed")
        if isinstance(result, Request):
            yield result
            return
        for link, item in self.feeds.new_stories(result):
            if "stories" in self.options.follow:
                yield from self.follow_entity(link, known=item)
            elif item is not None:  # -a cards=stories (checked with the arguments)
                yield item
        yield from self.listed(self.feeds.listed(response, result))

    def parse_tag(self, response: Response) -> Iterator[Item | Request]:
        result = self.parse_response(response, "tag")
        if isinstance(result, Request):
            yield result
            return
        pages = [page for page in result.items_of("tag_page") if isinstance(page, TagPage)]
        if self.walker is not None:
            yield from self.walker.advance(response.meta, pages)  # the next tag of the graph
        for page in pages:
            yield page
            yield from tag_edges(page)  # the topic map the page shows
            yield from self.listed(section_stories(page, section_source(response.meta)))
        history = self.options.history is not None
        if history and not is_history_fallback(response):
            count_expected_history(self.crawler.stats, result, self.options)
        if not history or is_history_fallback(response):
            yield from self.take_stories(result, self.options.max_stories)
        # else the tag's stories come from its history listing
        yield from self.follow_entities(result, ("author", "publication"))

    def parse_history(self, response: Response) -> Iterator[Item | Request]:
        """One page of a tag's GraphQL archive: its stories like tag-page cards, then
        the next page (or, when the page is unusable, the tag page for the browser)."""
        assert self.history is not None, "listing requests exist only with a pager"
        result, follow_up = self.history.read(response)
        yield from follow_up
        if result is not None:
            yield from self.take_stories(result, None)
            yield from self.listed(self.history.listed(response, result))
            yield from self.follow_entities(result, ("author", "publication"))

    def on_history_error(self, failure: Failure) -> Iterator[Request]:
        """A listing request failed for good (HTTP error, timeout): fall back like a bad page."""
        assert self.history is not None, "listing requests exist only with a pager"
        yield from self.history.failed(failure)

    def parse_day_archive(self, response: Response) -> Iterator[Item | Request]:
        """One page of a tag's day archive: the day's stories like tag-page cards, then the
        next page of the walk (or, when the walk cannot go on, the tag page for the browser)."""
        assert self.day_archive is not None, "archive requests exist only with a walker"
        result, follow_up = self.day_archive.read(response)
        yield from follow_up
        if result is not None:
            yield from self.take_stories(result, None)
            yield from self.listed(self.day_archive.listed(response, result))
            yield from self.follow_entities(result, ("author", "publication"))

    def on_day_archive_error(self, failure: Failure) -> Iterator[Request]:
        """An archive request failed for good (HTTP error, timeout): the walk stops."""
        assert self.day_archive is not None, "archive requests exist only with a walker"
        yield from self.day_archive.failed(failure)

    def parse_story(self, response: Response, known: Story | None = None) -> Iterator[Any]:
        session = bool(response.meta.get(SESSION_META))
        for found in self.parse_entity(response, "story", known, follow=("author", "publication")):
            output = seen_with_session(found) if session and isinstance(found, Story) else found
            yield output
            if self.threads is not None and isinstance(output, Story):
                yield from self.threads.start(output)

    def parse_responses(self, response: Response) -> Iterator[Any]:
        """One page of a story's responses: its rows, then the next page."""
        assert self.threads is not None, "responses requests exist only with a fetcher"
        yield from self.threads.read(response)

    def on_responses_error(self, failure: Failure) -> Iterator[Request]:
        """A responses request failed for good: that story's responses stop, nothing else."""
        assert self.threads is not None, "responses requests exist only with a fetcher"
        yield from self.threads.failed(failure)

    def parse_author(self, response: Response, known: Author | None = None) -> Iterator[Any]:
        result = self.parse_response(response, "author")
        if isinstance(result, Request):
            yield result
            return
        yield from self.entity_item(result, "author", known)
        if self.archives is not None:  # -a author_stories: the first page, then the archive
            yield from self.take_stories(result, None)
            yield from self.archives.start(result)

    def parse_author_archive(self, response: Response) -> Iterator[Any]:
        """One page of an author's archive: its stories like tag-page cards, then the next."""
        assert self.archives is not None, "archive requests exist only with a pager"
        result, take, follow_up = self.archives.read(response)
        yield from follow_up
        if result is not None:
            yield from self.take_stories(result, take)

    def on_archive_error(self, failure: Failure) -> Iterator[Request]:
        """An archive request failed for good: that author's archive stops, nothing else."""
        assert self.archives is not None, "archive requests exist only with a pager"
        yield from self.archives.failed(failure)

    def parse_publication(
        self, response: Response, known: Publication | None = None
    ) -> Iterator[Any]:
        yield from self.parse_entity(response, "publication", known)

    # --- helpers ------------------------------------------------------------------

    def parse_entity(
        self, response: Response, kind: PageKind, known: Item | None, follow: tuple[str, ...] = ()
    ) -> Iterator[Any]:
        """A story, author or publication page: its item (gaps filled from what was
        known), then the entities of ``follow`` it links to."""
        result = self.parse_response(response, kind)
        if isinstance(result, Request):
            yield result
            return
        yield from self.entity_item(result, kind, known)
        yield from self.follow_entities(result, follow)
