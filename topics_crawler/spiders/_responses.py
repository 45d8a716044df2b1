"""Responses with their threads: up to N per story over GraphQL (``-a responses=N``).

After a story page is parsed (its item already yielded), :class:`ResponsesFetcher`
asks ``POST /_/graphql`` for the story's responses (:mod:`topics_crawler.graphql.post_responses`):
one page of top-level responses per request, each with its replies inline, then
the next page, until N rows (replies count) are taken or the listing ends. A story
that says it has no responses costs no request.

Every answer is read strictly
(:func:`~topics_crawler.graphql.post_responses.read_responses`).
An unusable answer or a failed request stops that story's responses with a logged
reason, ``responses/failed/<reason>`` in the stats and a line in ``failures.jsonl``
(the ``page_failed`` signal, kind ``responses``); the story itself is never touched. An answer
of ``errors`` is drift (:mod:`topics_crawler.graphql.drift`): the operation no longer passes
Medium's schema, so every story's responses would fail the same way; it is counted as
``graphql/drift/PostResponsesQuery`` and fails the crawl's health verdict (exit status 1).
Each answer counts as a page in ``parse/pages/responses``, so the crawl health check
(``HEALTH_MAX_FAILURE_RATIO``) weighs failed answers against answers read.

The paging state of a story's thread (rows taken, pages read, cursors seen) travels in
each of its requests (``meta["responses_thread"]``), as a tag's history listing does:
nothing per story stays in the spider, so memory does not grow with the stories crawled,
and a ``JOBDIR`` resume or another worker on a shared Redis queue reads an answer with
the state it was asked with. The first request of a story is one POST body per story,
so the dupefilter lets it through once per crawl.

Stats: ``responses/requests``, ``responses/pages``, ``responses/rows``,
``responses/stories``, ``responses/deleted``, ``responses/skipped/<reason>``,
``responses/failed/<reason>``, ``responses/stopped/page_cap``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar, Protocol

from scrapy import Request
from scrapy.http import Response
from twisted.python.failure import Failure

from topics_crawler.graphql import GRAPHQL_URL
from topics_crawler.graphql.drift import GRAPHQL_ERROR_STATUSES, failure_detail
from topics_crawler.graphql.post_responses import (
    OPERATION_NAME,
    PAGE_SIZE,
    REQUEST_HEADERS,
    ResponsesFailure,
    read_responses,
    responses_body,
)
from topics_crawler.items import Story, StoryResponse
from topics_crawler.items.values import format_timestamp
from topics_crawler.middlewares.download_failures import failure_status
from topics_crawler.spiders._helpers import OptionsSpider, request_of
from topics_crawler.spiders._paging import (
    Callbacks,
    Pager,
    PagingState,
    ReportingSpider,
    failure_report,
)

#: Request meta key: the story whose responses a request asks for.
RESPONSES_STORY_META = "responses_story"
#: Request meta key: the thread's paging state as of this request (a :class:`Thread`).
RESPONSES_THREAD_META = "responses_thread"
#: Most pages of top-level responses read for one story.
MAX_PAGES = 20


@dataclass
class Thread(PagingState):
    """Paging state of one story's responses."""

    meta_key: ClassVar[str] = RESPONSES_THREAD_META

    story_id: str
    story_url: str
    seen_cursors: set[str] = field(default_factory=set)


class ResponsesSpider(OptionsSpider, ReportingSpider, Protocol):
    """What the responses fetcher needs of the spider: its responses callbacks."""

    def parse_responses(self, response: Response) -> Iterator[Any]: ...
    def on_responses_error(self, failure: Failure) -> Iterator[Any]: ...


