"""Crawl health checks at close, spidermon-style: enough items, few failures, few rejects.

Checks (each off unless configured):

* ``HEALTH_MIN_ITEMS`` — ``{"story": 1, "author": 1}``: at least that many items of
  each type the crawl exports (the spider's ``exported_types``) were found: scraped, or
  known already — unchanged since the last run, listed by a feed whose stories the
  dataset has (``feed/known``), exported or staged by the killed process of a resumed
  job — so a quiet feed run and a resume that completes a job are healthy;
* ``HEALTH_MAX_FAILURE_RATIO`` — pages that failed for good (``failures/total``,
  deleted entities excluded) over pages attempted (``parse/pages/*`` +
  ``fetch/failed/*``);
* ``HEALTH_MAX_REJECT_RATIO`` — items the validate pipeline rejected
  (``validate/rejected/<type>``) over items it saw (rejected + ``validate/valid/<type>``);
* ``HEALTH_MIN_COVERAGE`` — the drift alarm: ``{"tag": 0.5, "story/published_at": 0.2}``,
  the least share of parsed pages of a kind (a key ``<kind>``: each of its core fields;
  ``<kind>/<field>``: that field) that gave the field, from the ``coverage/*`` stats of
  :mod:`topics_crawler.pages.coverage`; judged once ``HEALTH_COVERAGE_MIN_PAGES`` pages
  of the kind were parsed. Its failure is one plain line, e.g. ``tag pages: 3 of 3 listed
  no stories — Medium's markup may have changed; …``.
* ``HEALTH_GRAPHQL_DRIFT`` — True: a GraphQL operation Medium answered with ``errors`` (it no
  longer passes Medium's schema: :mod:`topics_crawler.graphql.drift`) is judged, one plain
  line naming the operation and Medium's first message. It fails the crawl unless another
  listing stood in for it: the tag archive's day pages for ``TagArchiveFeedQuery`` (then the
  line is a warning); nothing stands in for an author's archive or a story's responses.

A failed check is logged as an error with its figures and counted as
``health/failed/<check>``; ``health/failed`` is then True. Scrapy's exit
status ignores the close reason, so ``scrapy crawl`` (our command in
:mod:`topics_crawler.commands.crawl`) reads that stat and exits with status 1.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Self

from itemadapter import ItemAdapter
from scrapy import Spider, signals
from scrapy.exceptions import NotConfigured

from topics_crawler.errors import (
    HEALTH_FAILED_STAT,
    NOTHING_TO_DO_STAT,
    REFUSED_STAT,
    TAG_NOT_FOUND_STAT,
    WRITE_FAILED_REASON,
    WRITE_FAILED_STAT,
)
from topics_crawler.graphql.drift import drift_line, drifted_operations
from topics_crawler.pages.coverage import CORE_FIELDS, FOUND_STAT, PAGES_STAT
from topics_crawler.resume.scheduler import EXPORTED_BEFORE_STAT

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class HealthConfig:
    """Thresholds of the checks; None / empty turns a check off."""

    min_items: Mapping[str, int] = field(default_factory=dict)
    max_failure_ratio: float | None = None
    max_reject_ratio: float | None = None
    min_coverage: Mapping[str, float] = field(default_factory=dict)
    coverage_min_pages: int = 1
    graphql_drift: bool = False

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Self:
        coverage = settings.getdict("HEALTH_MIN_COVERAGE")
        return cls(
            min_items={str(k): int(v) for k, v in settings.getdict("HEALTH_MIN_ITEMS").items()},
            max_failure_ratio=_optional_float(settings.get("HEALTH_MAX_FAILURE_RATIO")),
            max_reject_ratio=_optional_float(settings.get("HEALTH_MAX_REJECT_RATIO")),
            min_coverage={str(k): float(v) for k, v in coverage.items() if v is not None},
            coverage_min_pages=settings.getint("HEALTH_COVERAGE_MIN_PAGES", 1),
            graphql_drift=settings.getbool("HEALTH_GRAPHQL_DRIFT"),
        )

    @property
    def empty(self) -> bool:
        return (
            not self.min_items
            and self.max_failure_ratio is None
            and self.max_reject_ratio is None
            and not self.min_coverage
            and not self.graphql_drift
        )


@dataclass(frozen=True)
class CheckResult:
    """One check: its name, whether it passed, and the figures behind it (``warn``: a passed
    check whose detail is still worth a warning line)."""

    name: str
    passed: bool
    detail: str
    warn: bool = False


def _optional_float(value: Any) -> float | None:
    return None if value is None or value == "" else float(value)


def _sum_stats(stats: Mapping[str, Any], prefix: str) -> int:
    """Sum of ``<prefix><name>`` stats one level deep (``validate/rejected/story``, not
    ``validate/rejected/story/<reason>``)."""
    return sum(
        int(value)
        for key, value in stats.items()
        if key.startswith(prefix) and "/" not in key[len(prefix) :]
    )


def ratio(part: int, whole: int) -> float:
    """``part / whole``; 1.0 when there is a part but no whole, 0.0 when neither."""
    if whole <= 0:
        return 1.0 if part > 0 else 0.0
    return part / whole


def known_already(item_type: str, stats: Mapping[str, Any]) -> dict[str, int]:
    """Entities of ``item_type`` this run found without exporting them now: unchanged
    since the last run, listed by a feed while the dataset has them (``feed/known``:
    stories only), exported or staged by the killed process of a resumed job."""
    known = {
        "unchanged": int(stats.get(f"dedupe/unchanged/{item_type}", 0)),
        "already in the dataset": int(stats.get("feed/known", 0)) if item_type == "story" else 0,
        "exported before the resume": int(stats.get(f"{EXPORTED_BEFORE_STAT}{item_type}", 0)),
        "staged before the resume": int(stats.get(f"dataset/resumed/{item_type}", 0)),
    }
    return {what: count for what, count in known.items() if count}


def _min_items_check(
    item_type: str, minimum: int, exported: int, stats: Mapping[str, Any]
) -> CheckResult:
    """Valid entities found: exported now, or known already (:func:`known_already`): an
    incremental crawl or a feed run that finds nothing new is healthy, as is a resume
    that completes a killed job."""
    known = known_already(item_type, stats)
    found = exported + sum(known.values())
    parts = [f"{exported} exported", *(f"{count} {what}" for what, count in known.items())]
    if "unchanged" not in known:
        parts.insert(1, "0 unchanged")
    detail = f"{found} {item_type} items ({', '.join(parts)}), minimum {minimum}"
    return CheckResult(f"min_items/{item_type}", found >= minimum, detail)


def evaluate(
    config: HealthConfig, stats: Mapping[str, Any], items: Mapping[str, int]
) -> list[CheckResult]:
    """Run every configured check on the final stats and the item counts per type."""
    results = [
        _min_items_check(item_type, minimum, items.get(item_type, 0), stats)
        for item_type, minimum in sorted(config.min_items.items())
    ]
    if config.max_failure_ratio is not None:
        failed = int(stats.get("failures/total", 0))
        attempted = _sum_stats(stats, "parse/pages/") + _sum_stats(stats, "fetch/failed/")
        value = ratio(failed, attempted)
        results.append(
            CheckResult(
                "max_failure_ratio",
                value <= config.max_failure_ratio,
                f"{failed} of {attempted} pages failed ({value:.1%}), "
                f"maximum {config.max_failure_ratio:.1%}",
            )
        )
    if config.max_reject_ratio is not None:
        rejected = _sum_stats(stats, "validate/rejected/")
        seen = rejected + _sum_stats(stats, "validate/valid/")
        value = ratio(rejected, seen)
        results.append(
            CheckResult(
                "max_reject_ratio",
                value <= config.max_reject_ratio,
                f"{rejected} of {seen} items rejected by validation ({value:.1%}), "
                f"maximum {config.max_reject_ratio:.1%}",
            )
        )
    results += coverage_checks(config.min_coverage, config.coverage_min_pages, stats)
    if config.graphql_drift:
        results += graphql_drift_checks(stats)
    return results


def _day_archive_stood_in(stats: Mapping[str, Any]) -> bool:
    """The tag history's day-archive walks ran and none of them failed."""
    return int(stats.get("day_archive/walks", 0)) > 0 and not _sum_stats(
        stats, "day_archive/failed/"
    )


