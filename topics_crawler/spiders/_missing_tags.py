"""A tag that does not exist: its tag page, its feed (``-a source=feed``) or its day archive
(``-a history``) answered 404/410.

One line per tag, ``Tag not found: <slug> (<url>)`` (the address asked: a mirror's under
``MEDIUM_BASE_URL``, so a mirror that answers 404 to everything shows), whichever of its
requests says so first (instead of Scrapy's "Ignoring non-200 response" and a fallback to
the browser); listed once in ``failures.jsonl`` with reason ``tag_not_found`` and counted
apart from the pages that failed (like a deleted story: ``failures/tag_not_found``, outside
the failure ratio).

A tag the user gave that does not exist is the run's verdict: the stat
:data:`~topics_crawler.errors.TAG_NOT_FOUND_STAT` lists those slugs, and ``scrapy crawl``
exits with status 1 (:func:`topics_crawler.errors.exit_code`): what was asked for cannot be
in the data, and the same command again cannot help. A related tag met on the walk
(``-a related_depth``) that does not exist is listed in ``tags/missing_related``, without a
verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from scrapy.statscollectors import StatsCollector

from topics_crawler.errors import TAG_NOT_FOUND_STAT
from topics_crawler.extensions.failures import GONE_STATUSES
from topics_crawler.spiders._helpers import Logger, OptionsSpider
from topics_crawler.spiders._paging import ReportingSpider
from topics_crawler.urls import classify_url

#: The failure reason of a tag that does not exist (``failures.jsonl``).
TAG_NOT_FOUND = "tag_not_found"
MISSING_RELATED_STAT = "tags/missing_related"


def missing_tag(kind: str, status: int | None, url: str, meta: Mapping[str, Any]) -> str | None:
    """The slug of the tag a failed request of its tag page or feed says does not exist
    (a 404/410), or None."""
    if status not in GONE_STATUSES:  # the statuses of a page that does not exist
        return None
    if kind == "feed":
        slug = meta.get("feed_tag")
        return str(slug) if slug else None
    if kind != "tag":
        return None
    link = classify_url(url)
    return link.key if link is not None and link.kind == "tag" else None


class MissingTagsSpider(OptionsSpider, ReportingSpider, Protocol):
    """What the record needs of the spider: the tags given, its failure report."""


class MissingTags:
    """The tags found not to exist in this crawl, each recorded once."""

    def __init__(
        self,
        stats: StatsCollector,
        logger: Logger,
        given: frozenset[str],
        report: Callable[[str, int | None], None],
    ) -> None:
        self.stats = stats
        self.logger = logger
        self.given = given
        self.report = report
        """``report(url, status)``: list the tag in ``failures.jsonl``."""

    @classmethod
    def from_spider(cls, spider: MissingTagsSpider) -> MissingTags:
        assert spider.crawler.stats is not None
        return cls(
            spider.crawler.stats,
            spider.logger,
            frozenset(spider.options.tag_urls),
            lambda url, status: spider.report_failure(url, "tag", status, TAG_NOT_FOUND, {}),
        )

    def known(self, slug: str) -> bool:
        """``slug`` was already found not to exist."""
        return slug in self._listed(TAG_NOT_FOUND_STAT) or slug in self._listed(
            MISSING_RELATED_STAT
        )

    def record(self, slug: str, url: str, status: int | None, fetched: str | None = None) -> None:
        """The tag ``slug`` does not exist (``url`` said so; ``fetched``: the address asked,
        a mirror's under ``MEDIUM_BASE_URL``): one line naming the address asked, listed
        under ``url``, counted (once per tag)."""
        if self.known(slug):
            return
        stat = TAG_NOT_FOUND_STAT if slug in self.given else MISSING_RELATED_STAT
        self.stats.set_value(stat, [*self._listed(stat), slug])
        self.logger.error("Tag not found: %s (%s)", slug, fetched or url)
        self.report(url, status)

    def _listed(self, stat: str) -> list[str]:
        return list(self.stats.get_value(stat) or [])
