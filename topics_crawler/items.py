"""Items: what one crawl of Medium yields, one dataclass per entity.

Every field is documented with its format. A value that a page does not
carry is ``None`` (or an empty list / mapping), never a made-up value.

Shared formats:

* **URL**: canonical ``https`` URL, lowercase host, no query string, no
  fragment, no trailing slash (except the bare host).
* **Timestamp**: ISO 8601 in UTC with second precision, ``YYYY-MM-DDTHH:MM:SSZ``.
* **Id**: Medium's own id, lowercase hex (``9e53ca408c48``).
* **Count**: non-negative ``int``; ``1.2K`` on a page becomes ``1200`` and
  the source text is kept in the matching ``*_raw`` field.
* ``*_raw`` fields hold the source string where normalising it loses
  information (``"1.2K"``, ``"1d ago"``); ``None`` where the source was exact.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from topics_crawler.layers import pick_paired

ItemType = Literal["story", "author", "publication", "tag_page", "response"]


@dataclass(kw_only=True)
class Story:
    """One Medium story (post)."""

    item_type: str = field(default="story", init=False)
    """Entity kind, always ``"story"``."""

    story_id: str | None = None
    """Medium post id, lowercase hex, 10 to 12 characters (``c9700a7cf36d``)."""
    url: str | None = None
    """Canonical URL of the story, on its canonical host (custom domains kept)."""
    title: str | None = None
    """Title, trimmed, NFC."""
    subtitle: str | None = None
    """Subtitle (the deck under the title), trimmed; None when the story has none."""
    author_id: str | None = None
    """Medium user id of the author, lowercase hex."""
    author_username: str | None = None
    """Author's username without the leading ``@``."""
    author_name: str | None = None
    """Author's display name."""
    publication_id: str | None = None
    """Medium id of the publication (collection); None when not in a publication."""
    publication_slug: str | None = None
    """Publication slug (``pinterest-engineering``); None when not in a publication."""
    publication_name: str | None = None
    """Publication display name; None when not in a publication."""
    published_at: str | None = None
    """First publication time, Timestamp (UTC)."""
    published_at_raw: str | None = None
    """Source text of ``published_at`` when it was relative or day-only (``"1d ago"``)."""
    updated_at: str | None = None
    """Last update time, Timestamp (UTC)."""
    reading_time_min: float | None = None
    """Estimated reading time in minutes, as Medium computes it (may have decimals)."""
    word_count: int | None = None
    """Number of words in the body, as Medium reports it (or counted from the full text)."""
    claps: int | None = None
    """Total clap count, Count."""
    claps_raw: str | None = None
    """Source text of ``claps`` when it was abbreviated (``"1.2K"``)."""
    responses: int | None = None
    """Number of responses (comments), Count."""
    responses_raw: str | None = None
    """Source text of ``responses`` when it was abbreviated."""
    tags: list[str] = field(default_factory=list)
    """Tag slugs in page order (``machine-learning``), without duplicates."""
    is_member_only: bool | None = None
    """True for member-only (locked) stories; None when the page does not say."""
    language: str | None = None
    """Detected language, ISO 639-1 code (``en``), when Medium states it."""
    image_url: str | None = None
    """Preview image URL (``https://miro.medium.com/...``)."""
    text: str | None = None
    """Body as Markdown-flavoured plain text: paragraphs separated by blank lines."""
    text_is_preview: bool | None = None
    """True when ``text`` is only the preview a logged-out reader sees (locked story)."""
    markdown: str | None = None
    """Body as CommonMark with its formatting: headings, lists, fenced code (byte for
    byte), quotes, links, bold, italic, inline code, images (alt, caption), embeds as
    links. A locked story's preview ends with a line saying it is only the preview."""
    in_response_to: str | None = None
    """Post id of the story (or response) this story answers, when it is a response;
    None for a story that answers nothing."""
    scraped_at: str | None = None
    """When the page was fetched, Timestamp (UTC)."""


