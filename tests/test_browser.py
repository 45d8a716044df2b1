"""Real Chromium through scrapy-playwright, against the local site with JavaScript sections.

Each crawl is a ``scrapy crawl topics`` run in-process (tests/crawl_helpers.py); the
numbers checked come from its final stats and the site's access log.
"""

from __future__ import annotations

import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.crawl_helpers import CrawlRun, crawl_in_process
from topics_crawler.site.content import SiteContent, default_site, expected_entities
from topics_crawler.site.js_sections import API, JsSections
from topics_crawler.site.server import SiteServer

CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.integration,
    pytest.mark.skipif(
        shutil.which(CHROMIUM) is None,
        reason=f"Debian's chromium is not installed at {CHROMIUM} (make system-deps)",
    ),
]

TAGS = ("distributed-training", "machine-learning")
ARCHIVE = 40


def js_content() -> SiteContent:
    return default_site().with_archive("distributed-training", ARCHIVE, seed=0)


@pytest.fixture(scope="session")
def js_site() -> Iterator[SiteServer]:
    """Tag pages whose "Recommended", "Who to follow" and further cards need JavaScript."""
    with SiteServer(js_content(), js_sections=True) as server:
        yield server


def crawl(site: SiteServer, out: Path, *args: str, **settings: Any) -> CrawlRun:
    site.clear_log()
    run = crawl_in_process(site.base_url, out, *args, settings=settings)
    assert run.returncode == 0, run.log[-3000:]
    return run


def renders(run: CrawlRun) -> dict[str, int]:
    return {k: v for k, v in run.stats.items() if k.startswith("render/requests")}


def tag_pages(run: CrawlRun) -> dict[str, dict[str, Any]]:
    return {page["tag"]: page for page in run.of_type("tag_page")}


def assert_every_page_closed(run: CrawlRun) -> None:
    opened = run.stats.get("playwright/page_count", 0)
    assert run.stats.get("playwright/page_count/closed", 0) == opened


def test_plain_http_misses_the_javascript_sections(js_site: SiteServer, tmp_path: Path) -> None:
    with urllib.request.urlopen(js_site.url("/tag/machine-learning")) as answer:
        html = answer.read().decode("utf-8")
    assert "<h2>Who to follow</h2>" not in html
    assert "Recommended stories</h2>" not in html
    assert "/archive" not in html  # "See more stories" arrives with the script

    run = crawl(js_site, tmp_path, f"tags={','.join(TAGS)}", "follow=none", RENDER_MODE="never")
    pages = tag_pages(run)
    assert [pages[tag]["who_to_follow"] for tag in TAGS] == [[], []]
    assert "recommended" not in pages["machine-learning"]["sections"]
    assert [k for k in run.stats if k.startswith(("render/", "playwright/"))] == []
    assert js_site.count(API + "machine-learning") == 0


def test_auto_mode_renders_each_tag_page_once_and_no_story_or_author_page(
    js_site: SiteServer, tmp_path: Path
) -> None:
    run = crawl(
        js_site, tmp_path, f"tags={','.join(TAGS)}", "max_stories=12", "follow=stories,authors"
    )
    assert renders(run) == {"render/requests": 2, "render/requests/tag": 2}
    assert run.stats["render/fallback/who_to_follow"] == 2
    assert_every_page_closed(run)
    assert run.stats["playwright/page_count"] == 2
    assert run.of_type("story")
    assert run.of_type("author")

    expected = expected_entities(js_content(), TAGS)["tag_pages"]
    pages = tag_pages(run)
    for tag in TAGS:
        # An id comes from the page state, which the script-added section is not part of:
        # known only for accounts the server state holds anyway (authors of cards).
        found, wanted = pages[tag]["who_to_follow"], expected[tag]["who_to_follow"]
        assert [{**e, "id": None} for e in found] == [{**e, "id": None} for e in wanted]
        assert all(e["id"] in (None, w["id"]) for e, w in zip(found, wanted, strict=True))
        assert js_site.count(f"/tag/{tag}") == 2  # plain, then the browser
        assert js_site.count(API + tag) == 1
    ml_sections = pages["machine-learning"]["sections"]
    assert ml_sections["recommended"] == expected["machine-learning"]["sections"]["recommended"]
    # distributed-training has an archive: "See more stories" was clicked until 12 were listed
    dt_sections = pages["distributed-training"]["sections"]
    listed = {story_id for ids in dt_sections.values() for story_id in ids}
    assert len(listed) >= 12
    assert len(dt_sections["latest_stories"]) > 2
    assert run.stats["render/scroll/enough"] == 1
    assert js_site.count(API + "distributed-training/more") >= 1


