"""The normalized-state reader: key forms, both reference forms, typed accessors, bounds."""

from __future__ import annotations

import json

import pytest

from topics_crawler.pages import Document
from topics_crawler.pages.state import (
    State,
    StateError,
    find_apollo_state,
    parse_json_payload,
    reference_key,
    split_field_key,
)


@pytest.mark.parametrize(
    ("key", "name", "args"),
    [
        ("viewer", "viewer", {}),
        ('tagFromSlug({"tagSlug":"programming"})', "tagFromSlug", {"tagSlug": "programming"}),
        ("staffPicksFeed:{}", "staffPicksFeed", {}),
        (
            'homepagePostsConnection:{"paging":{"limit":10},"includeDistributedResponses":true}',
            "homepagePostsConnection",
            {"paging": {"limit": 10}, "includeDistributedResponses": True},
        ),
        (
            "tagFeed:(mode:HOT,tagSlug:programming,limit:10)",
            "tagFeed",
            {"mode": "HOT", "tagSlug": "programming", "limit": 10},
        ),
        (
            "tagFeed:(limit:25,mode:NEW,paging:(to:1583,from:null),flags:[a,2])",
            "tagFeed",
            {"limit": 25, "mode": "NEW", "paging": {"to": 1583, "from": None}, "flags": ["a", 2]},
        ),
        (
            "tagFeed:popularStories(mode:TOP_WEEK,tagSlug:python,limit:5)",
            "tagFeed",
            {"mode": "TOP_WEEK", "tagSlug": "python", "limit": 5},
        ),
        (
            'tagFeed:latest({"tagSlug":"rust","mode":"NEW"})',
            "tagFeed",
            {"tagSlug": "rust", "mode": "NEW"},
        ),
        ("tagFeed:popularStories", "tagFeed", {}),
        ("tagFeed:popular(mode:HOT", "tagFeed:popular(mode:HOT", {}),
        ('user({"id":"abc"})', "user", {"id": "abc"}),
        ("broken({not json})", "broken", {}),
        ("broken:(a:1", "broken:(a:1", {}),
        ("deep(" + "[" * 5000 + ")", "deep", {}),
        ("$Post:abc.previewContent", "$Post", {}),
    ],
)
def test_field_keys_split_into_name_and_arguments(
    key: str, name: str, args: dict[str, object]
) -> None:
    got_name, got_args = split_field_key(key)
    assert got_args == args
    if name != "$Post":
        assert got_name == name


def test_both_reference_forms_and_apollo2_json_scalars() -> None:
    assert reference_key({"__ref": "User:a"}) == "User:a"
    assert reference_key({"type": "id", "id": "User:a", "generated": False}) == "User:a"
    assert reference_key({"type": "id", "id": "x", "name": "not a ref"}) is None
    cache = {
        "Post:p": {
            "id": "p",
            "creator": {"type": "id", "generated": False, "id": "User:u", "typename": "User"},
            "previewContent": {"type": "id", "generated": True, "id": "$Post:p.previewContent"},
            "meta": {"type": "json", "json": {"k": 1}},
        },
        "$Post:p.previewContent": {"subtitle": "Sub"},
        "User:u": {"id": "u", "name": "Ann"},
    }
    state = State.from_apollo(cache)
    post = state.entity("Post", "p")
    assert post is not None
    assert post.dig("creator") is not None
    assert post.dig("creator").str("name") == "Ann"  # type: ignore[union-attr]
    assert post.ref("creator") == "User:u"
    assert post.dig("previewContent").str("subtitle") == "Sub"  # type: ignore[union-attr]
    assert post.node("meta").int("k") == 1  # type: ignore[union-attr]
    assert [e.key for e in state.entities("User")] == ["User:u"]


def test_entities_by_typename_field_when_the_key_has_no_prefix() -> None:
    state = State.from_apollo({"popular": {"__typename": "Topic", "id": "9d34", "slug": "popular"}})
    topic = state.entity("Topic", "9d34")
    assert topic is not None
    assert topic.str("slug") == "popular"
    assert [e.typename for e in state.entities("Topic")] == ["Topic"]


def test_calls_whatever_their_arguments_and_the_best_one() -> None:
    cache = {
        "ROOT_QUERY": {
            "tagFeed:(mode:HOT,tagSlug:ai,limit:10)": {"items": [{"post": {"__ref": "Post:a"}}]},
            'tagFeed({"mode":"NEW","tagSlug":"ai"})': {"items": []},
            'userResult({"username":"Ann"})': {"__ref": "User:u"},
        },
        "Post:a": {"id": "a", "title": "A"},
        "User:u": {
            "id": "u",
            "username": "Ann",
            'homepagePostsConnection:{"paging":{"limit":3}}': {"posts": [{"__ref": "Post:a"}]},
            'homepagePostsConnection({"paging":{"limit":10},"x":1})': {
                "posts": [{"__ref": "Post:a"}, {"__ref": "Post:a"}]
            },
        },
    }
    state = State.from_apollo(cache)
    feeds = state.root.calls("tagFeed")
    assert [c.args.get("mode") for c in feeds] == ["HOT", "NEW"]
    items = feeds[0].node.nodes("items")  # type: ignore[union-attr]
    assert items[0].dig("post").str("title") == "A"  # type: ignore[union-attr]
    user_call = state.root.call("userResult", lambda a: str(a.get("username")).lower() == "ann")
    assert user_call is not None
    assert user_call.node is not None
    best = user_call.node.call(
        "homepagePostsConnection", best=lambda c: len(c.node.nodes("posts")) if c.node else 0
    )
    assert best is not None
    assert best.args["paging"] == {"limit": 10}
    assert user_call.node.node("homepagePostsConnection") is not None  # first call by name


