"""Tag page parser: sections, dedupe, who-to-follow, breadcrumb, related tags, robustness.

Field-by-field checks of every fixture live in ``test_pages_fixtures.py``; these
tests pin the behaviours the product depends on, on our own tag pages.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from tests.fixture_cases import FIXTURES
from topics_crawler.items import Story, TagPage
from topics_crawler.pages import PageResult, parse_page
from topics_crawler.pages._tag_state import read_tag_state
from topics_crawler.pages.state import State
from topics_crawler.pages.tag import section_key

OWN_TAG = FIXTURES / "own" / "tag"
TAG_URL = "https://medium.com/tag/distributed-training"


def read_capture(real_pages: Path, name: str) -> bytes:
    """A shared capture's bytes; the test skips when the folder lacks it."""
    path = real_pages / name
    if not path.is_file():
        pytest.skip(f"capture {name} not in {real_pages}")
    return path.read_bytes()


def parse_own(case: str, frozen_now: datetime, url: str = TAG_URL) -> PageResult:
    body = (OWN_TAG / case / "input.html").read_bytes()
    return parse_page(body, url, kind="tag", scraped_at=frozen_now)


def tag_page_of(result: PageResult) -> TagPage:
    page = result.items[0]
    assert isinstance(page, TagPage)
    return page


def test_section_order_and_keys(frozen_now: datetime) -> None:
    page = tag_page_of(parse_own("distributed-training", frozen_now))
    assert list(page.sections) == [
        "popular_this_week",
        "selected_by_medium",
        "latest_stories",
        "recommended",
    ]
    assert page.sections["selected_by_medium"] == ["5d1f0a7c93b2"]
    assert page.sections["latest_stories"][0] == "0b6e5f2d9a17"


def test_card_titles_are_not_section_headings(frozen_now: datetime) -> None:
    page = tag_page_of(parse_own("distributed-training", frozen_now))
    assert len(page.sections["popular_this_week"]) == 5


def test_stories_deduplicated_across_sections(frozen_now: datetime) -> None:
    result = parse_own("distributed-training", frozen_now)
    page = tag_page_of(result)
    stories = [item for item in result.items if isinstance(item, Story)]
    ids = [story.story_id for story in stories]
    assert len(ids) == len(set(ids))
    assert set(ids) == {sid for section in page.sections.values() for sid in section}
    # Popular card has no thumbnail, its Latest card has one: the first card fills,
    # the later one only fills gaps (here the state had the image already)
    gpu = next(story for story in stories if story.story_id == "2a9c6e41b7d3")
    assert gpu.published_at == "2026-11-28T09:13:27Z"
    assert gpu.image_url is not None


def test_later_card_fills_gaps_only(frozen_now: datetime) -> None:
    stories = parse_own("distributed-training-html-only", frozen_now).items_of("story")
    gpu = next(s for s in stories if isinstance(s, Story) and s.story_id == "2a9c6e41b7d3")
    assert isinstance(gpu, Story)
    assert gpu.claps == 96  # only the first (Popular) card shows claps
    assert gpu.image_url == (  # only the later (Latest) card shows an image
        "https://miro.medium.com/v2/resize:fill:160:107/1*Gm8sV2cXq4nR7pLw3tYbZQ.jpeg"
    )


def test_who_to_follow_kinds_and_ids(frozen_now: datetime) -> None:
    page = tag_page_of(parse_own("distributed-training", frozen_now))
    assert page.who_to_follow == [
        {"kind": "publication", "id": "4c5a5f6fc401", "slug": "pinterest-engineering",
         "name": "Pinterest Engineering Blog"},
        {"kind": "author", "id": "3fa9c06e52d1", "username": "meetvaddoriya",
         "name": "Meet Vaddoriya"},
        {"kind": "author", "id": None, "username": "pelinbalci", "name": "Pelin Balci"},
    ]  # fmt: skip


