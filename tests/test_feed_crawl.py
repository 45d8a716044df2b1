"""End to end: ``scrapy crawl topics -a source=feed`` reads each tag's RSS feed (one request
per tag, no tag page) and fetches as pages only the stories the dataset does not have."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.crawl_helpers import CrawlRun, crawl_in_process
from topics_crawler.site.content import default_site
from topics_crawler.site.entities import SiteStory, TopicRef, utc
from topics_crawler.site.feeds import LATEST
from topics_crawler.site.model import SiteContent
from topics_crawler.site.server import SiteServer, SiteView

pytestmark = pytest.mark.integration

TAG = "distributed-training"


def crawl(site: SiteServer | SiteView, out: Path, *arguments: str, **settings: Any) -> CrawlRun:
    site.clear_log()
    run = crawl_in_process(site.base_url, out, f"tags={TAG}", "follow=stories", *arguments,
                    settings=settings)  # fmt: skip
    assert run.returncode == 0, run.log[-3000:]
    return run


def feed_ids(content: SiteContent) -> list[str]:
    tagged = [s for s in content.stories.values() if any(t.slug == TAG for t in s.tags)]
    tagged.sort(key=lambda s: (s.published_at, s.id), reverse=True)
    return [s.id for s in tagged[:LATEST]]


def gets(site: SiteServer | SiteView) -> int:
    """Page requests (robots.txt aside)."""
    return sum(1 for method, path, _ in site.requests if method == "GET" and path != "/robots.txt")


@pytest.fixture
def content() -> SiteContent:
    return default_site()


@pytest.fixture
def own_site(content: SiteContent) -> Iterator[SiteServer]:
    """A site of this test's own: it adds a story."""
    with SiteServer(content) as server:
        yield server


def test_without_a_dataset_every_feed_story_is_fetched(site: SiteView, tmp_path: Path) -> None:
    run = crawl(site, tmp_path, "source=feed")
    ids = feed_ids(site.content)
    assert [s["story_id"] for s in run.of_type("story")] != []
    assert {s["story_id"] for s in run.of_type("story")} == set(ids)
    assert site.count(f"/feed/tag/{TAG}", method="GET") == 1
    assert site.count(f"/tag/{TAG}", method="GET") == 0  # no tag page
    assert gets(site) == 1 + len(ids)  # the feed, then each story page once
    stats = run.stats
    assert (stats["feed/requests"], stats["feed/new"], stats.get("feed/known", 0)) == (
        1, len(ids), 0,
    )  # fmt: skip
    assert all(s["markdown"] and s["title"] for s in run.of_type("story"))


def test_with_a_dataset_only_new_stories_cost_a_page(
    own_site: SiteServer, content: SiteContent, tmp_path: Path
) -> None:
    site = own_site
    dataset = tmp_path / "data"
    crawl(site, tmp_path / "first", DATASET_DIR=str(dataset))
    have = set(
        pq.read_table(dataset / "stories.parquet", columns=["story_id"])["story_id"].to_pylist()
    )
    new = content.add_story(SiteStory(
        "gradient-checkpointing-in-one-afternoon", "Gradient Checkpointing in One Afternoon",
        "Memory for compute, measured", "varuntej", utc(2025, 11, 30, 8),
        ["Recompute activations instead of keeping them.", "It costs a third more time."],
        claps=3, tags=[TopicRef(TAG, "Distributed Training")],
    ))  # fmt: skip
    missing = [i for i in feed_ids(content) if i not in have]
    assert new.id in missing
    run = crawl(site, tmp_path / "second", "source=feed", DATASET_DIR=str(dataset))
    assert {s["story_id"] for s in run.of_type("story")} == set(missing)
    assert gets(site) == 1 + len(missing)
    assert run.stats["feed/known"] == len(feed_ids(content)) - len(missing)
    assert run.stats["feed/known_in_dataset"] == len(have)
    after = pq.read_table(dataset / "stories.parquet", columns=["story_id"])["story_id"].to_pylist()
    assert new.id in after
    assert len(after) == len(have | {new.id})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["source=rss"], "source: unknown value 'rss'; choose from tags|feed"),
        (["source=feed", "history=newest"], "source: feed reads the latest items only"),
    ],
)
def test_bad_source_exits_2(
    site: SiteView, tmp_path: Path, arguments: list[str], message: str
) -> None:
    site.clear_log()
    run = crawl_in_process(site.base_url, tmp_path, f"tags={TAG}", *arguments)
    assert run.returncode == 2
    assert message in run.log
    assert site.requests == []