def test_wrong_types_are_missing_values_and_notes() -> None:
    notes: list[str] = []
    cache = {
        "Post:p": {
            "id": "p",
            "title": ["not", "a", "string"],
            "clapCount": True,
            "readingTime": "7",
            "tags": False,
            "creator": 3.5,
            "isLocked": "yes",
            "count": 12.0,
            "big": 1e309,
        }
    }
    state = State.from_apollo(cache, notes=notes.append)
    post = state.entity("Post", "p")
    assert post is not None
    assert post.str("title") is None
    assert post.int("clapCount") is None
    assert post.float("readingTime") is None
    assert post.nodes("tags") == []
    assert post.node("creator") is None
    assert post.bool("isLocked") is None
    assert post.int("count") == 12
    assert post.float("missing") is None
    assert len(notes) == 6
    assert notes[0] == "Apollo state: Post:p.title is a list, not a string"


def test_notes_are_bounded() -> None:
    notes: list[str] = []
    state = State.from_apollo({f"Post:{i}": {"title": i} for i in range(100)}, notes=notes.append)
    for post in state.entities("Post"):
        post.str("title")
    assert len(notes) == 20


def test_reference_loops_and_dangling_references_end() -> None:
    state = State.from_apollo(
        {"A:1": {"__ref": "A:1"}, "Post:p": {"next": {"__ref": "A:1"}, "gone": {"__ref": "X:9"}}}
    )
    post = state.entity("Post", "p")
    assert post is not None
    assert post.node("gone") is None
    assert post.node("next") is None


def test_graphql_batch_response_roots_and_inline_entities() -> None:
    body = [
        {
            "data": {
                "tagFromSlug": {
                    "__typename": "Tag",
                    "id": "ai",
                    "sortedFeed": {
                        "edges": [
                            {
                                "node": {
                                    "__typename": "Post",
                                    "id": "p1",
                                    "creator": {"__typename": "User", "id": "u1", "name": "Ann"},
                                }
                            },
                            {
                                "node": {
                                    "__typename": "Post",
                                    "id": "p2",
                                    "creator": {
                                        "__typename": "User",
                                        "id": "u1",
                                        "username": "ann",
                                    },
                                }
                            },
                        ]
                    },
                }
            }
        },
        {"errors": [{"message": "nope"}]},
    ]
    state = State.from_response(body)
    assert len(state.roots) == 1
    assert [p.id for p in state.entities("Post")] == ["p1", "p2"]
    user = state.entity("User", "u1")
    assert user is not None
    assert user.str("name") == "Ann"
    assert user.str("username") == "ann"
    edges = state.root.dig("tagFromSlug", "sortedFeed")
    assert edges is not None
    assert len(edges.nodes("edges")) == 2


def test_legacy_payload_references() -> None:
    payload = {
        "value": {"id": "p1", "creatorId": "u1"},
        "references": {"User": {"u1": {"userId": "u1", "name": "Ann"}}, "Post": []},
    }
    state = State.from_payload(payload)
    value = state.root.node("value")
    assert value is not None
    user = state.entity("User", value.str("creatorId"))
    assert user is not None
    assert user.str("name") == "Ann"
    assert list(state.entities("Post")) == []


def test_deep_nesting_never_raises_recursion_error() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(StateError):
        parse_json_payload(deep)
    with pytest.raises(StateError):
        find_apollo_state(f"<script>window.__APOLLO_STATE__ = {deep}</script>")
    nested: object = {"__typename": "Post", "id": "p"}
    for _ in range(500):
        nested = {"x": [nested]}
    state = State.from_response({"data": nested})
    assert list(state.entities("Post")) == []  # deeper than the walk goes: not an entity
    assert json.dumps({"ok": True})


def test_document_state_prefers_apollo_and_records_type_notes() -> None:
    page = (
        '<html><script>window.__APOLLO_STATE__ = {"Post:p":{"id":"p","title":7}}</script>'
        '<script>window["obvInit"]({"value":{"id":"q"},"references":{}})</script></html>'
    )
    doc = Document(page, "https://medium.com/p/p")
    assert doc.state is doc.apollo_state
    post = doc.state.entity("Post", "p") if doc.state else None
    assert post is not None
    assert post.str("title") is None
    assert doc.errors == ["Apollo state: Post:p.title is an integer, not a string"]
    assert doc.legacy_state is not None
