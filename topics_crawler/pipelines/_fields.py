"""What kind of value each item field holds, shared by the normalize and validate pipelines.

One table per item type maps field name → :class:`Kind`; the normalize pipeline
picks the normaliser for a kind, the validate pipeline the check. ``*_raw``
companions are found by name (``claps`` → ``claps_raw``).
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any

from itemadapter import ItemAdapter

from topics_crawler.items import ITEM_CLASSES, item_to_dict

ITEM_TYPES = tuple(ITEM_CLASSES.values())


class Kind(Enum):
    """Value kinds of item fields."""

    POST_ID = "post_id"
    """Medium post id, lowercase hex, 10 to 12 characters."""
    HEX_ID = "hex_id"
    """Medium user / collection id, lowercase hex."""
    URL = "url"
    """Canonical entity URL (:func:`topics_crawler.urls.canonical_url`)."""
    LINK = "link"
    """Absolute http(s) URL kept as given (images): trimmed only."""
    USERNAME = "username"
    """Username without ``@``."""
    SLUG = "slug"
    """Lowercase publication slug."""
    TAG = "tag"
    """Tag slug (:func:`topics_crawler.normalize.tag_slug`), also from a display name."""
    DOMAIN = "domain"
    """Lowercase host name."""
    LANGUAGE = "language"
    """Lowercase language code."""
    TEXT = "text"
    """One-line text: trimmed, NFC, white space folded."""
    BODY = "body"
    """Multi-line body text: NFC and trimmed; inner white space (code indentation) kept."""
    TIMESTAMP = "timestamp"
    """``YYYY-MM-DDTHH:MM:SSZ``."""
    COUNT = "count"
    """Non-negative int."""
    MINUTES = "minutes"
    """Non-negative float (reading time)."""
    BOOL = "bool"
    """True / False / None."""
    RAW = "raw"
    """Source text companion of another field; kept as given (trimmed)."""
    TAG_LIST = "tag_list"
    """List of tag slugs, no duplicates."""
    TEXT_LIST = "text_list"
    """List of one-line texts."""
    RECORD_LIST = "record_list"
    """List of flat ``{str: str | None}`` records."""
    SECTIONS = "sections"
    """Mapping section key → list of post ids."""
    ITEM_TYPE = "item_type"
    """The entity kind."""


_SHARED: dict[str, Kind] = {"item_type": Kind.ITEM_TYPE, "scraped_at": Kind.TIMESTAMP}

FIELD_KINDS: dict[str, dict[str, Kind]] = {
    "story": {
        "story_id": Kind.POST_ID,
        "url": Kind.URL,
        "title": Kind.TEXT,
        "subtitle": Kind.TEXT,
        "author_id": Kind.HEX_ID,
        "author_username": Kind.USERNAME,
        "author_name": Kind.TEXT,
        "publication_id": Kind.HEX_ID,
        "publication_slug": Kind.SLUG,
        "publication_name": Kind.TEXT,
        "published_at": Kind.TIMESTAMP,
        "published_at_raw": Kind.RAW,
        "updated_at": Kind.TIMESTAMP,
        "reading_time_min": Kind.MINUTES,
        "word_count": Kind.COUNT,
        "claps": Kind.COUNT,
        "claps_raw": Kind.RAW,
        "responses": Kind.COUNT,
        "responses_raw": Kind.RAW,
        "tags": Kind.TAG_LIST,
        "is_member_only": Kind.BOOL,
        "language": Kind.LANGUAGE,
        "image_url": Kind.LINK,
        "text": Kind.BODY,
        "text_is_preview": Kind.BOOL,
        "markdown": Kind.BODY,
        "in_response_to": Kind.POST_ID,
    },
    "author": {
        "author_id": Kind.HEX_ID,
        "username": Kind.USERNAME,
        "name": Kind.TEXT,
        "url": Kind.URL,
        "bio": Kind.BODY,
        "followers": Kind.COUNT,
        "followers_raw": Kind.RAW,
        "following": Kind.COUNT,
        "is_member": Kind.BOOL,
        "image_url": Kind.LINK,
    },
    "publication": {
        "publication_id": Kind.HEX_ID,
        "slug": Kind.SLUG,
        "name": Kind.TEXT,
        "url": Kind.URL,
        "domain": Kind.DOMAIN,
        "description": Kind.BODY,
        "followers": Kind.COUNT,
        "followers_raw": Kind.RAW,
    },
    "tag_page": {
        "tag": Kind.TAG,
        "name": Kind.TEXT,
        "url": Kind.URL,
        "description": Kind.BODY,
        "parent_topics": Kind.TEXT_LIST,
        "subtopics": Kind.RECORD_LIST,
        "related_tags": Kind.TAG_LIST,
        "followers": Kind.COUNT,
        "followers_raw": Kind.RAW,
        "story_count": Kind.COUNT,
        "story_count_raw": Kind.RAW,
        "sections": Kind.SECTIONS,
        "who_to_follow": Kind.RECORD_LIST,
    },
    "response": {
        "response_id": Kind.POST_ID,
        "story_id": Kind.POST_ID,
        "parent_id": Kind.POST_ID,
        "depth": Kind.COUNT,
        "url": Kind.URL,
        "author_id": Kind.HEX_ID,
        "author_username": Kind.USERNAME,
        "author_name": Kind.TEXT,
        "text": Kind.BODY,
        "text_is_preview": Kind.BOOL,
        "is_member_only": Kind.BOOL,
        "claps": Kind.COUNT,
        "published_at": Kind.TIMESTAMP,
    },
}
for _table in FIELD_KINDS.values():
    _table.update(_SHARED)

#: Fields an item must carry to be exported; a tuple means "at least one of these".
REQUIRED: dict[str, tuple[str | tuple[str, ...], ...]] = {
    "story": ("story_id", "url", "title", "scraped_at"),
    "author": (("author_id", "username"), "url", "scraped_at"),
    "publication": (("publication_id", "slug"), "url", "scraped_at"),
    "tag_page": ("tag", "url", "scraped_at"),
    "response": ("response_id", "story_id", "parent_id", "depth", "scraped_at"),
}

POST_ID_RE = re.compile(r"^[0-9a-f]{10,12}$")
HEX_ID_RE = re.compile(r"^[0-9a-f]{8,16}$")
USERNAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9\-_]{0,99}$")
DOMAIN_RE = re.compile(r"^[a-z0-9]([a-z0-9\-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9\-]*[a-z0-9])?)+$")
LANGUAGE_RE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,8})?$")
TIMESTAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def raw_companion(item_type: str, name: str) -> str | None:
    """Name of the ``*_raw`` field that keeps the source text of ``name``, if the type has one."""
    candidate = f"{name}_raw"
    return candidate if candidate in FIELD_KINDS.get(item_type, {}) else None


def record_of(item: Any) -> dict[str, Any] | None:
    """Plain dict of an item (our dataclasses fast, anything else through itemadapter);
    None when ``item`` is not an item at all."""
    if isinstance(item, ITEM_TYPES):
        return item_to_dict(item)
    if not ItemAdapter.is_item(item):
        return None
    return ItemAdapter(item).asdict()
