"""Ask once more for a page whose embedded state JSON was broken.

A 200 page whose Apollo (or legacy) state does not decode was most likely cut
or corrupted on the way (a proxy, a CDN, a server that stopped mid-render):
the parsers still fall back to JSON-LD, meta tags and the DOM, but those carry
fewer fields (no claps, no ids, fewer cards). So the spider asks for such a
page once more before it settles for what the HTML layers give. The second
answer is used whatever it is, so a page that is always broken costs one extra
request, never a loop. Counted as ``parse/refetched/<kind>``.
"""

from __future__ import annotations

import logging

from scrapy import Request
from scrapy.http import Response
from scrapy.statscollectors import StatsCollector

from topics_crawler.middlewares.blocked import original_request
from topics_crawler.pages import PageResult

#: Request meta key set on the one re-request of a page with broken state.
REFETCH_META = "state_refetch"
#: Meta Scrapy sets for one download, which a new request must not carry (see Scrapy's
#: MetaCopyDetectionMiddleware): the re-request is a new request, with its own retries.
DOWNLOAD_META = frozenset({"download_latency", "retry_times", "cache_timestamp", "_dont_cache"})


def has_broken_state(result: PageResult) -> bool:
    """True when the page carried embedded state JSON that could not be decoded
    (the document's typed ``broken_state`` signal, never the error text)."""
    return result.signal("broken_state") is not None


def refetch_request(
    response: Response,
    result: PageResult,
    stats: StatsCollector,
    logger: logging.LoggerAdapter[logging.Logger] | logging.Logger,
) -> Request | None:
    """The re-request of a broken-state page (first time only), else None."""
    if response.request is None or response.meta.get(REFETCH_META):
        return None
    if not has_broken_state(result):
        return None
    kind = response.meta.get("entity_kind", "page")
    stats.inc_value(f"parse/refetched/{kind}")
    logger.warning("Broken page state on %s; asking for the page once more", response.url)
    retry = original_request(response.request)
    meta = {k: v for k, v in retry.meta.items() if k not in DOWNLOAD_META}
    return retry.replace(dont_filter=True, meta={**meta, REFETCH_META: True})