def test_always_mode_renders_every_page_and_nothing_else(
    js_site: SiteServer, tmp_path: Path
) -> None:
    run = crawl(js_site, tmp_path, "tags=machine-learning", "follow=none", RENDER_MODE="always")
    assert renders(run) == {"render/requests": 1, "render/requests/tag": 1}
    assert js_site.count("/tag/machine-learning") == 1  # no plain fetch first
    assert js_site.count("/robots.txt") == 1
    assert tag_pages(run)["machine-learning"]["who_to_follow"]
    assert_every_page_closed(run)


@pytest.fixture(scope="session")
def fallback_site() -> Iterator[tuple[SiteServer, str, str]]:
    """A story page that is a script shell, an author page behind a JS challenge."""
    content = default_site()
    story_id = content.tags["distributed-training"].sections["Popular this week"][0]
    author = content.stories[story_id].author
    options = JsSections(
        shell_stories=frozenset({story_id}), challenge_paths=frozenset({f"/@{author}"})
    )
    with SiteServer(content, js_sections=options) as server:
        yield server, story_id, author


def test_script_shell_story_and_challenged_author_go_through_the_browser_once(
    fallback_site: tuple[SiteServer, str, str], tmp_path: Path
) -> None:
    site, story_id, author = fallback_site
    run = crawl(site, tmp_path, "tags=distributed-training", "follow=stories,authors")
    assert renders(run) == {
        "render/requests": 3,
        "render/requests/tag": 1,
        "render/requests/story": 1,
        "render/requests/author": 1,
    }
    assert run.stats["render/fallback/story"] == 1
    assert run.stats["render/reason/challenge"] == 1
    assert run.stats["blocked/challenge"] == 1
    assert "blocked/gave_up/challenge" not in run.stats
    assert not [k for k in run.stats if k.startswith(("fetch/failed", "parse/failed"))]
    assert_every_page_closed(run)

    content = default_site()
    story = next(s for s in run.of_type("story") if s["story_id"] == story_id)
    expected_story = expected_entities(content, ["distributed-training"])["stories"][story_id]
    assert story["word_count"] == expected_story["word_count"]  # only the story page has it
    assert story["updated_at"] == expected_story["updated_at"]
    profile = next(a for a in run.of_type("author") if a["username"] == author)
    assert profile["followers"] == content.authors[author].followers
    statuses = [status for _, path, status in site.requests if path == f"/@{author}"]
    assert statuses == [403, 403, 200]  # plain, browser (challenge), browser after reload


def test_history_mode_makes_no_browser_listing_requests(
    js_site: SiteServer, tmp_path: Path
) -> None:
    """The GraphQL listing gives the stories: the tag page is rendered only for what it
    alone shows ("Who to follow"), never asked to load more cards."""
    run = crawl(
        js_site, tmp_path, "tags=distributed-training", "history=newest", "max_stories=30",
        "follow=stories",
    )  # fmt: skip
    assert js_site.count(API + "distributed-training/more") == 0  # the browser's "See more"
    assert not [k for k in run.stats if k.startswith("render/scroll/")]
    assert renders(run) == {"render/requests": 1, "render/requests/tag": 1}
    assert run.stats["render/fallback/who_to_follow"] == 1
    assert tag_pages(run)["distributed-training"]["who_to_follow"]
    assert len(run.of_type("story")) == 30
    assert_every_page_closed(run)
