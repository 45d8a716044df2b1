"""The 2026 pages: related tags from bare references, aliased ``tagFeed`` keys, listings that
name posts the state does not hold, JSON-LD postings, cross-posts' canonical URLs, "Who to
follow" names as headings, publication homes with ``Post`` stubs, hosts that left Medium.

The real 2026 tag page (``../shared/medium-pages``) and our variants of it
(``tests/variants_2026.py``, inputs under ``tests/fixtures/own``) are read here; every case
also has its whole expected JSON in ``tests/fixtures`` (``test_pages_fixtures.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from tests.fixture_cases import FIXTURES, Case
from topics_crawler.items import Story, TagPage
from topics_crawler.output.exporters import arrow_schema
from topics_crawler.pages import PageResult, parse_page
from topics_crawler.pages._off_medium import left_medium_reason
from topics_crawler.site.content import default_site
from topics_crawler.site.render import publication_page
from topics_crawler.site.tag_page import tag_page
from topics_crawler.urls import cross_post_url

PYTHON_2026 = "tag_python__2scraper-2026-trimmed.html"


def own(kind: str, name: str) -> PageResult:
    folder = FIXTURES / "own" / kind / name
    return Case(f"own/{kind}/{name}", folder, json.loads((folder / "meta.json").read_text())).run()


def tag_of(result: PageResult) -> TagPage:
    [page] = result.items_of("tag_page")
    assert isinstance(page, TagPage)
    return page


def stories_of(result: PageResult) -> dict[str, Story]:
    return {s.story_id or "": s for s in result.items_of("story") if isinstance(s, Story)}


@pytest.fixture(scope="module")
def python_2026(real_pages: Path) -> PageResult:
    url = "https://medium.com/tag/python"
    return parse_page((real_pages / PYTHON_2026).read_bytes(), url, kind="tag")


def test_real_page_keeps_every_related_tag_and_its_listings(python_2026: PageResult) -> None:
    page = tag_of(python_2026)
    assert page.related_tags == [
        "programming", "data-science", "machine-learning", "python-programming", "coding",
        "artificial-intelligence", "software-development", "technology", "ai",
    ]  # fmt: skip  # 5 of them are bare Tag:<slug> references
    assert len(page.sections["tag_feed_top_week"]) == 5  # tagFeed:popularStories(mode:TOP_WEEK…)
    assert len(page.sections["posts_newest"]) == 5
    assert len(page.sections["postings"]) == 20  # Tag.seoMetaTags.jsonLd


def test_real_page_postings_are_stories_with_cross_posts_canonical(
    python_2026: PageResult,
) -> None:
    stories = stories_of(python_2026)
    assert len(stories) == 5 + 19  # 5 cards, 20 postings (one of them a card)
    habr = stories["099c4eaf9e41"]
    assert habr.url == "https://medium.com/p/099c4eaf9e41"  # the Medium URL stays the identity
    assert habr.canonical_url == "https://habr.com/ru/articles/1021552/"
    assert (habr.author_username, habr.author_name) == ("fixture-author-16", "Ilia Alakov")
    assert stories["8b4c939d6c43"].canonical_url.startswith("https://dev.to/")  # type: ignore[union-attr]
    card = stories["c2a4db010fd3"]  # a card and a posting: the card's subtitle, no canonical
    assert card.subtitle.startswith("A scatter plot is usually")  # type: ignore[union-attr]
    assert card.canonical_url is None
    assert stories["23c3309969b3"].is_member_only is True  # isAccessibleForFree: false
    assert stories["8119627ea01f"].image_url is None  # "https://miro.medium.com/" names none
    links = {(link.kind, link.key) for link in python_2026.links}
    assert ("story", "92010e609dfa") in links  # listed by id only: its /p/<id> link
    assert ("author", "fixture-author-16") in links


def test_variant_related_tags_with_and_without_entities() -> None:
    assert tag_of(own("tag", "rust-2026")).related_tags == [
        "programming", "rust-lang", "webassembly", "systems-programming", "golang",
    ]  # fmt: skip
    assert tag_of(own("tag", "webassembly-2026-refs-only")).related_tags == [
        "rust", "javascript", "wasi",
    ]  # fmt: skip
    assert tag_of(own("tag", "kubernetes-2026-entities")).related_tags == [
        "docker", "devops", "cloud-computing",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "section", "ids"),
    [
        ("rust-2026", "tag_feed_top_month", 4),  # tagFeed:trendingStories(mode:…)
        ("webassembly-2026-refs-only", "tag_feed_top_week", 3),  # tagFeed:alias({"mode":…})
        ("kubernetes-2026-entities", "tag_feed_hot", 1),
    ],
)
def test_aliased_tag_feed_keys_are_read_by_their_arguments(
    case: str, section: str, ids: int
) -> None:
    assert len(tag_of(own("tag", case)).sections[section]) == ids


def test_posts_named_by_id_only_give_links_not_rows() -> None:
    result = own("tag", "webassembly-2026-refs-only")
    named = {sid for ids in tag_of(result).sections.values() for sid in ids}
    assert set(stories_of(result)) == {"6f708192a3b4", "4d5e6f708192"}  # the page's postings
    links = {link.key: link.url for link in result.links_of("story")}
    for story_id in named - set(stories_of(result)):
        assert links[story_id] == f"https://medium.com/p/{story_id}"


def test_who_to_follow_names_that_are_headings_in_their_links() -> None:
    follow = tag_of(own("tag", "rust-2026")).who_to_follow
    assert [(e["kind"], e.get("username") or e.get("slug")) for e in follow] == [
        ("author", "cho.min"), ("publication", "systems-weekly"), ("author", "devika-n"),
    ]  # fmt: skip
    site = default_site()
    tag = site.tags["distributed-training"]
    url = "https://medium.com/tag/distributed-training"
    page = tag_of(parse_page(tag_page(site, tag), url, kind="tag"))
    assert len(page.who_to_follow) == len(tag.who_to_follow) == 3


def test_cross_post_story_page_keeps_both_urls() -> None:
    [story] = own("story", "embedded-rust-2026-cross-post").items_of("story")
    assert isinstance(story, Story)
    assert story.url == "https://medium.com/@ada-kowalska/embedded-rust-on-a-budget-6f708192a3b4"
    assert story.canonical_url == "https://dev.to/ada_kowalska/embedded-rust-on-a-budget-4k2j"


def test_canonical_url_is_declared_once_and_reaches_the_dataset_schema() -> None:
    assert "canonical_url" in arrow_schema(Story).names
    assert arrow_schema(Story).field("canonical_url").type == pa.string()


@pytest.mark.parametrize(
    ("candidate", "expected"),
    [
        ("https://habr.com/ru/articles/1021552/", "https://habr.com/ru/articles/1021552/"),
        ("https://medium.com/@a/x-1a2b3c4d5e6f", None),
        ("https://ev.medium.com/x-1a2b3c4d5e6f", None),
        ("https://blog.example.org/x-1a2b3c4d5e6f", None),  # an undeclared custom domain
        ("https://oxidized.dev/", None),  # a declared one
        ("/relative/path", None),
        ("ftp://files.example.org/x", None),
        ("", None),
    ],
)
def test_cross_post_url(candidate: str, expected: str | None) -> None:
    assert cross_post_url(candidate, "1a2b3c4d5e6f", ["oxidized.dev"]) == expected


def test_publication_home_with_post_stubs_gives_its_stories_through_links() -> None:
    result = own("publication", "oxidized-2026-id-only-posts")
    assert [item.item_type for item in result.items] == ["publication"]  # no id-only rows
    assert [link.key for link in result.links_of("story")] == ["3c4d5e6f7081", "5e6f708192a3"]
    site = default_site()  # the local site's homes are 2026 ones: stubs, and cards
    publication = site.publications["pinterest-engineering"]
    html = publication_page(site, publication)
    assert '"Post:' in html
    site_result = parse_page(html, publication.url, kind="publication")
    stories = stories_of(site_result)
    assert stories
    assert all(story.title for story in stories.values())


def test_host_that_left_medium_fails_by_name() -> None:
    result = own("story", "towardsdatascience-2026-left-medium")
    assert result.items == []
    assert result.off_medium == "towardsdatascience.com"
    assert result.errors == [left_medium_reason("towardsdatascience.com")]
    assert "towardsdatascience.com" in result.errors[0]