class ResponsesFetcher(Pager[Thread]):
    """Builds response requests, reads their answers, decides what comes next
    (``limit``: rows per story, replies included)."""

    state_type = Thread
    limit: int

    @classmethod
    def from_spider(cls, spider: ResponsesSpider) -> ResponsesFetcher | None:
        """The fetcher of ``-a responses=N`` crawls (None without it)."""
        if not spider.options.responses:
            return None
        assert spider.crawler.stats is not None
        return cls(
            callbacks=Callbacks(spider.parse_responses, spider.on_responses_error),
            stats=spider.crawler.stats,
            logger=spider.logger,
            limit=spider.options.responses,
            max_pages=MAX_PAGES,
            report=failure_report(spider, "responses"),
        )

    def start(self, story: Story) -> Iterator[Request]:
        """The first request for ``story``'s responses; none when it says it has none."""
        if not story.story_id or story.responses == 0:
            return
        if story.in_response_to:
            return  # a response's own replies come with its story's thread
        thread = Thread(story.story_id, story.url or story.story_id)
        self.stats.inc_value("responses/stories")
        yield self._request(thread, None)

    def read(self, response: Response) -> Iterator[StoryResponse | Request]:
        """Rows of one answer, then the next page's request (or nothing)."""
        thread = self.state_of(response.meta)
        if thread is None or thread.taken >= self.limit:
            self.stats.inc_value("responses/ignored_answers")
            return
        self.stats.inc_value("parse/pages/responses")  # the crawl health's page count
        scraped_at = format_timestamp(datetime.now(UTC))
        page = read_responses(
            response.body,
            thread.story_id,
            scraped_at,
            seen_cursors=thread.seen_cursors,
            limit=self.limit - thread.taken,
        )
        if isinstance(page, ResponsesFailure):
            self.fail(response.meta, page.reason, failure_detail(self.stats, OPERATION_NAME, page))
            return
        thread.pages += 1
        thread.taken += len(page.rows)
        self.stats.inc_value("responses/pages")
        self.stats.inc_value("responses/rows", len(page.rows))
        if page.deleted:
            self.stats.inc_value("responses/deleted", page.deleted)
        for reason, count in page.skipped.items():
            self.stats.inc_value(f"responses/skipped/{reason}", count)
            self.logger.warning(
                "Responses of story %s: skipped %d response(s): %s (%s)",
                thread.story_id, count, reason, thread.story_url,
            )  # fmt: skip
        yield from page.rows
        if page.next_to is None or thread.taken >= self.limit:
            return
        if thread.pages >= self.max_pages:
            self.stats.inc_value("responses/stopped/page_cap")
            return
        thread.seen_cursors.add(page.next_to)
        yield self._request(thread, page.next_to)

    def failed(self, failure: Failure) -> Iterator[Request]:
        _status, reason = failure_status(failure)
        self.fail(request_of(failure).meta, reason, failure.getErrorMessage())
        return iter(())

    def fail(self, meta: dict[str, Any], reason: str, detail: str) -> None:
        """Stop the responses of the story a request with ``meta`` asked for:
        counted, logged, reported."""
        thread = self.state_of(meta)
        story_id = thread.story_id if thread is not None else meta.get(RESPONSES_STORY_META, "")
        url = thread.story_url if thread is not None else story_id
        self.stats.inc_value(f"responses/failed/{reason}")
        self.logger.error(
            "Responses of story %s (%s) stopped: %s: %s", story_id, url, reason, detail
        )
        if self.report is not None:
            self.report(url, reason, detail)

    def _request(self, thread: Thread, to: str | None) -> Request:
        self.stats.inc_value("responses/requests")
        return self.callbacks.request(
            GRAPHQL_URL,
            method="POST",
            body=responses_body(thread.story_id, min(PAGE_SIZE, self.limit), to),
            headers=REQUEST_HEADERS,
            meta={
                "entity_kind": "responses",
                RESPONSES_STORY_META: thread.story_id,
                RESPONSES_THREAD_META: thread.copy(),
                # Medium refuses an operation off its schema with 400 and `errors`: read them.
                "handle_httpstatus_list": GRAPHQL_ERROR_STATUSES,
            },
        )
