"""Medium's embedded user and collection objects turned into items.

Two shapes exist:

* Apollo (2019–2025): ``User:<id>`` and ``Collection:<id>`` / ``Publication:<id>``
  entities of the ``__APOLLO_STATE__`` cache (both Apollo-2 and Apollo-3 forms;
  references are followed through :class:`ApolloState`).
* Legacy (2015–2018 pages and ``?format=json`` payloads): ``references.User[id]``,
  ``references.Collection[id]`` and ``references.SocialStats[id]``.

A value the object does not carry stays None; nothing is guessed.
"""

from __future__ import annotations

from typing import Any

from topics_crawler.items import Author, Publication
from topics_crawler.normalize import clean_text, parse_count
from topics_crawler.pages._state import ApolloState
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


def member_from_tier(membership: Any) -> bool | None:
    """``membership{tier}`` (2025) → member flag; ``membership: null`` means not a member."""
    if membership is None:
        return False
    if not isinstance(membership, dict):
        return None
    tier = membership.get("tier")
    if not isinstance(tier, str):
        return None
    return tier.upper() not in NON_MEMBER_TIERS


def _username(value: Any) -> str | None:
    text = clean_text(value)
    return text.lstrip("@") if text else None


def _profile_url(username: str | None) -> str | None:
    return author_url(username) if username else None


def _apollo_is_member(state: ApolloState, user: dict[str, Any]) -> bool | None:
    flag = member_since(user.get("mediumMemberAt"))
    if flag is not None:
        return flag
    if "membership" in user:
        return member_from_tier(state.field(user, "membership"))
    return None


def author_from_apollo(state: ApolloState, user: dict[str, Any], scraped_at: str) -> Author:
    """Author from an Apollo ``User:<id>`` entity (Apollo-2 or Apollo-3)."""
    username = _username(user.get("username"))
    stats = state.field(user, "socialStats")
    stats = stats if isinstance(stats, dict) else {}
    followers, followers_raw = parse_count(stats.get("followerCount"))
    following, _ = parse_count(stats.get("followingCount"))
    return Author(
        author_id=lower_id(user.get("id")),
        username=username,
        name=clean_text(user.get("name")),
        url=_profile_url(username),
        bio=clean_text(user.get("bio")),
        followers=followers,
        followers_raw=followers_raw,
        following=following,
        is_member=_apollo_is_member(state, user),
        image_url=avatar_url(user.get("imageId")),
        scraped_at=scraped_at,
    )


def _domain(value: Any) -> str | None:
    text = clean_text(value)
    return text.lower() if text else None


def _publication_home(slug: str | None, domain: str | None) -> str | None:
    if not slug and not domain:
        return None
    return publication_url(slug or "", domain)


def publication_from_apollo(
    state: ApolloState, collection: dict[str, Any], scraped_at: str
) -> Publication:
    """Publication from an Apollo ``Collection:<id>`` or ``Publication:<id>`` entity."""
    slug = clean_text(collection.get("slug"))
    domain = _domain(collection.get("domain"))
    followers, followers_raw = parse_count(collection.get("subscriberCount"))
    description = collection.get("description")
    if description is None:
        description = collection.get("tagline")
    return Publication(
        publication_id=lower_id(collection.get("id")),
        slug=slug.lower() if slug else None,
        name=clean_text(collection.get("name")),
        url=_publication_home(slug, domain),
        domain=domain,
        description=clean_text(description),
        followers=followers,
        followers_raw=followers_raw,
        scraped_at=scraped_at,
    )


def _legacy_social_stats(user: dict[str, Any], references: dict[str, Any]) -> dict[str, Any]:
    """The user's own ``SocialStats``. Payloads also carry the *viewer's* stats (2015
    posts embed them in every user), so stats of another ``userId`` are ignored."""
    user_id = user.get("userId") or user.get("id")
    table = references.get("SocialStats")
    candidates = [table.get(str(user_id)) if isinstance(table, dict) else None]
    candidates.append(user.get("socialStats"))
    for stats in candidates:
        if isinstance(stats, dict) and stats.get("userId", user_id) == user_id:
            return stats
    return {}


def author_from_legacy(user: dict[str, Any], references: dict[str, Any], scraped_at: str) -> Author:
    """Author from a legacy ``references.User[id]`` object (followers from ``SocialStats``)."""
    username = _username(user.get("username"))
    stats = _legacy_social_stats(user, references)
    followers, followers_raw = parse_count(stats.get("usersFollowedByCount"))
    following, _ = parse_count(stats.get("usersFollowedCount"))
    return Author(
        author_id=lower_id(user.get("userId") or user.get("id")),
        username=username,
        name=clean_text(user.get("name")),
        url=_profile_url(username),
        bio=clean_text(user.get("bio")),
        followers=followers,
        followers_raw=followers_raw,
        following=following,
        is_member=member_since(user.get("mediumMemberAt")),
        image_url=avatar_url(user.get("imageId")),
        scraped_at=scraped_at,
    )


def publication_from_legacy(collection: dict[str, Any], scraped_at: str) -> Publication:
    """Publication from a legacy ``references.Collection[id]`` object."""
    slug = clean_text(collection.get("slug"))
    domain = _domain(collection.get("domain"))
    metadata = collection.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    followers, followers_raw = parse_count(metadata.get("followerCount"))
    return Publication(
        publication_id=lower_id(collection.get("id")),
        slug=slug.lower() if slug else None,
        name=clean_text(collection.get("name")),
        url=_publication_home(slug, domain),
        domain=domain,
        description=clean_text(collection.get("description")),
        followers=followers,
        followers_raw=followers_raw,
        scraped_at=scraped_at,
    )
