"""Drift alarm: each parse's core fields become coverage stats; the health check fails
the crawl with one plain line when a page kind stops giving a field."""

from __future__ import annotations

from scrapy import Spider
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from topics_crawler.extensions.health import HealthConfig, coverage_checks, evaluate
from topics_crawler.pages import PageResult
from topics_crawler.pages.coverage import CORE_FIELDS, fields_found, record_coverage

DRIFT_LINE = (
    "tag pages: 3 of 3 listed no stories — Medium's markup may have changed; "
    "run extract on a saved page (REPLAY_MODE=record) to see"
)


def test_core_fields_found_are_those_not_missing() -> None:
    result = PageResult(kind="tag", url="u", missing=["stories"])
    assert CORE_FIELDS["tag"] == ("name", "stories")
    assert fields_found(result) == ["name"]
    assert fields_found(PageResult(kind="feed", url="u")) == []  # no core fields declared


def test_record_coverage_counts_pages_and_fields() -> None:
    crawler = get_crawler(Spider)
    stats = crawler.stats
    assert stats is not None
    record_coverage(stats, "tag", PageResult(kind="tag", url="a", missing=["stories"]))
    record_coverage(stats, "tag", PageResult(kind="tag", url="b"))
    # a parser that gave up (another kind, no items) counts as a page with nothing found
    record_coverage(stats, "tag", PageResult(kind="unknown", url="c"))
    assert stats.get_value("coverage/tag/pages") == 3
    assert stats.get_value("coverage/tag/found/name") == 2
    assert stats.get_value("coverage/tag/found/stories") == 1


def test_a_kind_that_stopped_giving_a_field_fails_with_one_plain_line() -> None:
    stats = {
        "coverage/tag/pages": 3,
        "coverage/tag/found/name": 3,
        "coverage/tag/found/stories": 0,
        "coverage/story/pages": 4,
        "coverage/story/found/title": 4,
    }
    results = {r.name: r for r in coverage_checks({"tag": 0.5, "story": 0.5}, 1, stats)}
    assert results["coverage/tag/name"].passed
    assert not results["coverage/tag/stories"].passed
    assert results["coverage/tag/stories"].detail == DRIFT_LINE
    assert not results["coverage/story/author_name"].passed  # never found on 4 pages


def test_thresholds_per_field_and_minimum_pages() -> None:
    stats = {"coverage/tag/pages": 4, "coverage/tag/found/name": 4, "coverage/tag/found/stories": 1}
    assert [r.passed for r in coverage_checks({"tag": 0.25}, 1, stats)] == [True, True]
    per_field = coverage_checks({"tag": 0.25, "tag/stories": 0.5}, 1, stats)
    assert [(r.name, r.passed) for r in per_field] == [
        ("coverage/tag/name", True),
        ("coverage/tag/stories", False),
    ]
    assert coverage_checks({"tag": 0.5}, 5, stats) == []  # too few pages to judge


def test_coverage_settings_are_read_once_with_defaults() -> None:
    project = Settings()
    project.setmodule("topics_crawler.settings")
    config = HealthConfig.from_settings(project)
    assert config.min_coverage == {
        "tag": 0.5,
        "tag_archive": 0.5,
        "story": 0.5,
        "author": 0.5,
        "publication": 0.5,
    }
    assert config.coverage_min_pages == 1
    custom = get_crawler(Spider, {"HEALTH_MIN_COVERAGE": '{"tag": 0.9}'}).settings
    assert HealthConfig.from_settings(custom).min_coverage == {"tag": 0.9}
    off = HealthConfig(min_coverage={})
    assert evaluate(off, {"coverage/tag/pages": 3}, {}) == []