#: Operation → whether another listing did its job in this crawl (None: nothing can).
STAND_INS = {"TagArchiveFeedQuery": _day_archive_stood_in}


def graphql_drift_checks(stats: Mapping[str, Any]) -> list[CheckResult]:
    """One check per GraphQL operation Medium refused (``graphql/drift/*`` stats): failed,
    unless another listing stood in for it (then passed, with a warning line)."""
    results = []
    for operation, answers, message in drifted_operations(stats):
        stand_in = STAND_INS.get(operation)
        stood_in = stand_in is not None and stand_in(stats)
        detail = f"{drift_line(operation, message)} ({answers} answer(s)); "
        detail += (
            "the tag day archive listed the history instead"
            if stood_in
            else "its data is missing from this crawl: the operation needs updating"
        )
        results.append(CheckResult(f"graphql_drift/{operation}", stood_in, detail, warn=True))
    return results


#: How a page without the core field reads in the alarm ("3 of 3 listed no stories").
COVERAGE_PHRASES = {"stories": "listed no stories", "name": "had no name"}
DRIFT_HINT = (
    "Medium's markup may have changed; run extract on a saved page (REPLAY_MODE=record) to see"
)


def coverage_checks(
    min_coverage: Mapping[str, float], min_pages: int, stats: Mapping[str, Any]
) -> list[CheckResult]:
    """One check per kind and core field with a threshold: the share of parsed pages of
    the kind that gave the field must reach it (``coverage/<kind>/…`` stats)."""
    results = []
    for kind, fields in sorted(CORE_FIELDS.items()):
        pages = int(stats.get(PAGES_STAT.format(kind=kind), 0))
        if pages < max(min_pages, 1):
            continue
        for name in fields:
            minimum = min_coverage.get(f"{kind}/{name}", min_coverage.get(kind))
            if minimum is None:
                continue
            found = int(stats.get(FOUND_STAT.format(kind=kind, field=name), 0))
            phrase = COVERAGE_PHRASES.get(name, f"had no {name}")
            detail = f"{kind} pages: {pages - found} of {pages} {phrase} — {DRIFT_HINT}"
            results.append(CheckResult(f"coverage/{kind}/{name}", found >= minimum * pages, detail))
    return results