@dataclass(kw_only=True)
class Author:
    """One Medium user who writes stories."""

    item_type: str = field(default="author", init=False)
    """Entity kind, always ``"author"``."""

    author_id: str | None = None
    """Medium user id, lowercase hex."""
    username: str | None = None
    """Username without the leading ``@``."""
    name: str | None = None
    """Display name, trimmed."""
    url: str | None = None
    """Canonical profile URL (``https://medium.com/@username``)."""
    bio: str | None = None
    """Short biography, trimmed; None when empty."""
    followers: int | None = None
    """Follower count, Count."""
    followers_raw: str | None = None
    """Source text of ``followers`` when it was abbreviated (``"12K Followers"``)."""
    following: int | None = None
    """Number of users this author follows, Count."""
    is_member: bool | None = None
    """True when the author is a paying Medium member; None when the page does not say."""
    image_url: str | None = None
    """Avatar URL."""
    scraped_at: str | None = None
    """When the page was fetched, Timestamp (UTC)."""


@dataclass(kw_only=True)
class Publication:
    """One Medium publication (a "collection" in Medium's own data)."""

    item_type: str = field(default="publication", init=False)
    """Entity kind, always ``"publication"``."""

    publication_id: str | None = None
    """Medium collection id, lowercase hex."""
    slug: str | None = None
    """Publication slug (``pinterest-engineering``)."""
    name: str | None = None
    """Display name."""
    url: str | None = None
    """Canonical home URL (custom domain or ``https://medium.com/<slug>``)."""
    domain: str | None = None
    """Custom domain (``humanparts.medium.com``, ``wtfeconomy.com``) or None."""
    description: str | None = None
    """Short description (tagline), trimmed."""
    followers: int | None = None
    """Follower (subscriber) count, Count."""
    followers_raw: str | None = None
    """Source text of ``followers`` when it was abbreviated."""
    scraped_at: str | None = None
    """When the page was fetched, Timestamp (UTC)."""


@dataclass(kw_only=True)
class TagPage:
    """One Medium tag (topic) page: ``https://medium.com/tag/<slug>``."""

    item_type: str = field(default="tag_page", init=False)
    """Entity kind, always ``"tag_page"``."""

    tag: str | None = None
    """Tag slug (``distributed-training``)."""
    name: str | None = None
    """Display name (``Distributed Training``)."""
    url: str | None = None
    """Canonical tag page URL (``https://medium.com/tag/<slug>``)."""
    description: str | None = None
    """Tag description, trimmed; None when the page has none."""
    parent_topics: list[str] = field(default_factory=list)
    """Breadcrumb of parent topics, broadest first, display names."""
    subtopics: list[dict[str, str | None]] = field(default_factory=list)
    """Sub-topic clusters in page order: ``{"name": ..., "description": ...}``."""
    related_tags: list[str] = field(default_factory=list)
    """Slugs of related tags, page order, without duplicates."""
    followers: int | None = None
    """Follower count of the tag, Count."""
    followers_raw: str | None = None
    """Source text of ``followers`` when it was abbreviated."""
    story_count: int | None = None
    """Number of stories with this tag, Count."""
    story_count_raw: str | None = None
    """Source text of ``story_count`` when it was abbreviated."""
    sections: dict[str, list[str]] = field(default_factory=dict)
    """Ordered mapping section key → story ids in card order. Keys:
    ``popular_this_week``, ``selected_by_medium``, ``latest_stories``,
    ``recommended``, ``featured`` (2019 topic pages); a section absent from
    the page is absent from the mapping."""
    who_to_follow: list[dict[str, str | None]] = field(default_factory=list)
    """Suggested accounts in page order: ``{"kind": "author"|"publication",
    "id": ..., "username"|"slug": ..., "name": ...}``."""
    scraped_at: str | None = None
    """When the page was fetched, Timestamp (UTC)."""


