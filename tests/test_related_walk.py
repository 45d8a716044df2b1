"""The breadth-first tag walk's decisions (no network): order, depth, cap, a dropped request."""

from __future__ import annotations

import logging
import pickle
from collections.abc import Iterator
from typing import Any

from scrapy import Request
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from topics_crawler.items import TagPage
from topics_crawler.spiders._related import TAG_DEPTH_META, TagWalk, TagWalker

GRAPH = {"a": ["b", "c"], "b": ["a", "d"], "c": ["D", "e"], "d": ["f"], "e": [], "f": []}


def requests_for(slug: str, url: str, meta: dict[str, Any]) -> Iterator[Request]:
    yield Request(url, meta={"tag": slug, **meta})


def walker(depth: int, cap: int | None = None) -> tuple[TagWalker, MemoryStatsCollector]:
    stats = MemoryStatsCollector(get_crawler())
    return TagWalker(
        max_depth=depth, max_tags=cap, requests_for=requests_for, stats=stats,
        logger=logging.getLogger("test"),
    ), stats  # fmt: skip


def walk(tag_walker: TagWalker, seeds: list[str]) -> list[tuple[str, int]]:
    """Every tag requested, answering each request with its page of :data:`GRAPH`."""
    order = []
    pending = list(tag_walker.start(seeds))
    while pending:
        request = pickle.loads(pickle.dumps(pending.pop()))  # as a Redis queue stores it
        slug = request.meta["tag"]
        order.append((slug, request.meta[TAG_DEPTH_META]))
        page = TagPage(tag=slug, related_tags=GRAPH.get(slug, []))
        pending += list(tag_walker.advance(request.meta, [page]))
    return order


def test_breadth_first_each_tag_once_through_cycles_and_case() -> None:
    tag_walker, stats = walker(depth=2)
    assert walk(tag_walker, ["a"]) == [("a", 0), ("b", 1), ("c", 1), ("d", 2), ("e", 2)]
    assert stats.get_value("tags/skipped/depth") == 1  # f, one hop too far
    assert stats.get_value("tags/followed") == 4


def test_the_cap_counts_seeds_and_keeps_breadth_first_order() -> None:
    tag_walker, stats = walker(depth=5, cap=3)
    assert walk(tag_walker, ["c", "a"]) == [("c", 0), ("a", 0), ("d", 1)]
    assert stats.get_value("tags/seeds") == 2
    assert stats.get_value("tags/skipped/max_tags") == 3  # e, b and f (found on d)


def test_a_dropped_walk_request_hands_the_walk_on() -> None:
    tag_walker, stats = walker(depth=1)
    first = next(iter(tag_walker.start(["a"])))
    (second,) = tag_walker.advance(first.meta, [TagPage(tag="a", related_tags=["b", "c"])])
    (third,) = tag_walker.dropped(second)
    assert (second.meta["tag"], third.meta["tag"]) == ("b", "c")
    assert stats.get_value("tags/walk_dropped") == 1
    assert list(tag_walker.dropped(Request("https://medium.com/tag/x"))) == []
    assert TagWalk.from_meta({}) is None
