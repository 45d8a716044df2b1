"""Name the Medium entity of a request the spider did not build (``scrapy parse``, ``shell``).

The spider's own requests carry ``meta["entity_kind"]`` (tag, story, author,
publication), which decides whether a page may be rendered
(:mod:`~topics_crawler.middlewares.render_policy`). A request made by hand —
``scrapy parse <url>``, ``scrapy shell <url>``, ``fetch(url)`` in the shell —
gets the kind its URL shows, so it is fetched exactly as a crawl would fetch
that page. Requests that already say their kind, robots.txt and non-GET
requests pass unchanged.
"""

from __future__ import annotations

from scrapy import Request

from topics_crawler.middlewares.render_policy import ENTITY_KIND_META
from topics_crawler.urls import classify_url, parse_tag_archive_url


class EntityKindMiddleware:
    """Downloader middleware, before the mirror (which rewrites the URL)."""

    def process_request(self, request: Request) -> None:
        if ENTITY_KIND_META in request.meta or request.method != "GET":
            return
        if request.meta.get("dont_obey_robotstxt"):  # robots.txt requests
            return
        if parse_tag_archive_url(request.url) is not None:  # a tag's archive, not its page
            request.meta[ENTITY_KIND_META] = "tag_archive"
            return
        link = classify_url(request.url)
        if link is not None:
            request.meta[ENTITY_KIND_META] = link.kind
