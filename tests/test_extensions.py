"""Progress line and stats file extensions."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from topics_crawler.extensions.progress import CrawlProgress, progress_line
from topics_crawler.extensions.stats_file import StatsFile
from topics_crawler.items import Author, Story


def test_progress_line_counts_items_per_type_and_errors() -> None:
    crawler = get_crawler(Spider, {"LOGSTATS_INTERVAL": 30.0})
    crawler.stats.open_spider()
    progress = CrawlProgress.from_crawler(crawler)
    spider = Spider("s")
    for item in (Story(story_id="0123456789ab"), Story(story_id="0123456789ac"), Author()):
        progress.item_scraped(item, spider)
    progress.item_scraped({"item_type": "tag_page"}, spider)
    crawler.stats.set_value("response_received_count", 12)
    crawler.stats.set_value("parse/errors/story", 2)
    crawler.stats.set_value("parse/errors/tag", 1)
    line = progress_line(crawler.stats.get_stats(), 24.0, None, 30.0)
    assert line.startswith("Progress: 12 pages (24/min)")
    assert "story=2 author=1 publication=0 tag_page=1" in line
    assert "errors parse=3 download=0" in line


def test_progress_line_shows_the_learned_rate_of_each_limited_host() -> None:
    stats: dict[str, object] = {"response_received_count": 3}
    assert "rate " not in progress_line(stats, 6.0, None, 30.0)
    stats["rate/learned/medium.com"] = 4.2
    stats["rate/learned/127.0.0.1"] = None  # no limit learned: not shown
    assert progress_line(stats, 6.0, None, 30.0).endswith(", rate medium.com=4.2/s")


def test_progress_off_without_interval() -> None:
    with pytest.raises(NotConfigured):
        CrawlProgress.from_crawler(get_crawler(Spider, {"LOGSTATS_INTERVAL": 0}))


def test_stats_file_written_at_close(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "stats.json"
    crawler = get_crawler(Spider, {"STATS_FILE": str(target)})
    crawler.stats.open_spider()
    crawler.stats.set_value("parse/errors/story", 1)
    extension = StatsFile.from_crawler(crawler)
    extension.spider_closed(Spider("s"), "finished")
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["parse/errors/story"] == 1
    assert data["finish_reason"] == "finished"


def test_without_a_stats_file_the_stats_are_logged_at_debug(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    crawler = get_crawler(Spider, {})
    crawler.stats.open_spider()
    crawler.stats.set_value("parse/errors/story", 1)
    extension = StatsFile.from_crawler(crawler)
    with caplog.at_level(logging.DEBUG, logger="topics_crawler.extensions.stats_file"):
        extension.spider_closed(Spider("s"), "finished")
    [record] = caplog.records
    assert record.levelno == logging.DEBUG
    assert record.getMessage().startswith("Dumping Scrapy stats:\n{")
    assert "'parse/errors/story': 1" in record.getMessage()
    assert list(tmp_path.iterdir()) == []
