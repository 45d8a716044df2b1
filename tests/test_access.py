"""Member-only, honestly: each story's access level and its preview's share of the words Medium
states, on the shared locked captures (read in place), variants of them, the local site, and a
crawl with ``-a access`` and a member's session."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler

from tests.crawl_helpers import crawl_in_process
from topics_crawler.items import Story
from topics_crawler.items.access import access_level, preview_share
from topics_crawler.items.merge import merge_items
from topics_crawler.pages import parse_page
from topics_crawler.pages._body import count_words
from topics_crawler.pages.markdown import PREVIEW_NOTICE
from topics_crawler.pipelines.access import AccessFilterPipeline
from topics_crawler.site.content import default_site
from topics_crawler.site.render import story_page
from topics_crawler.site.server import SiteServer
from topics_crawler.spiders._argument_values import SpiderArgumentError
from topics_crawler.spiders._arguments import CrawlOptions
from topics_crawler.spiders._helpers import seen_with_session

LOCKED = "story_humanparts_the-mtg-color-wheel-c9700a7cf36d__postlight-2023.html"
LOCKED_URL = "https://humanparts.medium.com/the-mtg-color-wheel-c9700a7cf36d"
LOGGED_IN = "story_ev_welcome-to-medium-9e53ca408c48__medium-mcp-server-2025-loggedin-redacted.html"
LOGGED_IN_URL = "https://ev.medium.com/welcome-to-medium-9e53ca408c48"
MEMBER_SID = "local-member-session-1"


def story_of(html: bytes | str, url: str) -> Story:
    data = html.encode("utf-8") if isinstance(html, str) else html
    story = next(iter(parse_page(data, url, kind="story").items_of("story")))
    assert isinstance(story, Story)
    return story


def test_access_levels_and_shares() -> None:
    assert access_level(False, True) is None  # no text: nothing to say
    assert access_level(True, True) == "preview"
    assert access_level(True, False) == "full"
    assert access_level(True, None) == "full"
    assert preview_share(120, 1000) == 0.12
    assert preview_share(120, None) is None  # Medium did not state the count
    assert preview_share(1200, 1000) is None  # they disagree: no figure
    locked = Story(story_id="0123456789ab", text="all of it", access="full", is_member_only=True)
    assert seen_with_session(locked).access == "full_with_session"
    free = Story(story_id="0123456789ab", text="all of it", access="full", is_member_only=False)
    assert seen_with_session(free).access == "full"
    preview = Story(story_id="0123456789ab", text="a bit", access="preview", is_member_only=True)
    assert seen_with_session(preview).access == "preview"  # a session that showed no more


# --- the shared captures, read in place, and variants of them -------------------------------


@pytest.mark.real_pages
def test_the_locked_capture_is_a_preview_without_a_share(real_pages: Path) -> None:
    story = story_of((real_pages / LOCKED).read_bytes(), LOCKED_URL)
    assert story.is_member_only is True
    assert (story.access, story.text_is_preview) == ("preview", True)
    assert story.preview_share is None  # this page's state states no wordCount
    assert story.markdown is not None
    assert story.markdown.endswith(PREVIEW_NOTICE)


@pytest.mark.real_pages
def test_a_variant_of_the_locked_capture_stating_its_word_count_gets_a_share(
    real_pages: Path,
) -> None:
    html = (real_pages / LOCKED).read_text("utf-8")
    post = re.search(r'"Post:c9700a7cf36d":\s*\{', html)  # the capture is pretty-printed
    assert post is not None
    variant = html[: post.end()] + ' "wordCount": 4321,' + html[post.end() :]
    story = story_of(variant, LOCKED_URL)
    assert story.word_count == 4321
    assert story.access == "preview"
    assert story.preview_share == round(count_words(story.text) / 4321, 4)
    assert 0 < story.preview_share < 0.05


@pytest.mark.real_pages
def test_a_page_a_member_saw_logged_in_is_full(real_pages: Path) -> None:
    story = story_of((real_pages / LOGGED_IN).read_bytes(), LOGGED_IN_URL)
    assert (story.is_member_only, story.access, story.preview_share) == (False, "full", None)


# --- the local site ------------------------------------------------------------------------


def test_the_local_site_shows_members_the_whole_story() -> None:
    content = default_site()
    locked = next(s for s in content.stories.values() if s.member_only)
    url = content.story_url(locked)
    preview = story_of(story_page(content, locked), url)
    assert (preview.access, preview.text_is_preview) == ("preview", True)
    assert preview.preview_share == round(count_words(preview.text) / locked.word_count, 4)
    whole = story_of(story_page(content, locked, member=True), url)
    assert (whole.access, whole.text_is_preview, whole.preview_share) == ("full", False, None)
    assert whole.is_member_only is True
    assert seen_with_session(whole).access == "full_with_session"
    merged = merge_items(preview, seen_with_session(whole))
    assert (merged.access, merged.text) == ("full_with_session", whole.text)
    assert merge_items(seen_with_session(whole), preview).access == "full_with_session"


def test_the_access_argument() -> None:
    options = CrawlOptions.from_spider_arguments({"tags": "llm", "access": "Member-Only"})
    assert options.access == "member_only"
    assert CrawlOptions.from_spider_arguments({"tags": "llm"}).access is None
    with pytest.raises(SpiderArgumentError, match="access: unknown value 'paid'"):
        CrawlOptions.from_spider_arguments({"tags": "llm", "access": "paid"})


def test_the_filter_keeps_only_the_kind_asked_for() -> None:
    crawler = get_crawler()
    pipeline = AccessFilterPipeline.from_crawler(crawler)
    pipeline.access = "free"
    free = Story(story_id="0123456789ab", is_member_only=False)
    assert pipeline.process_item(free) is free
    for kind in (True, None):
        with pytest.raises(DropItem):
            pipeline.process_item(Story(story_id="0123456789ab", is_member_only=kind))
    assert crawler.stats is not None
    assert crawler.stats.get_value("access_filter/dropped/member_only") == 1
    assert crawler.stats.get_value("access_filter/dropped/unknown") == 1


# --- crawls --------------------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize(("access", "session"), [("member_only", True), ("free", False)])
def test_a_crawl_takes_one_kind_and_a_session_shows_members_the_whole_text(
    tmp_path: Path, access: str, session: bool
) -> None:
    content = default_site()
    content.member_sids.add(MEMBER_SID)
    listed = content.tags["machine-learning"].listed()
    wanted = {sid for sid in listed if content.stories[sid].member_only is (access != "free")}
    assert wanted
    settings = {"MEDIUM_SID": MEMBER_SID} if session else {}
    with SiteServer(content) as site:
        run = crawl_in_process(
            site.base_url,
            tmp_path,
            "tags=machine-learning",
            "follow=stories",
            f"access={access}",
            settings=settings,
        )
    assert run.returncode == 0, run.log[-3000:]
    stories = {s["story_id"]: s for s in run.of_type("story")}
    assert set(stories) == wanted
    assert run.stats["access_filter/not_fetched"] == len(listed) - len(wanted)  # cards said
    for story_id, story in stories.items():
        site_story = content.stories[story_id]
        if access == "free":
            assert (story["access"], story["preview_share"]) == ("full", None)
        else:
            assert story["access"] == "full_with_session"
            assert story["text_is_preview"] is False
            assert all(paragraph in story["text"] for paragraph in site_story.paragraphs)