def test_breadcrumb_broadest_first(frozen_now: datetime) -> None:
    for case in ("distributed-training", "distributed-training-html-only"):
        page = tag_page_of(parse_own(case, frozen_now))
        assert page.parent_topics == [
            "Machine Learning",
            "Artificial Intelligence",
            "Distributed Systems",
        ]


def test_related_tags_from_description_boilerplate(frozen_now: datetime) -> None:
    html = (
        '<html><head><meta property="og:site_name" content="Medium">'
        "<title>The most insightful stories about Edge AI - Medium</title>"
        '<meta name="description" content="Read stories about Edge AI on Medium. Discover smart, '
        "unique perspectives on Edge AI and the topics that matter most to you like Machine "
        'Learning, Iot, Tiny ML, and more."></head><body></body></html>'
    )
    result = parse_page(html, "https://medium.com/tag/edge-ai", kind="tag", scraped_at=frozen_now)
    page = tag_page_of(result)
    assert page.name == "Edge AI"
    assert page.related_tags == ["machine-learning", "iot", "tiny-ml"]
    assert page.description is None  # the boilerplate is not a tag description
    assert result.missing == ["stories"]


def test_state_numbers_win_and_drop_the_raw_text(frozen_now: datetime) -> None:
    with_state = tag_page_of(parse_own("distributed-training", frozen_now))
    html_only = tag_page_of(parse_own("distributed-training-html-only", frozen_now))
    assert (with_state.followers, with_state.followers_raw) == (1873, None)
    assert (html_only.followers, html_only.followers_raw) == (1900, "1.9K")
    assert (html_only.story_count, html_only.story_count_raw) == (2400, "2.4K")


def test_before_javascript_page(frozen_now: datetime) -> None:
    page = tag_page_of(parse_own("distributed-training-before-js", frozen_now))
    assert list(page.sections) == ["popular_this_week", "selected_by_medium", "latest_stories"]
    assert page.who_to_follow == []


def test_broken_state_gives_html_result_and_error(frozen_now: datetime) -> None:
    result = parse_own("distributed-training-broken-state", frozen_now)
    page = tag_page_of(result)
    assert any(error.startswith("broken Apollo state") for error in result.errors)
    assert page.name == "Distributed Training"
    assert len(page.sections) == 4
    assert result.items_of("author") == []


def test_renamed_classes_still_found_by_url(frozen_now: datetime) -> None:
    url = "https://medium.com/tag/pytorch?source=search_tags"
    result = parse_own("pytorch-renamed-classes", frozen_now, url)
    page = tag_page_of(result)
    assert page.url == "https://medium.com/tag/pytorch"
    assert page.sections == {
        "popular_this_week": ["91f3d8b2e6a0", "5d1f0a7c93b2"],
        "latest_stories": ["e2d7a3c8f419"],
    }
    assert ("tag", "pytorch") not in {(link.kind, link.key) for link in result.links}


def test_non_medium_page_is_an_error(frozen_now: datetime) -> None:
    html = "<html><head><title>Shop</title></head><body><h1>Shoes</h1></body></html>"
    result = parse_page(html, "https://example.com/tag/shoes", kind="tag", scraped_at=frozen_now)
    assert result.items == []
    assert "not a Medium page" in result.errors


@pytest.mark.parametrize("body", [b"", b"\xff\xfe<<<", "<html>"])
def test_garbage_never_raises(body: bytes | str, frozen_now: datetime) -> None:
    result = parse_page(body, TAG_URL, kind="tag", scraped_at=frozen_now)
    assert result.errors


@pytest.mark.parametrize(
    ("heading", "key"),
    [
        ("Popular this week", "popular_this_week"),
        ("Selected by Medium", "selected_by_medium"),
        ("Latest stories", "latest_stories"),
        ("Recommended stories", "recommended"),
        ("Latest", "latest"),
    ],
)
def test_section_key(heading: str, key: str) -> None:
    assert section_key(heading) == key


