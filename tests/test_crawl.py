"""End to end: ``scrapy crawl topics`` (in-process) against the local Medium-like site."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.crawl_helpers import CrawlRun, crawl_in_process, without_read_times
from topics_crawler.site.content import default_site, expected_entities
from topics_crawler.site.server import SiteServer, SiteView

pytestmark = pytest.mark.integration

TAGS = ("distributed-training", "machine-learning")
ENTITY_KEYS = {
    "tag_page": ("tag_pages", "tag"),
    "story": ("stories", "story_id"),
    "author": ("authors", "username"),
    "publication": ("publications", "slug"),
}


@pytest.fixture(scope="module")
def site(session_site: SiteServer) -> SiteView:
    return session_site.view()


@pytest.fixture(scope="module")
def full_crawl(site: SiteView, tmp_path_factory: pytest.TempPathFactory) -> CrawlRun:
    site.clear_log()
    run = crawl_in_process(site.base_url, tmp_path_factory.mktemp("full"), f"tags={','.join(TAGS)}")
    assert run.returncode == 0, run.log[-3000:]
    return run


def by_key(run: CrawlRun, item_type: str) -> dict[str, dict[str, Any]]:
    key_field = ENTITY_KEYS[item_type][1]
    return {item[key_field]: item for item in run.of_type(item_type)}


@pytest.mark.parametrize("item_type", list(ENTITY_KEYS))
def test_every_expected_entity_once_with_its_values(full_crawl: CrawlRun, item_type: str) -> None:
    group, key_field = ENTITY_KEYS[item_type]
    expected = expected_entities(default_site(), TAGS)[group]
    items = full_crawl.of_type(item_type)
    keys = Counter(item[key_field] for item in items)
    assert [k for k, n in keys.items() if n > 1] == [], "entities exported more than once"
    assert set(keys) == set(expected)
    found = by_key(full_crawl, item_type)
    problems = [
        f"{key}.{field}: expected {value!r}, got {found[key].get(field)!r}"
        for key, values in expected.items()
        for field, value in values.items()
        if found[key].get(field) != value
    ]
    assert problems == []


def test_tag_page_has_every_section_of_the_seed(full_crawl: CrawlRun) -> None:
    page = by_key(full_crawl, "tag_page")["distributed-training"]
    assert list(page["sections"]) == ["popular_this_week", "selected_by_medium", "latest_stories"]
    assert page["parent_topics"] == [
        "Machine Learning",
        "Artificial Intelligence",
        "Distributed Systems",
    ]
    assert page["subtopics"][0]["name"] == "Implementation and Infrastructure"
    assert {entry["kind"] for entry in page["who_to_follow"]} == {"author", "publication"}
    stories = by_key(full_crawl, "story")
    for ids in page["sections"].values():
        assert set(ids) <= set(stories)


def test_every_page_fetched_once_and_nothing_failed(full_crawl: CrawlRun, site: SiteView) -> None:
    paths = Counter(path.split("?")[0] for method, path, status in site.requests if method == "GET")
    assert [p for p, n in paths.items() if n > 1] == []
    assert paths["/robots.txt"] == 1
    stats = full_crawl.stats
    assert stats["response_received_count"] == sum(paths.values())
    assert not [k for k in stats if k.startswith(("parse/errors", "parse/failed", "fetch/failed"))]
    assert not [k for k in stats if k.startswith("validate/rejected")]
    assert stats["item_scraped_count"] == len(full_crawl.items)
    assert "Progress:" in full_crawl.log


def test_items_keep_canonical_medium_urls(full_crawl: CrawlRun, site: SiteView) -> None:
    for item in full_crawl.items:
        assert item["url"].startswith("https://"), item
        assert "127.0.0.1" not in item["url"]
        assert "?" not in item["url"]


def test_follow_none_exports_the_tag_pages_alone(site: SiteView, tmp_path: Path) -> None:
    site.clear_log()
    run = crawl_in_process(site.base_url, tmp_path, "tags=distributed-training", "follow=none")
    assert run.returncode == 0, run.log[-3000:]  # no story: the health check asks for none
    assert set(run.counts()) == {"tag_page", "tag_edge"}
    fetched = {path.split("?")[0] for _, path, _ in site.requests}
    assert fetched == {"/robots.txt", "/tag/distributed-training"}


def test_follow_stories_exports_no_author_or_publication(site: SiteView, tmp_path: Path) -> None:
    site.clear_log()
    run = crawl_in_process(
        site.base_url, tmp_path, "tags=distributed-training", "max_stories=3", "follow=stories"
    )
    assert run.returncode == 0, run.log[-3000:]
    assert set(run.counts()) == {"tag_page", "tag_edge", "story", "tag_story"}
    assert run.counts()["story"] == 3
    listed = {row["story_id"] for row in run.of_type("tag_story")}  # all the sections showed
    assert {story["story_id"] for story in run.of_type("story")} <= listed
    for story in run.of_type("story"):  # from the story's own page
        assert all(story[name] for name in ("title", "author_username", "text")), story
    fetched = {path.split("?")[0].rstrip("/") for _, path, _ in site.requests}
    profiles = {path for path in fetched if path.count("/") == 1} - {"/robots.txt"}
    assert profiles == set(), "no author or publication page"


def test_follow_none_cards_and_max_stories_stay_on_tag_pages(
    site: SiteView, tmp_path: Path
) -> None:
    site.clear_log()
    run = crawl_in_process(
        site.base_url, tmp_path, "tags=distributed-training", "max_stories=3", "follow=none",
        "cards=stories",
    )  # fmt: skip
    assert run.returncode == 0, run.log[-3000:]
    counts = run.counts()
    assert (counts["tag_page"], counts["story"]) == (1, 3)
    assert "author" not in counts, "authors are neither followed nor kept as cards"
    assert {story["data_source"] for story in run.of_type("story")} <= {"card", "state+card"}
    fetched = {path.split("?")[0] for _, path, _ in site.requests}
    assert fetched == {"/robots.txt", "/tag/distributed-training"}
    page = run.of_type("tag_page")[0]
    first_three = list(dict.fromkeys(i for ids in page["sections"].values() for i in ids))[:3]
    assert [story["story_id"] for story in run.of_type("story")] == first_three


def test_record_then_replay_offline_through_another_mirror(site: SiteView, tmp_path: Path) -> None:
    replay_dir = tmp_path / "responses"
    settings = {"REPLAY_DIR": str(replay_dir), "DEDUPE_ENABLED": False}
    recorded = crawl_in_process(
        site.base_url,
        tmp_path / "record",
        "tags=machine-learning",
        settings={**settings, "REPLAY_MODE": "record"},
    )
    assert recorded.returncode == 0, recorded.log[-3000:]
    site.clear_log()
    # Nothing listens on port 9: a network fetch would fail, the replay must not need one.
    replayed = crawl_in_process(
        "http://127.0.0.1:9",
        tmp_path / "replay",
        "tags=machine-learning",
        settings={**settings, "REPLAY_MODE": "replay"},
    )
    assert replayed.returncode == 0, replayed.log[-3000:]
    assert site.requests == []

    def strip(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(
            (without_read_times(i) for i in items),
            key=lambda i: (i["item_type"], i["url"]),
        )

    assert strip(replayed.items) == strip(recorded.items)
    assert (
        replayed.stats.get("downloader/request_count", 0)
        == recorded.stats["downloader/request_count"]
    )
