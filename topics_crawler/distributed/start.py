"""Start requests of a distributed crawl go through the shared seen-set.

Scrapy's default ``start()`` and scrapy-redis's Redis-fed spiders mark start
requests ``dont_filter``; with several workers that would fetch each start page
once per worker. This spider middleware clears the flag on start requests only
(copies rescheduled later — mirror rewrites, retries — keep theirs), so the first
worker to schedule a tag page claims it and the others skip it.
"""

from __future__ import annotations

from scrapy import Request
from scrapy.http import Response
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware


class SharedStartRequests(BaseSpiderMiddleware):
    """Clear ``dont_filter`` on start requests."""

    def get_processed_request(self, request: Request, response: Response | None) -> Request | None:
        if response is None and request.dont_filter:
            if self.crawler is not None and self.crawler.stats is not None:
                self.crawler.stats.inc_value("distributed/start_requests_shared")
            return request.replace(dont_filter=False)
        return request
