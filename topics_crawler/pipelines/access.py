"""``-a access=free|member_only``: only free stories, or only member-only ones, are exported.

A story passes when its ``is_member_only`` says it is of the kind asked for; a story whose
page did not say (``is_member_only`` None) is not taken either. Every story left out is
counted (``access_filter/dropped/<free|member_only|unknown>``, ``access_filter/kept``); other
items pass. The spider also leaves unfetched the story pages whose listing card already
says they are of the other kind (``access_filter/not_fetched``). No wall is bypassed: a
member-only story is its preview unless the user's own session shows it whole
(:mod:`topics_crawler.items.access`).
"""

from __future__ import annotations

from typing import Any, Self

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem
from scrapy.statscollectors import StatsCollector

from topics_crawler.items import Story


def wanted(access: str | None, is_member_only: bool | None) -> bool:
    """Whether a story of this kind is taken under ``-a access`` (None: every story)."""
    if access is None:
        return True
    return is_member_only is (access == "member_only")


def kind_of(is_member_only: bool | None) -> str:
    return "unknown" if is_member_only is None else "member_only" if is_member_only else "free"


class AccessFilterPipeline:
    """Drops the stories ``-a access`` leaves out (counted, logged at DEBUG)."""

    def __init__(self, crawler: Crawler, stats: StatsCollector) -> None:
        self.crawler = crawler
        self.stats = stats
        self.access: str | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        assert crawler.stats is not None
        return cls(crawler, crawler.stats)

    def open_spider(self) -> None:
        self.access = getattr(getattr(self.crawler.spider, "options", None), "access", None)

    def process_item(self, item: Any) -> Any:
        if self.access is None or not isinstance(item, Story):
            return item
        if wanted(self.access, item.is_member_only):
            self.stats.inc_value("access_filter/kept")
            return item
        kind = kind_of(item.is_member_only)
        self.stats.inc_value(f"access_filter/dropped/{kind}")
        raise DropItem(f"Left out ({kind}, -a access={self.access}) {item.url}", log_level="DEBUG")
