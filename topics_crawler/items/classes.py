"""Items: what one crawl of Medium yields, one dataclass per entity, here taken together:
the :data:`Item` union, the classes by ``item_type`` (:data:`ITEM_CLASSES`), identity
(:data:`IDENTITY_FIELDS`, :func:`entity_keys`) and plain-dict conversions. The classes live
by entity family: :mod:`.stories` (:class:`Story`, :class:`StoryResponse`),
:mod:`.accounts` (:class:`Author`, :class:`Publication`), :mod:`.tags` (:class:`TagPage`),
:mod:`.relations` (:class:`TagEdge`, :class:`TagStory`).

Every field is declared once with :func:`~topics_crawler.items.fields.spec`: its kind
(format), whether it is required, whether it identifies the entity, its ``*_raw``
companion and its description; validation, the merge, the Parquet schema and the
dataset card read those declarations. A value that a page does not
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
from dataclasses import fields
from typing import Any

from itemadapter import ItemAdapter

from topics_crawler.items.accounts import Author, Publication
from topics_crawler.items.fields import identity_fields
from topics_crawler.items.relations import TagEdge, TagStory
from topics_crawler.items.stories import Story, StoryResponse
from topics_crawler.items.tags import TagPage

Item = Story | Author | Publication | TagPage | StoryResponse | TagEdge | TagStory
ITEM_CLASSES: dict[str, type[Item]] = {
    "story": Story,
    "author": Author,
    "publication": Publication,
    "tag_page": TagPage,
    "response": StoryResponse,
    "tag_edge": TagEdge,
    "tag_story": TagStory,
}


ITEM_TYPES = tuple(ITEM_CLASSES.values())

#: Fields that identify an entity, most specific first (declared with ``identity=`` on
#: each class): two records are the same entity when any of these (non-empty) values match.
IDENTITY_FIELDS: dict[str, tuple[str, ...]] = {
    item_type: identity_fields(item_class) for item_type, item_class in ITEM_CLASSES.items()
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


def record_of(item: Any) -> dict[str, Any] | None:
    """Plain dict of an item (our dataclasses fast, anything else through itemadapter);
    None when ``item`` is not an item at all."""
    if isinstance(item, ITEM_TYPES):
        return item_to_dict(item)
    if not ItemAdapter.is_item(item):
        return None
    return ItemAdapter(item).asdict()


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
