"""End to end: every listing of a tag fills ``tag_stories`` (in-process crawls of the local
site): the tag page's sections, the GraphQL history, the day archive, the feed and a
related tag's page; a second crawl keeps each row's ``first_seen`` and moves its
``last_seen``; the audit and the report count a tag's stories from it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.crawl_helpers import CrawlRun, crawl_in_process
from topics_crawler.dataset.parts import read_table
from topics_crawler.output.exporters import records_of
from topics_crawler.report import build_report
from topics_crawler.site.content import default_site
from topics_crawler.site.day_archive import tagged
from topics_crawler.site.feeds import LATEST
from topics_crawler.site.graphql import archive_stories
from topics_crawler.site.model import SiteContent
from topics_crawler.site.server import SiteServer, SiteView
from topics_crawler.site.topic_graph import BREADTH_FIRST, MISSING, SEED, topic_graph_site

pytestmark = pytest.mark.integration

TAG = "distributed-training"
ARCHIVE = 60
ALL_TIME = {"kind": "ALL_TIME"}


def crawl(site: SiteServer | SiteView, out: Path, *arguments: str, **settings: Any) -> CrawlRun:
    site.clear_log()
    run = crawl_in_process(site.base_url, out, f"tags={TAG}", *arguments, settings=settings)
    assert run.returncode == 0, run.log[-3000:]
    return run


def memberships(dataset: Path) -> list[dict[str, Any]]:
    return records_of(read_table(dataset / "tag_stories.parquet"))


def of_source(rows: list[dict[str, Any]], source: str, tag: str = TAG) -> list[str]:
    """Story ids the ``source`` listing of ``tag`` gave, by rank."""
    chosen = [r for r in rows if r["source"] == source and r["tag"] == tag]
    return [r["story_id"] for r in sorted(chosen, key=lambda r: r["rank"])]


@pytest.fixture(scope="module")
def archive() -> Iterator[tuple[SiteServer, SiteContent]]:
    content = default_site().with_archive(TAG, ARCHIVE, seed=0)
    with SiteServer(content) as server:
        yield server, content


def test_the_history_and_the_tag_page_list_the_tag_and_a_second_crawl_moves_last_seen(
    archive: tuple[SiteServer, SiteContent], tmp_path: Path
) -> None:
    site, content = archive
    dataset = tmp_path / "data"
    first = crawl(
        site,
        tmp_path / "one",
        "history=newest",
        "follow=none",
        "cards=stories",
        DATASET_DIR=dataset,
    )
    newest = [s.id for s in archive_stories(content, TAG, ALL_TIME, "NEWEST")]
    rows = memberships(dataset)
    assert of_source(rows, "history") == newest  # ranked in listing order, 1 first
    assert sorted(r["rank"] for r in rows if r["source"] == "history") == list(
        range(1, len(newest) + 1)
    )
    (page,) = records_of(read_table(dataset / "tag_pages.parquet"))
    in_sections = {i for ids in page["sections"].values() for i in ids}
    assert set(of_source(rows, "section")) == in_sections
    assert {r["section"] for r in rows if r["source"] == "section"} <= set(page["sections"])
    assert {r["section"] for r in rows if r["source"] == "history"} == {None}
    assert len(first.of_type("tag_story")) == len(rows), "the feed gets the rows too"

    audit = json.loads((dataset / "manifest.json").read_text("utf-8"))["audit"]
    (row,) = audit["tags"]
    stories = {r["story_id"] for r in records_of(read_table(dataset / "stories.parquet"))}
    assert row["listed_stories"] == len(set(newest) | in_sections)
    assert row["held_stories"] == len(stories & (set(newest) | in_sections)) > ARCHIVE / 2
    report = build_report(dataset, tmp_path / "report", fmt="html").read_text("utf-8")
    assert f'<tr><td>{TAG}</td><td class="n">{row["held_stories"]}</td></tr>' in report

    again = crawl(
        site,
        tmp_path / "two",
        "history=newest",
        "follow=none",
        "cards=stories",
        DATASET_DIR=dataset,
    )
    later = {r["membership_id"]: r for r in memberships(dataset)}
    before = {r["membership_id"]: r for r in rows}
    assert set(later) == set(before), "one row per tag, story and source"
    for key, row_before in before.items():
        assert later[key]["first_seen"] == row_before["first_seen"]
        assert later[key]["last_seen"] >= row_before["last_seen"]
    changed = again.stats.get("dataset/changed/tag_story", 0)
    assert changed + again.stats.get("dataset/added/tag_story", 0) <= len(before)


def test_the_day_archive_lists_every_story_of_the_tag(tmp_path: Path) -> None:
    content = default_site().with_archive(TAG, 40, seed=1)
    content.graphql_refused = True
    content.archive_page_size = 2
    with SiteServer(content) as site:
        crawl(
            site,
            tmp_path,
            "history=archive",
            "follow=none",
            "cards=stories",
            DATASET_DIR=tmp_path / "data",
        )
    rows = memberships(tmp_path / "data")
    listed = of_source(rows, "archive")
    assert set(listed) == {s.id for s in tagged(content, TAG)}
    assert sorted(r["rank"] for r in rows if r["source"] == "archive") == list(
        range(1, len(listed) + 1)
    )
    assert {r["data_source"] for r in rows if r["source"] == "archive"} == {"archive"}


def test_the_feed_lists_its_latest_stories(site: SiteView, tmp_path: Path) -> None:
    run = crawl(site, tmp_path, "source=feed", "follow=none", "cards=stories")
    newest = sorted(tagged(site.content, TAG), key=lambda s: (s.published_at, s.id), reverse=True)
    rows = run.of_type("tag_story")
    assert of_source(rows, "feed") == [s.id for s in newest[:LATEST]]
    assert {r["url"] for r in rows} == {f"https://medium.com/feed/tag/{TAG}"}


def test_a_related_tag_page_lists_as_related(tmp_path: Path) -> None:
    with SiteServer(topic_graph_site()) as site:
        run = crawl(site, tmp_path, "related_depth=1", "follow=none", "cards=stories")
        alone = crawl(site, tmp_path / "alone", "related_depth=1", "follow=none")
    assert alone.of_type("tag_story") == [], "-a follow=none alone: tag pages and edges only"
    rows = run.of_type("tag_story")
    hop_one = {tag for tag, hops in BREADTH_FIRST if hops == 1} - MISSING
    related = {r["tag"] for r in rows if r["source"] == "related"}
    assert related
    assert related <= hop_one
    assert {r["tag"] for r in rows if r["source"] == "section"} == {SEED}
    pages = {p["tag"]: p for p in run.of_type("tag_page")}
    for row in rows:
        assert row["story_id"] in pages[row["tag"]]["sections"][row["section"]]
