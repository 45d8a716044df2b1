"""The spider's parts for each crawl mode, built once from its options and settings.

Each returns None when its ``-a`` argument is off. Their requests carry the spider's own
callbacks (Scrapy stores a request's callback by the spider method's name, for JOBDIR and
the Redis queue).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from scrapy import signals

from topics_crawler.graphql import MAX_PAGE_SIZE
from topics_crawler.scheduling.queue_length import requests_waiting
from topics_crawler.spiders._author_archive import AuthorArchivePager
from topics_crawler.spiders._day_archive import DayArchiveWalker, WalkCallbacks
from topics_crawler.spiders._feed import FeedSource, known_story_ids
from topics_crawler.spiders._history import HistoryCallbacks, HistoryPager, history_ranges
from topics_crawler.spiders._related import TagWalker
from topics_crawler.spiders._responses import ResponsesFetcher

if TYPE_CHECKING:
    from topics_crawler.spiders.topics import TopicsSpider


def history_pager(spider: TopicsSpider) -> HistoryPager | None:
    """The GraphQL pager of ``-a history=newest|most_read`` crawls (None without it), the
    day archive standing in for a tag whose GraphQL listing fails."""
    options = spider.options
    if options.history is None or options.history == "ARCHIVE":
        return None
    settings = spider.crawler.settings
    walker = spider.day_archive
    assert walker is not None, "a history crawl has a day archive walker"
    return HistoryPager(
        sort_order=options.history,
        ranges=history_ranges(options.since, options.until, datetime.now(UTC).date()),
        days=(options.since, options.until),
        stand_in=lambda listing, why: iter([walker.start(listing.tag, listing.tag_url, why)]),
        report=lambda url, reason, detail: spider.report_failure(
            url, "history", None, reason, {}, detail=detail
        ),
        callbacks=HistoryCallbacks(
            spider.parse_history, spider.on_history_error, spider.parse_tag, spider.on_error
        ),
        stats=spider.crawler.stats,
        waiting=lambda: requests_waiting(spider.crawler),
        logger=spider.logger,
        max_stories=spider.options.max_stories,
        page_size=settings.getint("HISTORY_PAGE_SIZE", MAX_PAGE_SIZE),
        max_pages=settings.getint("HISTORY_MAX_PAGES", 1000),
    )


def day_archive_walker(spider: TopicsSpider) -> DayArchiveWalker | None:
    """The day-archive walk of ``-a history`` crawls (None without it): the listing of
    ``-a history=archive``, the stand-in of the GraphQL one otherwise."""
    options = spider.options
    if options.history is None:
        return None
    return DayArchiveWalker(
        callbacks=WalkCallbacks(
            spider.parse_day_archive, spider.on_day_archive_error, spider.parse_tag, spider.on_error
        ),
        stats=spider.crawler.stats,
        logger=spider.logger,
        report=lambda url, reason, detail: spider.report_failure(
            url, "tag_archive", None, reason, {}, detail=detail
        ),
        waiting=lambda: requests_waiting(spider.crawler),
        max_stories=options.max_stories,
        max_pages=spider.crawler.settings.getint("HISTORY_MAX_PAGES", 1000),
        since=options.since,
        until=options.until,
    )


def responses_fetcher(spider: TopicsSpider) -> ResponsesFetcher | None:
    """The GraphQL fetcher of ``-a responses=N`` crawls (None without it)."""
    if not spider.options.responses:
        return None
    return ResponsesFetcher(
        limit=spider.options.responses,
        callback=spider.parse_responses,
        errback=spider.on_responses_error,
        stats=spider.crawler.stats,
        logger=spider.logger,
        report=lambda url, reason, detail: spider.report_failure(
            url, "responses", None, reason, {}, detail=detail
        ),
    )


def feed_source(spider: TopicsSpider) -> FeedSource:
    """The feed fast path of ``-a source=feed`` crawls (stories the dataset lacks)."""
    return FeedSource(
        known=known_story_ids(spider.crawler.settings.get("DATASET_DIR")),
        callback=spider.parse_feed,
        errback=spider.on_error,
        stats=spider.crawler.stats,
        logger=spider.logger,
    )


def tag_walker(spider: TopicsSpider) -> TagWalker | None:
    """The breadth-first related-tag walk of ``-a related_depth=N`` (None without it)."""
    if not spider.options.related_depth:
        return None
    spider.crawler.signals.connect(spider.on_request_dropped, signal=signals.request_dropped)
    return TagWalker(
        max_depth=spider.options.related_depth,
        max_tags=spider.options.max_tags,
        requests_for=spider.tag_requests,
        stats=spider.crawler.stats,
        logger=spider.logger,
    )


def archive_pager(spider: TopicsSpider) -> AuthorArchivePager | None:
    """The author archive pager of ``-a author_stories=N`` (None without it)."""
    if not spider.options.author_stories:
        return None
    return AuthorArchivePager(
        limit=spider.options.author_stories,
        callback=spider.parse_author_archive,
        errback=spider.on_archive_error,
        stats=spider.crawler.stats,
        logger=spider.logger,
        report=lambda url, reason, detail: spider.report_failure(
            url, "author_archive", None, reason, {}, detail=detail
        ),
        max_pages=spider.crawler.settings.getint("AUTHOR_ARCHIVE_MAX_PAGES", 200),
    )
