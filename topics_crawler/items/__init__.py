"""What a crawl yields and how records combine.

* :mod:`.classes`: the item classes taken together (:data:`Item`, ``item_type`` → class,
  identity) and record helpers; the classes by entity family: :mod:`.stories`
  (:class:`Story`, :class:`StoryResponse`), :mod:`.accounts` (:class:`Author`,
  :class:`Publication`), :mod:`.tags` (:class:`TagPage`), :mod:`.relations` the rows that
  link entities (:class:`TagEdge`, :class:`TagStory`).
* :mod:`.listing`: how a listing showed a story under a tag (``TagStory.source``).
* :mod:`.fields`: field specs, each kind's meaning declared on the field.
* :mod:`.values`: value parsers (counts, dates, text, slugs).
* :mod:`.layers`: how the sources of one page combine (first non-empty value wins).
* :mod:`.merge`: identity, and how records of one entity combine (the richer value wins).
* :mod:`.normalisers`, :mod:`.checks`: each field kind's normaliser and check.

``from topics_crawler.items import Story`` is the public way in.
"""

from topics_crawler.items.accounts import Author, Publication
from topics_crawler.items.classes import (
    IDENTITY_FIELDS,
    ITEM_CLASSES,
    ITEM_TYPES,
    Item,
    entity_keys,
    item_from_dict,
    item_to_dict,
    record_of,
)
from topics_crawler.items.layers import fill_missing
from topics_crawler.items.relations import TagEdge, TagStory
from topics_crawler.items.stories import Story, StoryResponse
from topics_crawler.items.tags import TagPage

__all__ = [
    "IDENTITY_FIELDS",
    "ITEM_CLASSES",
    "ITEM_TYPES",
    "Author",
    "Item",
    "Publication",
    "Story",
    "StoryResponse",
    "TagEdge",
    "TagPage",
    "TagStory",
    "entity_keys",
    "fill_missing",
    "item_from_dict",
    "item_to_dict",
    "record_of",
]
