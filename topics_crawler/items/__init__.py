"""What a crawl yields and how records combine.

* :mod:`.classes`: the item classes (:class:`Story`, :class:`Author`, ...) and record helpers.
* :mod:`.fields`: field specs, each kind's meaning declared on the field.
* :mod:`.values`: value parsers (counts, dates, text, slugs).
* :mod:`.merge`, :mod:`.layers`: how records of one entity combine.

``from topics_crawler.items import Story`` is the public way in.
"""

from topics_crawler.items.classes import (
    IDENTITY_FIELDS,
    ITEM_CLASSES,
    ITEM_TYPES,
    Author,
    Item,
    ItemType,
    Publication,
    Story,
    StoryResponse,
    TagEdge,
    TagPage,
    entity_keys,
    fill_missing,
    item_from_dict,
    item_to_dict,
    record_of,
)

__all__ = [
    "IDENTITY_FIELDS",
    "ITEM_CLASSES",
    "ITEM_TYPES",
    "Author",
    "Item",
    "ItemType",
    "Publication",
    "Story",
    "StoryResponse",
    "TagEdge",
    "TagPage",
    "entity_keys",
    "fill_missing",
    "item_from_dict",
    "item_to_dict",
    "record_of",
]
