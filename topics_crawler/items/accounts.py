"""The account items: :class:`Author` (a user who writes) and :class:`Publication` (a
collection), the two kinds of account Medium lists. Formats as in
:mod:`topics_crawler.items.classes`; each field declared once with
:func:`~topics_crawler.items.fields.spec`.
"""

from __future__ import annotations

from dataclasses import dataclass

from topics_crawler.items.fields import DATA_SOURCE_DOC, Kind, spec


@dataclass(kw_only=True)
class Author:
    """One Medium user who writes stories."""

    item_type: str = spec(
        Kind.ITEM_TYPE,
        'Entity kind, always ``"author"``.',
        default="author",
        init=False,
    )
    author_id: str | None = spec(
        Kind.HEX_ID,
        "Medium user id, lowercase hex.",
        one_of="id",
        identity=0,
    )
    username: str | None = spec(
        Kind.USERNAME,
        "Username without the leading ``@``.",
        one_of="id",
        identity=1,
    )
    name: str | None = spec(Kind.TEXT, "Display name, trimmed.")
    url: str | None = spec(
        Kind.URL,
        "Canonical profile URL (``https://medium.com/@username``).",
        required=True,
    )
    bio: str | None = spec(Kind.BODY, "Short biography, trimmed; None when empty.")
    followers: int | None = spec(Kind.COUNT, "Follower count, Count.", raw="followers_raw")
    followers_raw: str | None = spec(
        Kind.RAW,
        'Source text of ``followers`` when it was abbreviated (``"12K Followers"``).',
    )
    following: int | None = spec(Kind.COUNT, "Number of users this author follows, Count.")
    is_member: bool | None = spec(
        Kind.BOOL,
        "True when the author is a paying Medium member; None when the page does not say.",
    )
    image_url: str | None = spec(Kind.LINK, "Avatar URL.")
    data_source: str | None = spec(Kind.SOURCE, DATA_SOURCE_DOC)
    scraped_at: str | None = spec(
        Kind.TIMESTAMP,
        "When the page was fetched, Timestamp (UTC).",
        required=True,
        keep="latest",
    )


@dataclass(kw_only=True)
class Publication:
    """One Medium publication (a "collection" in Medium's own data)."""

    item_type: str = spec(
        Kind.ITEM_TYPE,
        'Entity kind, always ``"publication"``.',
        default="publication",
        init=False,
    )
    publication_id: str | None = spec(
        Kind.HEX_ID,
        "Medium collection id, lowercase hex.",
        one_of="id",
        identity=0,
    )
    slug: str | None = spec(
        Kind.SLUG,
        "Publication slug (``pinterest-engineering``).",
        one_of="id",
        identity=1,
    )
    name: str | None = spec(Kind.TEXT, "Display name.")
    url: str | None = spec(
        Kind.URL,
        "Canonical home URL (custom domain or ``https://medium.com/<slug>``).",
        required=True,
    )
    domain: str | None = spec(
        Kind.DOMAIN,
        "Custom domain (``humanparts.medium.com``, ``wtfeconomy.com``) or None.",
        identity=2,
    )
    description: str | None = spec(Kind.BODY, "Short description (tagline), trimmed.")
    followers: int | None = spec(
        Kind.COUNT,
        "Follower (subscriber) count, Count.",
        raw="followers_raw",
    )
    followers_raw: str | None = spec(
        Kind.RAW,
        "Source text of ``followers`` when it was abbreviated.",
    )
    data_source: str | None = spec(Kind.SOURCE, DATA_SOURCE_DOC)
    scraped_at: str | None = spec(
        Kind.TIMESTAMP,
        "When the page was fetched, Timestamp (UTC).",
        required=True,
        keep="latest",
    )