@pytest.mark.real_pages
def test_topic_page_2019(real_pages: Path, frozen_now: datetime) -> None:
    body = read_capture(real_pages, "topic_popular__light-bringer-medium-crawler-2019.html")
    result = parse_page(body, "https://medium.com/topic/popular", scraped_at=frozen_now)
    page = tag_page_of(result)
    assert (page.tag, page.name) == ("popular", "Popular on Medium")
    assert list(page.sections) == ["featured", "latest"]  # popularPosts is empty
    assert len(result.items_of("story")) == 11  # 10 + 10 with 9 shared
    # custom-domain stories are recognised once the state names the domains
    assert ("publication", "towardsdatascience.com") in {(ln.kind, ln.key) for ln in result.links}


TAG_2022 = "tag_programming_apollo-state-only__lstsk-medium-api-2022.json"


@pytest.mark.real_pages
def test_tag_page_2022_state_gives_stories_related_tags_and_top_writers(
    real_pages: Path, frozen_now: datetime
) -> None:
    state = read_capture(real_pages, TAG_2022)
    body = b"<html><body><script>window.__APOLLO_STATE__ = " + state + b"</script></body></html>"
    result = parse_page(
        body, "https://medium.com/tag/programming", kind="tag", scraped_at=frozen_now
    )
    page = tag_page_of(result)
    assert (page.name, page.story_count, page.writer_count) == ("Programming", 251065, 87828)
    assert (page.latest_story_count, page.latest_writer_count) == (497, 381)
    assert len(page.related_tags) == 9
    assert page.related_tags[0] == "software-development"
    assert [w["username"] for w in page.top_writers][:2] == ["javinpaul", "bhargavbachina"]
    assert len(page.top_writers) == 6
    assert list(page.sections) == ["tag_feed_hot"]
    stories = result.items_of("story")
    assert [s.story_id for s in stories] == page.sections["tag_feed_hot"]
    assert len(stories) == 10
    assert "796b177ec79" in page.sections["tag_feed_hot"]
    assert result.errors == []
    assert result.missing == []


@pytest.mark.parametrize(
    ("case", "sections"),
    [
        ("pytorch-2022-key-forms", {"tag_feed_new": 4, "tag_feed_top_week": 3}),  # other modes
        ("pytorch-2022-apollo2", {"tag_feed_hot": 7}),
        ("pytorch-2022-wrapped", {"tag_feed_hot": 7}),
        ("pytorch-2022-wrong-types", {"tag_feed_hot": 5}),
    ],
)
def test_2022_state_variants_read_by_field_name_and_arguments(
    case: str, sections: dict[str, int], frozen_now: datetime
) -> None:
    result = parse_own(case, frozen_now, "https://medium.com/tag/pytorch")
    page = tag_page_of(result)
    assert {key: len(ids) for key, ids in page.sections.items()} == sections
    assert len(result.items_of("story")) == sum(sections.values())
    if case != "pytorch-2022-wrong-types":
        assert page.writer_count == 4210
        assert page.related_tags == ["deep-learning", "machine-learning", "gpu"]
        assert [w["username"] for w in page.top_writers] == ["varuntej", "rishikumar", "lenaokafor"]
    else:  # every wrong-typed value is a missing value and a note, never an exception
        assert (page.writer_count, page.story_count, page.related_tags) == (None, None, [])
        assert "Apollo state: TagFeedResult.items[] is an integer, not an object" in result.errors


def test_2019_topic_variant_keyed_by_id_with_other_key_forms(frozen_now: datetime) -> None:
    result = parse_own("rust-topic-2019-variant", frozen_now, "https://medium.com/topic/rust")
    page = tag_page_of(result)
    assert (page.tag, page.name, page.url) == ("rust", "Rust", "https://medium.com/topic/rust")
    assert {key: len(ids) for key, ids in page.sections.items()} == {"latest": 5, "popular": 3}
    assert page.related_tags == ["programming", "software-engineering"]
    assert [w["username"] for w in page.top_writers] == ["pinterest_engineering", "varuntej"]
    assert len(result.items_of("story")) == 6


