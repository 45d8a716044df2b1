"""End to end: a ``scrapy crawl`` of each local tag-page generation yields every listed
story once with its card values (in-process); a redesign the parser does not know fails the
crawl (a process: its exit status is the point)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.crawl_helpers import CrawlRun, crawl_in_process, run_crawl
from topics_crawler.items.values import parse_count
from topics_crawler.site.content import _tag_values, iso
from topics_crawler.site.entities import SiteStory, SiteTag
from topics_crawler.site.generations import CHANGED_TAGS, generations_site
from topics_crawler.site.markup import short_count
from topics_crawler.site.model import SiteContent
from topics_crawler.site.server import SiteServer

pytestmark = pytest.mark.integration

DRIFT_LINE = (
    "tag pages: 3 of 3 listed no stories — Medium's markup may have changed; "
    "run extract on a saved page (REPLAY_MODE=record) to see"
)


@pytest.fixture(scope="module")
def content() -> SiteContent:
    return generations_site()


@pytest.fixture(scope="module")
def site(content: SiteContent) -> Any:
    with SiteServer(content) as server:
        yield server


def card_values(content: SiteContent, story: SiteStory, tag: SiteTag) -> dict[str, Any]:
    """What the tag page itself shows of a story: its card (today; counts as abbreviated
    there, exact for the posts the page's state holds) or its state (2022)."""
    in_state = tag.generation == "2022" or story.id in next(iter(tag.sections.values()))

    def count(value: int) -> int | None:
        return value if in_state else parse_count(short_count(value))[0]

    author = content.authors[story.author]
    publication = content.publication_of(story)
    values: dict[str, Any] = {
        "url": content.story_url(story),
        "title": story.title,
        "subtitle": story.subtitle,
        "author_username": author.username,
        "author_name": author.name,
        # a card links a custom-domain publication by its domain: its slug is in the state only
        "publication_slug": publication.slug
        if publication and (in_state or not publication.domain)
        else None,
        "publication_name": publication.name if publication else None,
        "claps": count(story.claps),
        "responses": count(story.responses),
        "is_member_only": story.member_only,
    }
    if tag.generation == "2022":  # exact values only the state carries
        values |= {
            "author_id": author.id,
            "publication_id": publication.id if publication else None,
            "published_at": iso(story.published_at),
            "reading_time_min": story.reading_time,
            "tags": [tag.slug for tag in story.tags],
        }
    return values


def crawl_tag(site: SiteServer, tmp_path: Path, *tags: str, in_process: bool = True) -> CrawlRun:
    site.clear_log()
    crawl = crawl_in_process if in_process else run_crawl
    return crawl(site.base_url, tmp_path, f"tags={','.join(tags)}", "follow=none", "cards=stories")


@pytest.mark.parametrize("slug", ["pytorch", "deep-learning"])
def test_each_generation_yields_every_listed_story_once_with_its_card_values(
    site: SiteServer, content: SiteContent, tmp_path: Path, slug: str
) -> None:
    tag = content.tags[slug]
    run = crawl_tag(site, tmp_path, slug)
    assert run.returncode == 0, run.log[-3000:]
    counts = Counter(story["story_id"] for story in run.of_type("story"))
    assert [sid for sid, n in counts.items() if n > 1] == []
    assert list(counts) == tag.listed()
    stories = {story["story_id"]: story for story in run.of_type("story")}
    problems = [
        f"{sid}.{name}: expected {value!r}, got {stories[sid].get(name)!r}"
        for sid in tag.listed()
        for name, value in card_values(content, content.stories[sid], tag).items()
        if stories[sid].get(name) != value
    ]
    assert problems == []
    [page] = run.of_type("tag_page")
    expected = _tag_values(content, tag)
    assert {name: page[name] for name in expected} == expected
    assert run.stats["coverage/tag/found/stories"] == 1


def test_a_redesign_fails_the_crawl_with_one_plain_line(site: SiteServer, tmp_path: Path) -> None:
    run = crawl_tag(site, tmp_path, *(topic.slug for topic in CHANGED_TAGS), in_process=False)
    assert run.returncode == 1, run.log[-3000:]
    assert [i["item_type"] for i in run.items if i["item_type"] != "tag_edge"] == ["tag_page"] * 3
    assert DRIFT_LINE in run.log
    assert run.stats["health/failed/coverage/tag/stories"] == DRIFT_LINE
    assert "health/failed/coverage/tag/name" not in run.stats  # names still read
