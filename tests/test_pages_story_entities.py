"""Embedded user / collection objects → Author and Publication items."""

from __future__ import annotations

from typing import Any

from topics_crawler.items import Author, Publication
from topics_crawler.pages._entities import (
    author_from_legacy_user,
    author_from_user,
    publication_from_collection,
    publication_from_legacy_collection,
)
from topics_crawler.pages.state import Node, State

NOW = "2026-11-30T12:00:00Z"


def author_from_legacy(user: dict[str, Any], references: dict[str, Any], now: str) -> Author:
    state = State.from_payload({"user": user, "references": references})
    node = state.root.node("user")
    assert node is not None
    return author_from_legacy_user(node, state, now)


def publication_from_legacy(collection: dict[str, Any], now: str) -> Publication:
    node = State.from_payload({"collection": collection}).root.node("collection")
    assert node is not None
    return publication_from_legacy_collection(node, now)


def apollo_node(cache: dict[str, Any], raw: dict[str, Any]) -> Node:
    """``raw`` (an entity of the Apollo ``cache``) as the parsers read it."""
    return Node(State.from_apollo(cache), raw)


def test_apollo3_user_with_membership_tier_and_stats() -> None:
    cache: dict[str, Any] = {
        "User:268314bb7e7e": {
            "id": "268314bb7e7e",
            "name": " Ev Williams ",
            "username": "ev",
            "bio": "Curious human",
            "imageId": "1*Oa7.jpeg",
            "socialStats": {"followerCount": 213548, "followingCount": 2705},
            "membership": {"__ref": "Membership:x"},
        },
        "Membership:x": {"tier": "FRIEND"},
    }
    author = author_from_user(apollo_node(cache, cache["User:268314bb7e7e"]), NOW)
    assert author.author_id == "268314bb7e7e"
    assert author.username == "ev"
    assert author.name == "Ev Williams"
    assert author.url == "https://medium.com/@ev"
    assert author.followers == 213548
    assert author.following == 2705
    assert author.is_member is True
    assert author.image_url == "https://miro.medium.com/v2/resize:fill:176:176/1*Oa7.jpeg"
    assert author.scraped_at == NOW


def test_apollo2_generated_social_stats_and_member_at() -> None:
    cache: dict[str, Any] = {
        "User:abc": {
            "id": "abc",
            "username": "x",
            "mediumMemberAt": 0,
            "bio": "",
            "socialStats": {"type": "id", "generated": True, "id": "$User:abc.socialStats"},
        },
        "$User:abc.socialStats": {"followerCount": 12},
    }
    author = author_from_user(apollo_node(cache, cache["User:abc"]), NOW)
    assert author.followers == 12
    assert author.following is None
    assert author.is_member is False
    assert author.bio is None


def test_apollo_user_silent_about_membership_is_none() -> None:
    author = author_from_user(apollo_node({}, {"id": "abc", "name": "A"}), NOW)
    assert author.is_member is None
    assert author.image_url is None
    assert author.url is None


def test_apollo_collection_with_domain() -> None:
    collection: dict[str, Any] = {
        "id": "544c7006046e",
        "slug": "human-parts",
        "name": "Human Parts",
        "domain": "humanparts.medium.com",
        "description": "A home for personal storytelling.",
        "subscriberCount": 306875,
    }
    pub = publication_from_collection(apollo_node({}, collection), NOW)
    assert pub.publication_id == "544c7006046e"
    assert pub.url == "https://humanparts.medium.com/"
    assert pub.domain == "humanparts.medium.com"
    assert pub.followers == 306875


def test_apollo_publication_without_domain_uses_slug_url() -> None:
    pub = publication_from_collection(
        apollo_node({}, {"id": "15f753907972", "slug": "blog", "domain": ""}), NOW
    )
    assert pub.url == "https://medium.com/blog"
    assert pub.domain is None
    assert pub.followers is None


def test_legacy_user_followers_from_social_stats_table() -> None:
    user = {"userId": "393110b0b9e4", "username": "TheLarkInn", "name": "Sean", "imageId": ""}
    references = {
        "SocialStats": {"393110b0b9e4": {"usersFollowedByCount": 3842, "usersFollowedCount": 300}}
    }
    author = author_from_legacy(user, references, NOW)
    assert author.author_id == "393110b0b9e4"
    assert author.followers == 3842
    assert author.following == 300
    assert author.is_member is None
    assert author.image_url is None


def test_legacy_user_without_stats_has_no_followers() -> None:
    author = author_from_legacy({"userId": "28ff78fed88e", "mediumMemberAt": 5}, {}, NOW)
    assert author.followers is None
    assert author.is_member is True


def test_legacy_collection_followers_from_metadata() -> None:
    collection = {"id": "b2f039622545", "slug": "webpack", "name": "webpack",
                  "metadata": {"followerCount": 7228}}  # fmt: skip
    pub = publication_from_legacy(collection, NOW)
    assert pub.followers == 7228
    assert pub.url == "https://medium.com/webpack"
    assert pub.domain is None


def test_legacy_viewer_social_stats_are_not_the_authors() -> None:
    viewer_stats = {"userId": "388996e27d02", "usersFollowedByCount": 2874}
    user = {"userId": "c359511de780", "username": "_ericelliott", "socialStats": viewer_stats}
    references = {"SocialStats": {"388996e27d02": viewer_stats}}
    author = author_from_legacy(user, references, NOW)
    assert author.followers is None
    assert author.following is None
