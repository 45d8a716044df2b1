"""How a tag history's listing requests (the GraphQL pager, :mod:`._history`, and the day
archive, :mod:`._day_archive`) take their place in the queue, and the tag page asked again
for the browser when a listing cannot go on.

Listing requests go before the story pages they produce, until more than
``QUEUE_AHEAD_PAGES`` pages' worth of requests wait in the scheduler: then the next one
waits behind them. "Waiting" is what the scheduler itself says
(:func:`~topics_crawler.scheduling.queue_length.requests_waiting`, the same for Scrapy's, the
journal and the Redis scheduler; on Redis the shared queue as this worker sees it), read
when the next listing request is made, before the page's own stories are scheduled; so
the listing runs at most that bound, plus one page, plus what is being downloaded, ahead
of the stories it listed, and the queue (each request holding its card) stays a few
pages long however large the archive.
"""

from __future__ import annotations

from collections.abc import Callable

from scrapy import Request
from scrapy.http import Response
from scrapy.statscollectors import StatsCollector

from topics_crawler.middlewares.blocked import RENDER_REASON_META
from topics_crawler.middlewares.render_policy import HISTORY_FALLBACK
from topics_crawler.spiders._paging import Callbacks

#: Listing requests go before story pages, so paging never waits behind a page's stories…
LISTING_PRIORITY = 10
#: …unless this many listing pages' worth of requests already wait in the scheduler: then
#: the next listing page waits behind them, so the queue (each request holding its card)
#: stays a few pages long and memory does not grow with the archive's size.
QUEUE_AHEAD_PAGES = 4

#: How many requests wait in the scheduler now (None: it cannot say).
WaitingCount = Callable[[], int | None]


def listing_priority(
    waiting: int | None, page_stories: int, stats: StatsCollector, name: str
) -> int:
    """A listing request's priority: :data:`LISTING_PRIORITY` (before the story pages), or
    below them when more than :data:`QUEUE_AHEAD_PAGES` pages' worth (``page_stories`` a
    page) of requests wait in the scheduler (``<name>/waited_for_queue``;
    ``<name>/queue_unknown`` when it cannot say)."""
    if waiting is None:
        stats.inc_value(f"{name}/queue_unknown")
    elif waiting > QUEUE_AHEAD_PAGES * page_stories:
        stats.inc_value(f"{name}/waited_for_queue")
        return -LISTING_PRIORITY
    return LISTING_PRIORITY


def fallback_request(tag_url: str, callbacks: Callbacks) -> Request:
    """The tag page again, flagged for the browser path (it passed the dupefilter once)."""
    return callbacks.request(
        tag_url,
        dont_filter=True,
        meta={"entity_kind": "tag", RENDER_REASON_META: HISTORY_FALLBACK},
    )


def is_history_fallback(response: Response) -> bool:
    """True for the tag page requested because the history failed."""
    return response.meta.get(RENDER_REASON_META) == HISTORY_FALLBACK
