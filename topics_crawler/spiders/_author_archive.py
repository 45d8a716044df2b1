"""Author archives (``-a author_stories=N``): each followed author's stories beyond the
profile's first page, up to N per author, over plain HTTP.

When an author's profile is parsed, :class:`AuthorArchivePager` reads the paging cursor the
profile gives (:attr:`PageResult.cursors`, ``listing="author_stories"``) and asks for the next
page — a GraphQL ``UserArchivePostsQuery`` for a state cursor, ``GET …?format=json`` for a
stream cursor; :mod:`topics_crawler.graphql.author_archive` builds both in one place — then the
next, until N stories were listed, the archive ends or ``AUTHOR_ARCHIVE_MAX_PAGES`` pages were read.
The profile's own first-page stories are followed too. Each listed story is followed like a
tag page's card (its fingerprint is its identity, so each story is fetched once per crawl).

The paging state — the author, stories taken, pages read, cursors seen — travels with each
archive request (``meta["author_archive"]``, an :class:`AuthorArchive`; one archive request per
author is in flight), so N holds across Redis workers and a JOBDIR resume.

Every archive page is read strictly. An unusable one (HTTP error, not JSON, GraphQL errors,
an unexpected shape, a cursor that comes back, a stream page the JSON parser cannot read)
stops that author's archive: ``author_archive/failed/<reason>`` is counted, the URL logged and
a line written to ``failures.jsonl`` (kind ``author_archive``); nothing else is touched. Each
answer counts in ``parse/pages/author_archive`` for the crawl health check. GraphQL ``errors``
are drift (:mod:`topics_crawler.graphql.drift`): counted as ``graphql/drift/UserArchivePostsQuery``,
they fail the crawl's health verdict (exit status 1), since no other listing stands in.

Stats: ``author_archive/authors``, ``author_archive/no_cursor``, ``author_archive/requests``,
``author_archive/pages``, ``author_archive/stories``, ``author_archive/done``,
``author_archive/stopped/page_cap``, ``author_archive/failed/<reason>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar, Protocol

from scrapy import Request
from scrapy.http import Response
from twisted.python.failure import Failure

from topics_crawler import settings as defaults
from topics_crawler.graphql import ArchivePage, archive_result
from topics_crawler.graphql.author_archive import (
    OPERATION_NAME,
    ArchiveReadFailure,
    PageRequest,
    next_page_request,
    read_user_posts,
)
from topics_crawler.graphql.drift import GRAPHQL_ERROR_STATUSES, failure_detail
from topics_crawler.items import Author
from topics_crawler.items.values import format_timestamp
from topics_crawler.middlewares.download_failures import failure_status
from topics_crawler.pages import ListingCursor, PageResult, parse_page
from topics_crawler.pages.author import AUTHOR_STORIES
from topics_crawler.scheduling.fingerprint import CANONICAL_URL_META
from topics_crawler.spiders._helpers import OptionsSpider, request_of
from topics_crawler.spiders._paging import (
    Callbacks,
    Pager,
    PagingState,
    ReportingSpider,
    failure_report,
)
from topics_crawler.urls import author_url

#: Request meta key: the author's archive state (:class:`AuthorArchive`) as of this request.
ARCHIVE_STATE_META = "author_archive"
#: Request meta key: the form of the page asked for (``state`` | ``stream``).
ARCHIVE_FORM_META = "author_archive_form"


@dataclass
class AuthorArchive(PagingState):
    """Paging state of one author's archive."""

    meta_key: ClassVar[str] = ARCHIVE_STATE_META

    username: str
    profile_url: str
    owner: str | None = None
    seen_cursors: set[str] = field(default_factory=set)


class ArchiveSpider(OptionsSpider, ReportingSpider, Protocol):
    """What the archive pager needs of the spider: its archive callbacks."""

    def parse_author_archive(self, response: Response) -> Iterator[Any]: ...
    def on_archive_error(self, failure: Failure) -> Iterator[Any]: ...


