"""End to end: ``scrapy crawl topics -a related_depth=N -a max_tags=M`` walks the local site's
related-tag graph (:mod:`topics_crawler.site.topic_graph`) breadth first, each tag once, and a tag
with no page is a recorded failure, not a crash (in-process crawls). Two workers on a real
Redis request the same tags, each once, within the cap; a killed walk resumes (processes)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.crawl_helpers import CrawlRun, crawl_command, crawl_in_process, run_workers, start_crawl
from tests.services import RedisServer, wait_until
from topics_crawler.site.server import SiteServer
from topics_crawler.site.topic_graph import BREADTH_FIRST, MISSING, SEED, topic_graph_site

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    with SiteServer(topic_graph_site()) as server:
        yield server


def crawl(site: SiteServer, out: Path, *arguments: str, **settings: Any) -> CrawlRun:
    site.clear_log()
    run = crawl_in_process(
        site.base_url, out, f"tags={SEED}", "follow=none", *arguments,
        settings={"FAILURES_FILE": str(out / "failures.jsonl"), **settings},
    )  # fmt: skip
    assert run.returncode == 0, run.log[-3000:]
    return run


def requested_tags(site: SiteServer) -> Counter[str]:
    """Tag pages the site was asked for, by slug."""
    paths = [urlsplit(path).path for _method, path, _status in site.requests]
    return Counter(path.split("/")[2] for path in paths if path.startswith("/tag/"))


def walk_to(depth: int, cap: int | None = None) -> list[str]:
    tags = [tag for tag, hops in BREADTH_FIRST if hops <= depth]
    return tags[:cap]


def failed_urls(run: CrawlRun) -> list[str]:
    path = run.out_dir / "failures.jsonl"
    lines = path.read_text("utf-8").splitlines() if path.exists() else []
    return [json.loads(line)["url"] for line in lines]


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_each_depth_crawls_exactly_the_tags_within_its_hops_each_once(
    site: SiteServer, tmp_path: Path, depth: int
) -> None:
    run = crawl(site, tmp_path, f"related_depth={depth}")
    expected = walk_to(depth)
    assert requested_tags(site) == Counter(expected)  # each tag once, none beyond the depth
    pages = [page["tag"] for page in run.of_type("tag_page")]
    assert sorted(pages) == sorted(tag for tag in expected if tag not in MISSING)
    edges = run.of_type("tag_edge")
    assert {edge["from_tag"] for edge in edges} == set(pages)
    assert {"kind": "related", "to": SEED} in [
        {"kind": edge["kind"], "to": edge["to"]} for edge in edges if edge["from_tag"] != SEED
    ] or depth == 0  # machine-learning points back at the seed: the cycle is an edge
    if depth:
        assert run.stats["tags/followed"] == len(expected) - 1
        assert run.stats["tags/skipped/depth"] >= 1
        assert failed_urls(run) == ["https://medium.com/tag/gpu"]  # related, no page
        assert f"ERROR: Tag not found: gpu ({site.base_url}/tag/gpu)" in run.log
        assert run.stats["tags/missing_related"] == ["gpu"]  # no verdict: not a given tag
    else:
        assert "tags/followed" not in run.stats
        assert failed_urls(run) == []


def test_max_tags_caps_the_walk_in_breadth_first_order_seed_included(
    site: SiteServer, tmp_path: Path
) -> None:
    run = crawl(site, tmp_path, "related_depth=3", "max_tags=6")
    assert requested_tags(site) == Counter(walk_to(3, cap=6))
    assert run.stats["tags/seeds"] == 1
    assert run.stats["tags/followed"] == 5
    assert run.stats["tags/skipped/max_tags"] == 2  # data-science, artificial-intelligence
    assert "Topic graph stopped at max_tags=6" in run.log


def test_deepest_walk_reads_every_tag_once_through_the_cycles(
    site: SiteServer, tmp_path: Path
) -> None:
    run = crawl(site, tmp_path, "related_depth=5")
    assert requested_tags(site) == Counter([*walk_to(5), "probability"])
    assert run.stats["tags/depth/4"] == 1
    assert sorted(failed_urls(run)) == [
        "https://medium.com/tag/gpu", "https://medium.com/tag/probability",
    ]  # fmt: skip


@pytest.mark.slow
def test_two_workers_on_redis_walk_the_same_graph_within_the_cap(
    site: SiteServer, tmp_path: Path
) -> None:
    args = (f"tags={SEED}", "follow=stories", "related_depth=3", "max_tags=7")
    site.clear_log()
    with RedisServer(tmp_path / "redis") as redis:
        settings = {
            "REDIS_URL": redis.url,
            "DISTRIBUTED_IDLE_CLOSE": 1,
            "HEALTH_ENABLED": False,  # a worker that got no tag page exports few items
        }
        runs = run_workers(site.base_url, tmp_path, *args, settings=settings)
        requested = requested_tags(site)
    for run in runs:
        assert run.returncode == 0, run.log[-3000:]
    assert requested == Counter(walk_to(3, cap=7))
    assert sum(run.stats.get("tags/followed", 0) for run in runs) == 6
    pages = Counter(page["tag"] for run in runs for page in run.of_type("tag_page"))
    assert pages == Counter(tag for tag in walk_to(3, cap=7) if tag not in MISSING)


def test_a_walk_killed_mid_way_resumes_from_its_jobdir_to_the_same_tags(tmp_path: Path) -> None:
    """SIGKILL while the walk is at its third tag; the same command with the same JOBDIR
    requests the rest of the walk (its state came back with the journaled request)."""
    with SiteServer(topic_graph_site(), latency=0.3) as site:
        settings = {
            "MEDIUM_BASE_URL": site.base_url,
            "JOBDIR": tmp_path / "job",
            "LOG_FILE": tmp_path / "crawl.log",
            "AUTOTHROTTLE_ENABLED": False,
        }
        arguments = (f"tags={SEED}", "follow=none", "related_depth=3")
        command = crawl_command(*arguments, settings=settings, output=tmp_path / "items.jsonl")
        first = start_crawl(command)
        try:
            wait_until(lambda: sum(requested_tags(site).values()) >= 3, 60, "three tag pages")
        finally:
            first.kill()  # SIGKILL: no clean shutdown of anything
        assert first.wait(10) == -9
        before = requested_tags(site)
        assert sum(before.values()) < len(walk_to(3)), "kill the walk mid-way"
        site.clear_log()
        second = start_crawl(command)
        assert second.wait(120) == 0
        after = requested_tags(site)
    assert set(before) | set(after) == set(walk_to(3))
    assert max((before + after).values()) <= 2  # at most the page in flight at the kill, again
    log = (tmp_path / "crawl.log").read_text("utf-8")
    assert "Topic graph done: 9 tag(s) requested" in log
