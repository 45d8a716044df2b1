"""``extract --kind graphql``: saved GraphQL responses (one operation or a batch) → items."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from topics_crawler.graphql import TimeRange, tag_archive_body
from topics_crawler.items import Author, Story, TagPage
from topics_crawler.pages import PageResult, parse_page
from topics_crawler.pages.graphql_body import section_key
from topics_crawler.site.content import default_site
from topics_crawler.site.graphql import archive_stories, graphql_response

ROOT = Path(__file__).resolve().parent.parent
TAG = "distributed-training"
TOPIC_HANDLER = "graphql_TopicHandler_programming__hypeit-2019-reserialized.json"
GRAPHQL_URL = "https://medium.com/_/graphql"


def archive_body(first: int = 10, sort: str = "NEWEST") -> bytes:
    site = default_site().with_archive(TAG, 30)
    body = tag_archive_body(TAG, TimeRange.all_time(), sort, first=first)  # type: ignore[arg-type]
    return graphql_response(site, body)[1]


@pytest.mark.parametrize(
    ("field", "key"),
    [
        ("latestPosts", "latest"),
        ("featuredPosts", "featured"),
        ("sortedFeed", "sorted"),
        ("mostReadFeed", "most_read"),
        ("posts", "posts"),
    ],
)
def test_section_keys(field: str, key: str) -> None:
    assert section_key(field) == key


def test_the_local_sites_tag_archive_batch_gives_its_stories_in_order() -> None:
    site = default_site().with_archive(TAG, 30)
    expected = archive_stories(site, TAG, {"kind": "ALL_TIME"}, "NEWEST")[:10]
    result = parse_page(archive_body(), GRAPHQL_URL, kind="graphql")
    assert result.errors == []
    stories = result.items_of("story")
    assert [s.story_id for s in stories] == [s.id for s in expected]
    for story, site_story in zip(stories, expected, strict=True):
        assert isinstance(story, Story)
        assert story.title == site_story.title
        assert story.url == site.story_url(site_story)
        assert story.claps == site_story.claps
        assert story.author_username == site.authors[site_story.author].username
    [tag] = result.items_of("tag_page")
    assert isinstance(tag, TagPage)
    assert tag.sections["sorted"] == [s.id for s in expected]
    [cursor] = result.cursors
    assert cursor.listing == f"{TAG}:sorted"
    assert cursor.cursor["hasNextPage"] is True
    assert isinstance(cursor.cursor["after"], str)
    assert all(isinstance(a, Author) and a.username for a in result.items_of("author"))
    assert {ln.kind for ln in result.links} >= {"story", "author", "tag"}


def test_a_single_operation_body_and_detection_without_kind() -> None:
    batch = json.loads(archive_body(first=3))
    single = json.dumps(batch[0]).encode()
    for body in (single, json.dumps(batch).encode()):
        result = parse_page(body, GRAPHQL_URL)
        assert result.kind == "graphql"
        assert len(result.items_of("story")) == 3


def test_errors_and_wrong_types_are_recorded_not_raised() -> None:
    batch = json.loads(archive_body(first=3))
    edges = batch[0]["data"]["tagFromSlug"]["sortedFeed"]["edges"]
    edges[0]["node"]["title"] = {"not": "a title"}
    edges[1]["node"]["creator"] = "nobody"
    batch.append({"errors": [{"message": "Variable $first must be 1 to 100"}]})
    result = parse_page(json.dumps(batch), GRAPHQL_URL, kind="graphql")
    assert len(result.items_of("story")) == 3
    assert "GraphQL error: Variable $first must be 1 to 100" in result.errors
    assert any("title is an object, not a string" in e for e in result.errors)
    assert any("creator is a string, not an object" in e for e in result.errors)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"data": {"viewer": null}}', "GraphQL response without Medium data"),
        (b'{"errors": [{"message": "boom"}]}', "GraphQL error: boom"),
        (b"[1, 2]", "not a GraphQL response"),
        (b"[" * 50_000, "broken GraphQL body"),
    ],
)
def test_bodies_without_data(body: bytes, reason: str) -> None:
    result = parse_page(body, GRAPHQL_URL, kind="graphql")
    assert result.items == []
    assert any(e.startswith(reason) for e in result.errors), result.errors


@pytest.mark.real_pages
def test_extract_the_2019_topic_handler_body(real_pages: Path) -> None:
    process = subprocess.run(
        [sys.executable, "-m", "topics_crawler", "extract", str(real_pages / TOPIC_HANDLER),
         "--url", GRAPHQL_URL, "--kind", "graphql"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert process.returncode == 0, process.stderr
    assert process.stderr == ""
    rows = [json.loads(line) for line in process.stdout.splitlines()]
    tag = rows[0]
    assert tag["item_type"] == "tag_page"
    assert tag["tag"] == "programming"
    assert {k: len(v) for k, v in tag["sections"].items()} == {
        "featured": 10,
        "latest": 25,
        "popular": 5,
    }
    assert tag["related_tags"][:2] == ["javascript", "software-engineering"]
    assert [w["username"] for w in tag["top_writers"]] == ["mc999"]
    stories = [r for r in rows if r["item_type"] == "story"]
    assert len({s["story_id"] for s in stories}) == len(stories) >= 40
    assert all(s["title"] and s["url"] for s in stories)
    # popularPosts select no creator; every other listing names the author
    assert {s["story_id"] for s in stories if not s["author_id"]} <= set(tag["sections"]["popular"])


def tag_page_of(result: PageResult) -> TagPage:
    page = result.items[0]
    assert isinstance(page, TagPage), result
    return page


def _writer(user_id: str | None, username: str | None, name: str) -> dict[str, object]:
    return {"__typename": "User", "id": user_id, "username": username, "name": name}


#: A 2019 ``Topic``'s featured writers, one listed twice and one with neither id nor username.
_WRITERS = [
    _writer("a1b2c3d4e5f6", "ada", "Ada"),
    _writer(None, "@grace", "Grace"),
    _writer("a1b2c3d4e5f6", "ada", "Ada"),
    _writer(None, None, "Nobody"),
]


def test_a_topics_featured_writers_are_top_writers_in_a_page_and_in_a_graphql_body() -> None:
    """One meaning, one field: the writers a 2019 ``Topic`` features (``featuredTopicWriters``)
    are the tag's ``top_writers`` whether the Topic comes in a page's Apollo cache or in a
    GraphQL body; ``who_to_follow`` is the page's "Who to follow" box, absent from both."""
    topic = {"__typename": "Topic", "id": "9f8e7d6c5b4a", "slug": "zig", "name": "Zig"}
    body = {"data": {"topic": {**topic, "featuredTopicWriters": [{"user": w} for w in _WRITERS]}}}
    from_body = tag_page_of(parse_page(json.dumps(body).encode(), GRAPHQL_URL, kind="graphql"))
    cache: dict[str, object] = {
        "ROOT_QUERY": {'topic({"slug":"zig"})': {"__ref": "Topic:9f8e7d6c5b4a"}},
        "Topic:9f8e7d6c5b4a": {
            **topic,
            'featuredTopicWriters({"limit":4})': [
                {"user": {"__ref": f"User:{w['id']}"} if w["id"] else w} for w in _WRITERS
            ],
        },
        "User:a1b2c3d4e5f6": _WRITERS[0],
    }
    page = (
        '<html><head><meta property="og:site_name" content="Medium"></head><body><h1>Zig</h1>'
        f"<script>window.__APOLLO_STATE__ = {json.dumps(cache)}</script></body></html>"
    )
    from_page = tag_page_of(parse_page(page.encode(), "https://medium.com/topic/zig", kind="tag"))
    expected = [
        {"kind": "author", "id": "a1b2c3d4e5f6", "username": "ada", "name": "Ada"},
        {"kind": "author", "id": None, "username": "grace", "name": "Grace"},
    ]
    assert from_body.top_writers == from_page.top_writers == expected
    assert from_body.who_to_follow == from_page.who_to_follow == []