class AuthorArchivePager(Pager[AuthorArchive]):
    """Builds archive requests, reads their answers, decides what comes next
    (``limit``: ``author_stories`` per author)."""

    state_type = AuthorArchive
    limit: int

    @classmethod
    def from_spider(cls, spider: ArchiveSpider) -> AuthorArchivePager | None:
        """The pager of ``-a author_stories=N`` crawls (None without it)."""
        crawler = spider.crawler
        if not spider.options.author_stories:
            return None
        assert crawler.stats is not None
        max_pages = crawler.settings.getint(
            "AUTHOR_ARCHIVE_MAX_PAGES", defaults.AUTHOR_ARCHIVE_MAX_PAGES
        )
        return cls(
            callbacks=Callbacks(spider.parse_author_archive, spider.on_archive_error),
            stats=crawler.stats,
            logger=spider.logger,
            limit=spider.options.author_stories,
            max_pages=max_pages,
            report=failure_report(spider, "author_archive"),
        )

    def start(self, profile: PageResult) -> Iterator[Request]:
        """The first archive request of the author of ``profile`` (none without a cursor)."""
        author = next(iter(profile.items_of("author")), None)
        if not isinstance(author, Author) or not author.username:
            return
        archive = AuthorArchive(
            author.username, author.url or author_url(author.username), author.author_id
        )
        self.stats.inc_value("author_archive/authors")
        cursor = _author_cursor(profile)
        if cursor is None:
            self.stats.inc_value("author_archive/no_cursor")
            self.logger.info("Archive of @%s: the profile names no next page", archive.username)
            return
        yield from self._request(archive, cursor)

    def read(self, response: Response) -> tuple[PageResult | None, int, Iterator[Request]]:
        """``(page, stories to take from it, follow-up requests)`` of one archive answer;
        the page is None when it cannot be used (then it was counted and reported)."""
        archive = self.state_of(response.meta)
        if archive is None:
            self.stats.inc_value("author_archive/ignored_answers")
            return None, 0, iter(())
        self.stats.inc_value("parse/pages/author_archive")  # the crawl health's page count
        read = self._read_page(response, archive)
        if isinstance(read, ArchiveReadFailure):
            detail = failure_detail(self.stats, OPERATION_NAME, read)
            self.fail(archive, page_url(response.meta, response.url), read.reason, detail)
            return None, 0, iter(())
        result, cursor = read
        take = min(len(result.links_of("story")), self.limit - archive.taken)
        archive.taken += take
        archive.pages += 1
        self.stats.inc_value("author_archive/pages")
        self.stats.inc_value("author_archive/stories", take)
        return result, take, self._next(archive, cursor)

    def failed(self, failure: Failure) -> Iterator[Request]:
        request = request_of(failure)
        archive = self.state_of(request.meta)
        if archive is not None:
            _status, reason = failure_status(failure)
            url = page_url(request.meta, request.meta.get(CANONICAL_URL_META, request.url))
            self.fail(archive, url, reason, failure.getErrorMessage())
        return iter(())

    def fail(self, archive: AuthorArchive, url: str, reason: str, detail: str) -> None:
        """Stop ``archive`` for ``reason``: counted, logged with the URL, reported."""
        self.stats.inc_value(f"author_archive/failed/{reason}")
        self.logger.error(
            "Archive of @%s stopped after %d page(s) at %s: %s: %s",
            archive.username, archive.pages, url, reason, detail,
        )  # fmt: skip
        if self.report is not None:
            self.report(url, reason, detail)

    def _read_page(
        self, response: Response, archive: AuthorArchive
    ) -> tuple[PageResult, ListingCursor | None] | ArchiveReadFailure:
        if response.meta.get(ARCHIVE_FORM_META) == "state":
            page = read_user_posts(response.body, archive.owner, archive.seen_cursors)
            if isinstance(page, ArchiveReadFailure):
                return page
            scraped_at = format_timestamp(datetime.now(UTC))
            return archive_result(
                ArchivePage(page.nodes), response.url, scraped_at
            ), page.next_cursor
        result = parse_page(response.body, response.url, kind="json")
        if result.errors:
            return ArchiveReadFailure("parse_errors", "; ".join(result.errors))
        if not result.items_of("author"):
            return ArchiveReadFailure("not_a_stream", "no profile stream in the payload")
        cursor = _author_cursor(result)
        if cursor is not None and str(cursor.cursor.get("to")) in archive.seen_cursors:
            return ArchiveReadFailure("repeated_cursor", f"cursor {cursor.cursor!r} came back")
        return result, cursor

    def _next(self, archive: AuthorArchive, cursor: ListingCursor | None) -> Iterator[Request]:
        if archive.taken >= self.limit or cursor is None:
            why = "author_stories reached" if cursor is not None else "archive complete"
            self.stats.inc_value("author_archive/done")
            self.logger.info(
                "Archive of @%s done (%s): %d stories in %d page(s)",
                archive.username, why, archive.taken, archive.pages,
            )  # fmt: skip
            return
        if archive.pages >= self.max_pages:
            self.stats.inc_value("author_archive/stopped/page_cap")
            return
        yield from self._request(archive, cursor)

    def _request(self, archive: AuthorArchive, cursor: ListingCursor) -> Iterator[Request]:
        page: PageRequest | None = next_page_request(
            cursor, archive.username, self.limit - archive.taken
        )
        if page is None:
            self.fail(archive, archive.profile_url, "unknown_cursor", f"cursor {cursor.cursor!r}")
            return
        archive.seen_cursors.add(page.cursor_key)
        self.stats.inc_value("author_archive/requests")
        yield self.callbacks.request(
            page.url,
            method=page.method,
            body=page.body or None,
            headers=page.headers or None,
            meta={
                "entity_kind": "author_archive",
                ARCHIVE_FORM_META: page.form,
                ARCHIVE_STATE_META: archive.copy(),
                # Medium refuses an operation off its schema with 400 and `errors`: read them.
                "handle_httpstatus_list": GRAPHQL_ERROR_STATUSES if page.form == "state" else [],
            },
        )


def page_url(meta: dict[str, Any], url: str) -> str:
    """The URL a failure of this archive request is reported under: the stream page's own,
    the author's profile for a GraphQL page (whose endpoint is every page's)."""
    archive = meta.get(ARCHIVE_STATE_META)
    if meta.get(ARCHIVE_FORM_META) == "state" and isinstance(archive, AuthorArchive):
        return archive.profile_url
    return url


def _author_cursor(result: PageResult) -> ListingCursor | None:
    return next((c for c in result.cursors if c.listing == AUTHOR_STORIES), None)
