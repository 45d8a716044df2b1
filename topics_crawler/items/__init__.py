"""What a crawl yields and how records combine.

* :mod:`.classes`: the item classes (:class:`Story`, :class:`Author`, ...) and record helpers;
  :mod:`.relations` the rows that link entities (:class:`TagEdge`, :class:`TagStory`).
* :mod:`.listing`: how a listing showed a story under a tag (``TagStory.source``).
* :mod:`.fields`: field specs, each kind's meaning declared on the field.
* :mod:`.values`: value parsers (counts, dates, text, slugs).
* :mod:`.layers`: how the sources of one page combine (first non-empty value wins).
* :mod:`.merge`: identity, and how records of one entity combine (the richer value wins).
* :mod:`.normalisers`, :mod:`.checks`: each field kind's normaliser and check.

``from topics_crawler.items import Story`` is the public way in.
"""

from topics_crawler.items.classes import (
    IDENTITY_FIELDS,
    ITEM_CLASSES,
    ITEM_TYPES,
    Author,
    Item,
    Publication,
    Story,
    StoryResponse,
    TagEdge,
    TagPage,
    TagStory,
    entity_keys,
    item_from_dict,
    item_to_dict,
    record_of,
)
from topics_crawler.items.layers import fill_missing

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
