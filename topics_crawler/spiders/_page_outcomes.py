"""How each page of the ``topics`` spider turns out, a part of the spider (a base class of
:class:`~topics_crawler.spiders.topics.TopicsSpider`: Scrapy stores a request's errback by
the spider method's name, and the other parts report through the spider):

* :meth:`PageOutcomes.parse_response`: a page parsed and counted, its problems logged with
  the URL; the request to make instead when the result says "fetch again";
* :meth:`PageOutcomes.on_error`: a request that failed for good: one line, the page's
  ``page_failed``, and what was known of its entity kept;
* :meth:`PageOutcomes.report_failure`: ``page_failed`` for ``failures.jsonl``, which the
  walkers (``failure_report`` in :mod:`._paging`) and the missing tags send through too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from scrapy import Request, Spider
from scrapy.http import Response
from twisted.python.failure import Failure

from topics_crawler.items import Item
from topics_crawler.middlewares.download_failures import failure_status
from topics_crawler.pages import PageKind, PageResult, parse_page
from topics_crawler.pages.coverage import record_coverage
from topics_crawler.scheduling.fingerprint import CANONICAL_URL_META
from topics_crawler.signals import page_failed
from topics_crawler.spiders._helpers import request_of, response_encoding
from topics_crawler.spiders._left_medium import LeftMediumHosts
from topics_crawler.spiders._missing_tags import MissingTags, missing_tag
from topics_crawler.spiders._refetch import Refetcher
from topics_crawler.spiders._related import TagWalker

#: Failure reasons of pages the site refused for good (logged once per host, as one line).
REFUSED_REASONS = frozenset({"waf", "refused_by_site"})


class PageOutcomes(Spider):
    """What becomes of each page: parsed and counted, or failed and reported."""

    # The spider's parts this one uses (built by ``TopicsSpider.build_parts``).
    refetcher: Refetcher
    walker: TagWalker | None
    missing_tags: MissingTags
    left_medium: LeftMediumHosts

    def on_error(self, failure: Failure) -> Iterator[Item | Request]:
        request = request_of(failure)
        if (plain := self.refetcher.after_browser_failure(request, failure)) is not None:
            yield plain  # the page over plain HTTP: kept without what only the browser shows
            return
        if self.walker is not None:
            yield from self.walker.advance(request.meta, ())  # a tag that cannot be read
        kind = request.meta.get("entity_kind", "tag")
        status, reason = failure_status(failure)
        url = request.meta.get(CANONICAL_URL_META, request.url)
        slug = missing_tag(kind, status, url, request.meta)
        if slug is not None:  # one line, and the run's verdict when the tag was given
            self.missing_tags.record(slug, url, status, fetched=request.url)
            return
        self.crawler.stats.inc_value(f"fetch/failed/{kind}")
        # a page the site refused: its host's one line (middlewares/refused.py) said why
        level = logging.WARNING if reason in REFUSED_REASONS else logging.ERROR
        self.logger.log(level, "Could not fetch %s %s: %s", kind, url, failure.getErrorMessage())
        self.report_failure(url, kind, status, reason, request.meta)
        known = request.cb_kwargs.get("known")
        if known is not None:
            self.crawler.stats.inc_value(f"fetch/kept_partial/{kind}")
            yield known

    def parse_response(self, response: Response, kind: PageKind | None) -> PageResult | Request:
        """Parse a page and count it; the request to make instead when the result says
        "fetch again" (see ``_refetch``); else the result, its problems reported with the URL."""
        result = parse_page(
            response.body, response.url, kind=kind, encoding=response_encoding(response)
        )
        kind = kind or result.kind
        stats = self.crawler.stats
        stats.inc_value(f"parse/pages/{kind}")
        if result.off_medium is not None:  # a host that left Medium: one line per host
            url = response.meta.get(CANONICAL_URL_META, response.url)
            self.left_medium.record(result.off_medium, url)
            self.report_failure(url, kind, response.status, "left_medium", response.meta)
            return result
        if result.errors:
            stats.inc_value(f"parse/errors/{kind}")
            self.logger.warning("Parse problems on %s: %s", response.url, "; ".join(result.errors))
        if (again := self.refetcher.request_for(response, result)) is not None:
            return again
        record_coverage(stats, kind, result)  # only the parse whose result is kept
        if not result.items:
            stats.inc_value(f"parse/failed/{kind}")
            self.logger.error("No %s data on %s", kind, response.url)
            self.report_failure(response.url, kind, response.status, "parse_failed", response.meta)
        return result

    def report_failure(
        self,
        url: str,
        kind: str,
        status: int | None,
        reason: str,
        meta: dict[str, Any],
        *,
        detail: str | None = None,
    ) -> None:
        """Send ``page_failed`` for a page that could not be turned into data, for good
        (``detail``: a sentence for ``failures.jsonl``, e.g. a GraphQL drift line)."""
        self.crawler.signals.send_catch_log(
            signal=page_failed,
            url=url,
            kind=kind,
            status=status,
            reason=reason,
            attempts=meta.get("retry_times", 0) + 1,
            detail=detail,
            spider=self,
        )
