"""The ``topics`` spider: tag pages → stories, authors and publications.

Thin by design: it turns arguments into start requests, hands every response
to :func:`topics_crawler.pages.parse_page`, yields the items and follows the
links the page parser found. What a listing card or a story page already knew
about an entity travels with the request to that entity's own page, fills the
gaps there, and is yielded as it is if that page cannot be fetched.

    scrapy crawl topics -a tags=distributed-training,machine-learning -O out.jsonl
    scrapy crawl topics -a start_urls=https://medium.com/tag/llm -a max_stories=50
    scrapy crawl topics -a tags=llm -a follow=stories          # no author/publication pages
    scrapy crawl topics -a tags=llm -a history=newest -a since=2024-06   # the tag's archive

Scrapy's debugging commands take any Medium URL with no argument: ``scrapy parse
--spider=topics <url>`` runs the callback of that page's kind (:meth:`TopicsSpider.parse`)
and ``scrapy shell <url>`` fetches it as a crawl would (see
:mod:`topics_crawler.middlewares.entity_kind`).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from scrapy import Request, Spider
from scrapy.exceptions import DownloadCancelledError
from scrapy.http import Response
from twisted.python.failure import Failure

from topics_crawler.extensions.progress import HISTORY_EXPECTED_STAT, HISTORY_SIZED_TAGS_STAT
from topics_crawler.fingerprint import CANONICAL_URL_META
from topics_crawler.items import Author, Item, Publication, Story, TagPage
from topics_crawler.merge import ENTITY_KEY_META, link_identity, merge_items
from topics_crawler.middlewares.mirror import MEDIUM_CUSTOM_DOMAIN_META
from topics_crawler.pages import PageKind, PageResult, parse_page
from topics_crawler.pages.coverage import record_coverage
from topics_crawler.signals import page_failed
from topics_crawler.spiders._arguments import NO_TAGS, CrawlOptions, SpiderArgumentError
from topics_crawler.spiders._history import (
    HistoryCallbacks,
    HistoryPager,
    history_ranges,
    is_history_fallback,
    listing_of,
)
from topics_crawler.spiders._refetch import Refetcher
from topics_crawler.urls import MediumLink, classify_url, is_medium_domain

_FOLLOW_KEY = {"story": "stories", "author": "authors", "publication": "publications"}


class TopicsSpider(Spider):
    """Crawl Medium tag pages and the stories, authors and publications they list."""

    name = "topics"

    def __init__(
        self,
        tags: str | None = None,
        start_urls: str | list[str] | None = None,
        max_stories: str | int | None = None,
        follow: str | None = None,
        *,
        history: str | None = None,
        since: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        given = dict(tags=tags, start_urls=start_urls, max_stories=max_stories, follow=follow)
        given.update(history=history, since=since)
        #: The ``-a`` arguments as given (recorded in the dataset manifest).
        self.arguments: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        self.options = CrawlOptions.from_arguments(
            tags=tags, start_urls=start_urls, max_stories=max_stories, follow=follow, extra=kwargs,
            history=history, since=since, require_tags=False,
        )  # fmt: skip
        #: Pages tag histories over GraphQL (``-a history``); set when the crawl starts.
        self.history: HistoryPager | None = None

    @classmethod
    def check_arguments(cls, **spider_args: Any) -> None:
        """Raise :class:`SpiderArgumentError` (a ``ValueError``) for bad ``-a`` arguments."""
        known = ("tags", "start_urls", "max_stories", "follow", "history", "since")
        extra = {k: v for k, v in spider_args.items() if k not in known}
        CrawlOptions.from_arguments(
            **{k: v for k, v in spider_args.items() if k in known}, extra=extra
        )

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
        if self.options.ignored:
            names = ", ".join(f"{k}={v!r}" for k, v in sorted(self.options.ignored.items()))
            self.logger.warning("Ignoring unknown spider arguments: %s", names)
            self.crawler.stats.set_value("spider/ignored_arguments", sorted(self.options.ignored))
        self.history = self.history_pager()
        for slug, url in self.options.tag_urls.items():
            meta = {"entity_kind": "tag", ENTITY_KEY_META: link_identity("tag", slug)}
            yield Request(url, callback=self.parse_tag, errback=self.on_error, meta=meta)
            if self.history is not None:
                yield self.history.start(slug, url)

    def history_pager(self) -> HistoryPager | None:
        """The GraphQL pager of ``-a history`` crawls (None without it)."""
        if self.options.history is None:
            return None
        settings = self.crawler.settings
        return HistoryPager(
            sort_order=self.options.history,
            ranges=history_ranges(self.options.since, datetime.now(UTC).date()),
            callbacks=HistoryCallbacks(
                self.parse_history, self.on_history_error, self.parse_tag, self.on_error
            ),
            stats=self.crawler.stats,
            logger=self.logger,
            max_stories=self.options.max_stories,
            page_size=settings.getint("HISTORY_PAGE_SIZE", 100),
            max_pages=settings.getint("HISTORY_MAX_PAGES", 1000),
        )

    # --- callbacks ---------------------------------------------------------------

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Item | Request]:
        """Any Medium page, by the kind its request names (``scrapy parse <url>``, requests
        without a callback); a page of no entity kind (an RSS feed, a JSON payload) gives
        the items its content holds."""
        kind = response.meta.get("entity_kind")
        if kind in _FOLLOW_KEY or kind == "tag":
            yield from getattr(self, f"parse_{kind}")(response)
            return
        result = self.parse_response(response, None)
        if isinstance(result, Request):
            yield result
            return
        yield from result.items  # a crawl follows no feed

    def parse_tag(self, response: Response) -> Iterator[Item | Request]:
        result = self.parse_response(response, "tag")
        if isinstance(result, Request):
            yield result
            return
        yield from result.items_of("tag_page")
        if self.history is not None and not is_history_fallback(response):
            self.count_expected_history(result)
        if self.history is None or is_history_fallback(response):
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
            yield from self.follow_entities(result, ("author", "publication"))

    def on_history_error(self, failure: Failure) -> Iterator[Request]:
        """A listing request failed for good (HTTP error, timeout): fall back like a bad page."""
        assert self.history is not None, "listing requests exist only with a pager"
        request = failure.request  # type: ignore[attr-defined]
        response = getattr(failure.value, "response", None)
        reason = f"http_{response.status}" if response is not None else failure_reason(failure)
        listing = listing_of(request.meta)
        if listing is not None:
            yield from self.history.fail(listing, reason, failure.getErrorMessage())

    def parse_story(self, response: Response, known: Story | None = None) -> Iterator[Any]:
        yield from self.parse_entity(response, "story", known, follow=("author", "publication"))

    def parse_author(self, response: Response, known: Author | None = None) -> Iterator[Any]:
        yield from self.parse_entity(response, "author", known)

    def parse_publication(
        self, response: Response, known: Publication | None = None
    ) -> Iterator[Any]:
        yield from self.parse_entity(response, "publication", known)

    def on_error(self, failure: Failure) -> Iterator[Item]:
        request = failure.request  # type: ignore[attr-defined]
        kind = request.meta.get("entity_kind", "tag")
        response = getattr(failure.value, "response", None)
        if response is not None:  # an HTTP error status
            status, reason = response.status, f"http_{response.status}"
        else:  # a download error, or a block (challenge, sign-in wall) with its own status
            status, reason = getattr(failure.value, "status", None), failure_reason(failure)
        url = request.meta.get(CANONICAL_URL_META, request.url)
        self.crawler.stats.inc_value(f"fetch/failed/{kind}")
        self.logger.error("Could not fetch %s %s: %s", kind, url, failure.getErrorMessage())
        self.report_failure(url, kind, status, reason, request.meta)
        known = request.cb_kwargs.get("known")
        if known is not None:
            self.crawler.stats.inc_value(f"fetch/kept_partial/{kind}")
            yield known

    # --- helpers ------------------------------------------------------------------

    def count_expected_history(self, result: PageResult) -> None:
        """Add the tag's story count (capped by ``max_stories``) to the history's known
        size, which the progress line turns into a share done and an ETA. Only for
        all-time histories: the count of a ``since`` range is not on the page."""
        if self.options.since is not None:
            return
        for page in result.items_of("tag_page"):
            count = getattr(page, "story_count", None)
            if count:
                cap = self.options.max_stories
                expected = min(count, cap) if cap else count
                self.crawler.stats.inc_value(HISTORY_EXPECTED_STAT, expected)
                self.crawler.stats.inc_value(HISTORY_SIZED_TAGS_STAT)

    def take_stories(self, result: PageResult, limit: int | None) -> Iterator[Item | Request]:
        """Follow (or, when not following stories, yield) the first ``limit`` story cards."""
        cards = {s.story_id: s for s in result.items_of("story") if isinstance(s, Story)}
        for link in result.links_of("story")[:limit]:
            card = cards.get(link.key)
            if "stories" in self.options.follow:
                yield from self.follow_entity(link, known=card)
            elif card is not None:
                yield card

    def parse_response(self, response: Response, kind: PageKind | None) -> PageResult | Request:
        """Parse a page and count it; the request to make instead when the result says
        "fetch again" (see ``_refetch``); else the result, its problems reported with the URL."""
        result = parse_page(
            response.body, response.url, kind=kind, encoding=response_encoding(response)
        )
        kind = kind or result.kind
        stats = self.crawler.stats
        stats.inc_value(f"parse/pages/{kind}")
        if result.errors:
            stats.inc_value(f"parse/errors/{kind}")
            self.logger.warning("Parse problems on %s: %s", response.url, "; ".join(result.errors))
        if (again := self.refetch(response, result)) is not None:
            return again
        record_coverage(stats, kind, result)  # only the parse whose result is kept
        if not result.items:
            stats.inc_value(f"parse/failed/{kind}")
            self.logger.error("No %s data on %s", kind, response.url)
            self.report_failure(response.url, kind, response.status, "parse_failed", response.meta)
        return result

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

    def report_failure(
        self, url: str, kind: str, status: int | None, reason: str, meta: dict[str, Any]
    ) -> None:
        """Send ``page_failed`` for a page that could not be turned into data, for good."""
        self.crawler.signals.send_catch_log(
            signal=page_failed,
            url=url,
            kind=kind,
            status=status,
            reason=reason,
            attempts=meta.get("retry_times", 0) + 1,
            spider=self,
        )

    @cached_property
    def refetcher(self) -> Refetcher:
        """Turns the page results' fetch-again signals into requests (see ``_refetch``)."""
        return Refetcher.from_crawler(self.crawler, self.options, self.logger)

    def refetch(self, response: Response, result: PageResult) -> Request | None:
        """The request to make instead of using ``result`` (broken state, needs the
        browser), or None."""
        return self.refetcher.request_for(response, result)

    def entity_item(self, result: PageResult, item_type: str, known: Item | None) -> Iterator[Item]:
        item = next(iter(result.items_of(item_type)), None)
        if item is None:
            if known is not None:
                yield known
            return
        yield merge_items(known, item) if known is not None else item

    def follow_entities(self, result: PageResult, kinds: tuple[str, ...]) -> Iterator[Any]:
        """Request the pages of ``kinds`` a page links to; yield what it knew when not following."""
        known = {item_key(item): item for item in result.items if not isinstance(item, TagPage)}
        for kind in kinds:
            for link in result.links_of(kind):
                item = known.pop((kind, link.key), None)
                if _FOLLOW_KEY[kind] in self.options.follow:
                    yield from self.follow_entity(link, known=item)
                elif item is not None:
                    yield item
        for (kind, _key), item in known.items():
            if kind in kinds:
                yield item  # data from the page state without a link to follow

    def follow_entity(self, link: MediumLink, known: Item | None = None) -> Iterator[Request]:
        """A request for the entity's page; its fingerprint is the entity's identity
        (:mod:`topics_crawler.merge`), so the dupefilter lets one request per entity through
        (aliases of the same story share its id) and the spider keeps no set of its own."""
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
    return "tag_page", item.tag or ""


def failure_reason(failure: Failure) -> str:
    """Short snake_case reason for a download failure (``timeout_error``, ``dns_lookup_error``);
    ``too_large`` for a response Scrapy cancelled past ``DOWNLOAD_MAXSIZE`` (the only reason
    its HTTP handlers cancel a download)."""
    if isinstance(failure.value, DownloadCancelledError):
        return "too_large"
    name = type(failure.value).__name__
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def response_encoding(response: Response) -> str | None:
    """The encoding Scrapy detected for a text response (None for binary ones)."""
    return getattr(response, "encoding", None)