def test_breadcrumb_and_clusters_without_test_ids(frozen_now: datetime) -> None:
    result = parse_own(
        "deep-learning-no-testids", frozen_now, "https://medium.com/tag/deep-learning"
    )
    page = tag_page_of(result)
    assert page.parent_topics == ["Artificial Intelligence", "Machine Learning"]
    assert [c["name"] for c in page.subtopics] == ["Training at Scale", "Architectures"]
    assert page.subtopics[0]["section"] == "training_at_scale"
    assert len(page.sections["training_at_scale"]) == 2
    assert page.related_tags == ["machine-learning", "pytorch", "data-science"]
    assert [e["kind"] for e in page.who_to_follow] == ["author", "publication"]


def test_counts_are_the_tags_not_those_of_accounts_to_follow(frozen_now: datetime) -> None:
    html = (
        '<html><head><meta property="og:site_name" content="Medium"></head><body>'
        '<NAV ARIA-LABEL="BREADCRUMB"><a href="/tag/programming">Programming</a></NAV>'
        "<h1>Rust</h1><section><h2>Who to follow</h2>"
        '<div><a href="/@ann">Ann Lee</a><span>12K followers</span></div></section>'
        '<div DATA-TESTID="Related-Tags"><a href="/tag/go">Go</a></div></body></html>'
    )
    result = parse_page(html, "https://medium.com/tag/rust", kind="tag", scraped_at=frozen_now)
    page = tag_page_of(result)
    assert (page.name, page.followers, page.story_count) == ("Rust", None, None)
    assert page.parent_topics == ["Programming"]  # upper-case markup, same reading
    assert page.related_tags == ["go"]
    assert page.who_to_follow == [
        {"kind": "author", "id": None, "username": "ann", "name": "Ann Lee"}
    ]
    assert result.missing == ["stories"]


@pytest.mark.real_pages
def test_2019_topic_handler_body_is_read_as_the_same_topic(real_pages: Path) -> None:
    """The topic page's reading applies to the GraphQL body of the same era, unchanged."""
    name = "graphql_TopicHandler_programming__hypeit-2019-reserialized.json"
    body = json.loads(read_capture(real_pages, name))
    topic = read_tag_state(State.from_response(body), None)
    assert topic is not None
    assert (topic.slug, topic.is_topic, topic.fields["name"]) == (
        "programming",
        True,
        "Programming",
    )
    assert {key: len(ids) for key, ids in topic.sections.items()} == {
        "featured": 10,
        "latest": 25,
        "popular": 5,
    }
    assert topic.fields["related_tags"][:2] == ["javascript", "software-engineering"]
    assert [writer.str("username") for writer in topic.writers] == ["mc999"]
    assert len(topic.posts) == 38


def test_a_2022_page_whose_state_lists_stories_and_writers_needs_no_browser(
    frozen_now: datetime,
) -> None:
    result = parse_own("pytorch-2022-key-forms", frozen_now, "https://medium.com/tag/pytorch")
    assert tag_page_of(result).top_writers
    assert [s for s in result.signals if s.reason == "needs_browser"] == []
    changed = parse_page(
        "<html><head><meta property='og:site_name' content='Medium'></head>"
        "<body><h1>GPU</h1></body></html>",
        "https://medium.com/tag/gpu",
        kind="tag",
        scraped_at=frozen_now,
    )
    assert [(s.reason, s.what) for s in changed.signals] == [("needs_browser", "tag_sections")]


def test_a_state_that_lost_its_script_tag_is_text_not_a_hang(frozen_now: datetime) -> None:
    """A mutated page whose Apollo JSON became page text (digits and commas by the
    hundred thousand) once took minutes in the counts pattern; it is plain text now."""
    numbers = ",".join(["1660210535691"] * 40_000)
    html = (
        '<html><head><meta property="og:site_name" content="Medium"></head><body>'
        f"<h1>PyTorch</h1>{numbers} followers<p>12 stories</p></body></html>"
    )
    result = parse_page(html, "https://medium.com/tag/pytorch", kind="tag", scraped_at=frozen_now)
    page = tag_page_of(result)
    assert (page.followers, page.story_count) == (None, 12)