@dataclass(kw_only=True)
class StoryResponse:
    """One response (comment) to a story, a row of the ``responses`` table. On Medium a
    response is itself a post that answers another post; threads are responses to
    responses. Fetched over GraphQL with ``-a responses=N`` (see docs/responses.md)."""

    item_type: str = field(default="response", init=False)
    """Entity kind, always ``"response"``."""

    response_id: str | None = None
    """Medium post id of the response, lowercase hex."""
    story_id: str | None = None
    """Id of the story whose thread this is (the root, whatever the depth)."""
    parent_id: str | None = None
    """Id of the post this response answers: the story at depth 1, a response deeper."""
    depth: int | None = None
    """1 for a response to the story, 2 for a reply to a response, and so on."""
    url: str | None = None
    """Canonical URL of the response (responses have story URLs of their own)."""
    author_id: str | None = None
    """Medium user id of the response's author, lowercase hex."""
    author_username: str | None = None
    """Author's username without the leading ``@``."""
    author_name: str | None = None
    """Author's display name."""
    text: str | None = None
    """Body as plain text, paragraphs separated by blank lines."""
    text_is_preview: bool | None = None
    """True when ``text`` is only the preview a logged-out reader sees (member-only)."""
    is_member_only: bool | None = None
    """True for a member-only (locked) response."""
    claps: int | None = None
    """Clap count, Count."""
    published_at: str | None = None
    """First publication time, Timestamp (UTC)."""
    scraped_at: str | None = None
    """When the response was fetched, Timestamp (UTC)."""


Item = Story | Author | Publication | TagPage | StoryResponse
ITEM_CLASSES: dict[str, type[Item]] = {
    "story": Story,
    "author": Author,
    "publication": Publication,
    "tag_page": TagPage,
    "response": StoryResponse,
}


#: Fields that identify an entity, most specific first: two records are the same entity
#: when any of these (non-empty) values match.
IDENTITY_FIELDS: dict[str, tuple[str, ...]] = {
    "story": ("story_id",),
    "author": ("author_id", "username"),
    "publication": ("publication_id", "slug"),
    "tag_page": ("tag",),
    "response": ("response_id",),
}
_KEY_PREFIX = {"username": "@", "slug": "/"}


def entity_keys(item_type: str, record: Mapping[str, Any]) -> list[str]:
    """Keys under which the entity of ``record`` is known, most specific first
    (``author:a1b2…``, ``author:@ada``); values trimmed and lowercased; may be empty."""
    keys = []
    for name in IDENTITY_FIELDS.get(item_type, ()):
        value = record.get(name)
        if isinstance(value, str) and value.strip():
            keys.append(f"{item_type}:{_KEY_PREFIX.get(name, '')}{value.strip().lower()}")
    return keys


def item_to_dict(item: Item) -> dict[str, Any]:
    """Plain dict of an item, ``item_type`` first, fields in declaration order."""
    return {f.name: getattr(item, f.name) for f in fields(item)}


def item_from_dict(data: dict[str, Any]) -> Item:
    """Build an item from :func:`item_to_dict` output; unknown keys raise ``ValueError``."""
    payload = dict(data)
    item_type = payload.pop("item_type", None)
    cls = ITEM_CLASSES.get(str(item_type))
    if cls is None:
        raise ValueError(f"unknown item_type {item_type!r}")
    known = {f.name for f in fields(cls) if f.init}
    unknown = sorted(set(payload) - known)
    if unknown:
        raise ValueError(f"{item_type}: unknown fields {', '.join(unknown)}")
    return cls(**payload)


def fill_missing(item: Item, other: Item) -> Item:
    """Copy of ``item`` with its empty fields filled from ``other`` (same type).

    Used to merge what a listing card knew into the item of the full page:
    the page's values win, the card only fills gaps. A ``*_raw`` field travels
    with its value: it is taken from ``other`` only together with that value.
    """
    if type(item) is not type(other):
        raise TypeError(f"cannot merge {other.item_type} into {item.item_type}")
    names = [f.name for f in fields(item) if f.init]
    own = {name: getattr(item, name) for name in names}
    theirs = {name: getattr(other, name) for name in names}
    return replace(item, **pick_paired(own, theirs))
