"""Medium's embedded user and collection objects turned into items.

Two shapes exist:

* Apollo (2019–2025) and GraphQL responses: ``User`` and ``Collection`` /
  ``Publication`` nodes (:func:`author_from_user`, :func:`publication_from_collection`).
* Legacy (2015–2018 pages and ``?format=json`` payloads): ``references.User[id]``,
  ``references.Collection[id]`` and ``references.SocialStats[id]``
  (:func:`author_from_legacy_user`, :func:`publication_from_legacy_collection`).

Every value is read through :mod:`topics_crawler.pages.state`'s typed accessors.

A value the object does not carry stays None; nothing is guessed.
"""

from __future__ import annotations

from typing import Any

from topics_crawler.items import Author, Publication
from topics_crawler.items.values import clean_text, read_count
from topics_crawler.pages.state import Node, State
from topics_crawler.urls import author_url, publication_url

AVATAR_URL = "https://miro.medium.com/v2/resize:fill:176:176/{image_id}"
#: ``membership.tier`` values that do not mean a paying member.
NON_MEMBER_TIERS = frozenset({"", "NONE", "FREE"})


def avatar_url(image_id: Any) -> str | None:
    """Avatar URL for a Medium ``imageId`` (``1*AbC….jpeg``); None when empty."""
    if not isinstance(image_id, str) or not image_id.strip():
        return None
    return AVATAR_URL.format(image_id=image_id.strip())


def lower_id(value: Any) -> str | None:
    """A Medium id as lowercase text, or None when absent."""
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip().lower()


def member_since(medium_member_at: Any) -> bool | None:
    """``mediumMemberAt`` epoch ms → member flag; None when the field is absent."""
    if isinstance(medium_member_at, bool) or not isinstance(medium_member_at, int | float):
        return None
    return medium_member_at > 0


def member_from_tier(user: Node) -> bool | None:
    """``membership{tier}`` (2025) → member flag; ``membership: null`` means not a member."""
    if user.value("membership") is None:
        return False
    membership = user.node("membership")
    tier = membership.str("tier") if membership is not None else None
    return tier.upper() not in NON_MEMBER_TIERS if tier is not None else None


def _username(value: str | None) -> str | None:
    text = clean_text(value)
    return text.lstrip("@") if text else None


def _profile_url(username: str | None) -> str | None:
    return author_url(username) if username else None


def _is_member(user: Node) -> bool | None:
    flag = member_since(user.scalar("mediumMemberAt"))
    if flag is not None:
        return flag
    if user.has("membership"):
        return member_from_tier(user)
    return None


def author_from_user(user: Node, scraped_at: str) -> Author:
    """Author from a ``User`` node (Apollo-2, Apollo-3 or a GraphQL response)."""
    username = _username(user.str("username"))
    stats = user.node("socialStats")
    followers, followers_raw = read_count(stats.scalar("followerCount") if stats else None)
    following, _ = read_count(stats.scalar("followingCount") if stats else None)
    return Author(
        author_id=lower_id(user.str("id")),
        username=username,
        name=clean_text(user.str("name")),
        url=_profile_url(username),
        bio=clean_text(user.str("bio")),
        followers=followers,
        followers_raw=followers_raw,
        following=following,
        is_member=_is_member(user),
        image_url=avatar_url(user.str("imageId")),
        data_source="state",
        scraped_at=scraped_at,
    )


def _domain(value: str | None) -> str | None:
    text = clean_text(value)
    return text.lower() if text else None


def _publication_home(slug: str | None, domain: str | None) -> str | None:
    if not slug and not domain:
        return None
    return publication_url(slug or "", domain)


def publication_from_collection(collection: Node, scraped_at: str) -> Publication:
    """Publication from a ``Collection`` or ``Publication`` node."""
    slug = clean_text(collection.str("slug"))
    domain = _domain(collection.str("domain"))
    followers, followers_raw = read_count(collection.scalar("subscriberCount"))
    description = collection.str("description")
    if description is None:
        description = collection.str("tagline")
    return Publication(
        publication_id=lower_id(collection.str("id")),
        slug=slug.lower() if slug else None,
        name=clean_text(collection.str("name")),
        url=_publication_home(slug, domain),
        domain=domain,
        description=clean_text(description),
        followers=followers,
        followers_raw=followers_raw,
        data_source="state",
        scraped_at=scraped_at,
    )


def legacy_user_id(user: Node) -> str | None:
    """A legacy user's id (``userId``, or ``id`` in some payloads)."""
    return user.str("userId") or user.str("id")


def _legacy_social_stats(user: Node, state: State) -> Node | None:
    """The user's own ``SocialStats``. Payloads also carry the *viewer's* stats (2015
    posts embed them in every user), so stats of another ``userId`` are ignored."""
    user_id = legacy_user_id(user)
    for stats in (state.entity("SocialStats", user_id), user.node("socialStats")):
        if stats is not None and stats.str("userId") in (None, user_id):
            return stats
    return None


def author_from_legacy_user(user: Node, state: State, scraped_at: str) -> Author:
    """Author from a legacy ``references.User[id]`` object (followers from ``SocialStats``)."""
    username = _username(user.str("username"))
    stats = _legacy_social_stats(user, state)
    followers, followers_raw = read_count(stats.scalar("usersFollowedByCount") if stats else None)
    following, _ = read_count(stats.scalar("usersFollowedCount") if stats else None)
    return Author(
        author_id=lower_id(legacy_user_id(user)),
        username=username,
        name=clean_text(user.str("name")),
        url=_profile_url(username),
        bio=clean_text(user.str("bio")),
        followers=followers,
        followers_raw=followers_raw,
        following=following,
        is_member=member_since(user.scalar("mediumMemberAt")),
        image_url=avatar_url(user.str("imageId")),
        data_source="state",
        scraped_at=scraped_at,
    )


def publication_from_legacy_collection(collection: Node, scraped_at: str) -> Publication:
    """Publication from a legacy ``references.Collection[id]`` object."""
    slug = clean_text(collection.str("slug"))
    domain = _domain(collection.str("domain"))
    metadata = collection.node("metadata")
    followers, followers_raw = read_count(metadata.scalar("followerCount") if metadata else None)
    return Publication(
        publication_id=lower_id(collection.str("id")),
        slug=slug.lower() if slug else None,
        name=clean_text(collection.str("name")),
        url=_publication_home(slug, domain),
        domain=domain,
        description=clean_text(collection.str("description")),
        followers=followers,
        followers_raw=followers_raw,
        data_source="state",
        scraped_at=scraped_at,
    )