def no_tag_exists(spider: Spider, missing: Any) -> bool:
    """Every tag the crawl was given answered "not found" (each said so in one line)."""
    options = getattr(spider, "options", None)
    given = set(getattr(options, "tag_urls", None) or ())
    return bool(given) and given <= set(missing or ())


class CrawlHealth:
    """Extension running :func:`evaluate` when the spider closes."""

    def __init__(self, stats: StatsCollector, config: HealthConfig) -> None:
        self.stats = stats
        self.config = config
        self.items: Counter[str] = Counter()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = HealthConfig.from_settings(crawler.settings)
        if not crawler.settings.getbool("HEALTH_ENABLED", True) or config.empty:
            raise NotConfigured("no health checks configured")
        assert crawler.stats is not None
        extension = cls(crawler.stats, config)
        crawler.signals.connect(extension.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def item_scraped(self, item: Any) -> None:
        item_type = ItemAdapter(item).get("item_type") or type(item).__name__.lower()
        self.items[str(item_type)] += 1

    def config_for(self, spider: Spider) -> HealthConfig:
        """The checks that apply to this crawl: a minimum only for the item types it exports
        (the spider's ``exported_types``: ``-a follow=none`` exports no story)."""
        exported = getattr(spider, "exported_types", None)
        if exported is None:
            return self.config
        minimums = {name: n for name, n in self.config.min_items.items() if name in exported}
        return replace(self.config, min_items=minimums)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if getattr(spider, "one_page_run", False):  # scrapy parse / shell: no crawl to judge
            logger.info("One-page run: no crawl-level health checks")
            return
        if self.stats.get_value(NOTHING_TO_DO_STAT):  # closed at once, on purpose
            logger.info("Health checks skipped: the crawl had nothing to do")
            return
        if reason == WRITE_FAILED_REASON or self.stats.get_value(WRITE_FAILED_STAT):
            # already failed, with its one line
            logger.info("Health checks skipped: the crawl stopped on a failed write")
            return
        if self.stats.get_value(REFUSED_STAT):  # refused by the site, with its one line
            logger.info("Health checks skipped: the site refused the crawl")
            return
        if no_tag_exists(spider, self.stats.get_value(TAG_NOT_FOUND_STAT)):  # its one line
            logger.info("Health checks skipped: no tag given exists")
            return
        results = evaluate(self.config_for(spider), self.stats.get_stats(), self.items)
        failed = [result for result in results if not result.passed]
        for result in results:
            if result.passed and result.warn:
                logger.warning("%s", result.detail)  # one plain sentence
        for result in failed:
            self.stats.set_value(f"health/failed/{result.name}", result.detail)
            if result.name.startswith(("coverage/", "graphql_drift/")):
                logger.error("%s", result.detail)  # already one plain sentence
            else:
                logger.error("Health check %s failed: %s", result.name, result.detail)
        self.stats.set_value(HEALTH_FAILED_STAT, bool(failed))
        if not failed:
            logger.info("Health checks passed (%d checks, close reason %s)", len(results), reason)
