"""One identity and one merge rule for every record of an entity.

The rule is applied where records of one entity meet:

* the spider fills an entity's page item with what the card that linked to it knew
  (:func:`merge_items`, card first);
* the dedupe pipeline keeps one record per entity of the run, each arrival merged in
  (:func:`merge_records`), and hands that record on: the last record it passes for an
  entity holds all the run saw (:mod:`topics_crawler.pipelines.dedupe`);
* the dataset commit merges that record with the entity's stored row:
  ``merge_records(item_type, stored_row, run_record)``.

The public functions (:func:`identity`, :func:`link_identity`, :func:`merge_records`,
:func:`merge_items`, :func:`richness`, :func:`content_hash`) keep their signatures.

**Identity** (:func:`identity`, :func:`link_identity`): the keys declared with
``identity=`` on the item fields (:func:`topics_crawler.items.entity_keys`:
``story:<id>``, ``author:<id>``, ``author:@<username>``, ``publication:/<slug>``…,
trimmed and lowercased). Two records are one entity when any key matches. The spider
puts the key of each entity request in its meta (:data:`ENTITY_KEY_META`), and the
request fingerprint of such a request is that key's
(:class:`topics_crawler.scheduling.fingerprint.CanonicalUrlFingerprinter`): one request per
entity, whatever URL alias a link used, in every dupefilter, journal and seen-set.

Content hashes (:func:`content_hash`) tell the dedupe pipeline what changed.

**Richness of a record** (:func:`richness`): for stories, first whether it carries
the full body (``text`` set and ``text_is_preview`` not True), then whether it
carries any body; for every type, then the number of non-empty data fields
(``item_type``, ``scraped_at`` and ``*_raw`` companions not counted). A story
page beats a listing card; an author page beats a byline.

**Merge of two records, field by field** (:func:`merge_records`). Call the
richer record *R* and the other *O*; at equal richness the later arrival is *R*
(it is the fresher observation):

1. a non-empty value beats an empty one (None, blank, empty list / mapping);
2. a text that extends the other's text (the other, minus a trailing ``…``, is
   its prefix) beats it: a full subtitle or body beats its preview;
3. a timestamp known exactly beats one known only relatively or to the day
   (its ``*_raw`` companion is set, e.g. ``"1d ago"``);
4. otherwise *R*'s value wins, counts included (a page beats a card; between
   equals, the later arrival's fresher count).

A ``*_raw`` companion travels with its value, and so do ``text_is_preview``, ``access``
and ``preview_share`` with ``text``. ``data_source`` is the richer record's, or both
records' layers when the other one gave a value. A timestamp declared with ``keep=``
(:func:`~topics_crawler.items.fields.kept`) is the earlier or the later of the two,
whichever record is richer: ``scraped_at`` the later (``keep="latest"``), as a
``tag_stories`` row's ``last_seen``; its ``first_seen`` the earlier (``keep="earliest"``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from topics_crawler.items import ITEM_CLASSES, Item, Story, entity_keys, item_to_dict
from topics_crawler.items.fields import Kind, kept, kinds, raw_companion
from topics_crawler.items.layers import DATA_SOURCE, is_empty, join_sources

_NOT_DATA = frozenset({"item_type", "scraped_at", DATA_SOURCE})
#: A story's fields that describe its ``text`` and move with it.
_TRAVEL_WITH_TEXT = frozenset({"text_is_preview", "access", "preview_share"})
#: Request meta key holding the identity key of the entity a request fetches.
ENTITY_KEY_META = "entity_key"
#: Link kinds (:class:`topics_crawler.urls.MediumLink`) → the item type they lead to.
_LINK_ITEM_TYPES = {"story": "story", "author": "author", "publication": "publication"}
_LINK_ITEM_TYPES["tag"] = "tag_page"


def identity(item_type: str, record: Mapping[str, Any]) -> list[str]:
    """The keys an entity is known under, most specific first (may be empty)."""
    return entity_keys(item_type, record)


def link_identity(kind: str, key: str) -> str | None:
    """The identity key of the entity a link leads to (its link key: post id, username,
    publication slug or custom domain, tag slug); None for other links."""
    item_type = _LINK_ITEM_TYPES.get(kind)
    if item_type is None or not key:
        return None
    field = {"story": "story_id", "author": "username", "tag_page": "tag"}.get(item_type)
    if field is None:  # a publication link names its custom domain or its slug
        field = "domain" if "." in key else "slug"
    keys = entity_keys(item_type, {field: key})
    return keys[0] if keys else None


def merge_items(earlier: Item, later: Item) -> Item:
    """:func:`merge_records` of two items of one entity, as an item of the same class."""
    if type(earlier) is not type(later):
        raise TypeError(f"cannot merge {later.item_type} into {earlier.item_type}")
    merged = merge_records(later.item_type, item_to_dict(earlier), item_to_dict(later))
    merged.pop("item_type", None)
    return replace(later, **merged)


_PREVIEW_ELLIPSES = ("…", "...")


#: Fields a crawl fills only when asked (``images``): left out of the content while empty,
#: so a run without them does not count every entity as changed.
_ON_REQUEST = frozenset({"images"})


#: What is said about a record, not in it: when it was read and which layers gave it.
_NOT_CONTENT = frozenset({"scraped_at", DATA_SOURCE})


def content_of(record: dict[str, Any]) -> dict[str, Any]:
    """The record without ``scraped_at`` and ``data_source`` (nor an empty field of
    :data:`_ON_REQUEST`): what "changed" and the content hash look at."""
    return {
        name: value
        for name, value in record.items()
        if name not in _NOT_CONTENT and not (name in _ON_REQUEST and is_empty(value))
    }


def content_hash(record: dict[str, Any]) -> str:
    """16 hex digits (BLAKE2b-64) of the canonical JSON of :func:`content_of` (a lone
    surrogate, which UTF-8 cannot encode, is hashed as its code point: never an error)."""
    text = json.dumps(content_of(record), sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def richness(item_type: str, record: dict[str, Any]) -> tuple[int, int, int]:
    """``(has full body, has body, non-empty data fields)``; compare as a tuple."""
    has_body = item_type == "story" and not is_empty(record.get("text"))
    full_body = has_body and record.get("text_is_preview") is not True
    filled = sum(
        1
        for name, kind in kinds(ITEM_CLASSES[item_type]).items()
        if name not in _NOT_DATA and kind is not Kind.RAW and not is_empty(record.get(name))
    )
    return int(full_body), int(has_body), filled


def merge_records(item_type: str, earlier: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """One record of the entity, the richer value of each field winning (see module doc)."""
    later_is_richer = richness(item_type, later) >= richness(item_type, earlier)
    richer, other = (later, earlier) if later_is_richer else (earlier, later)
    merged = dict(richer)
    item_class = ITEM_CLASSES[item_type]
    keep = kept(item_class)
    took_other = False
    for name, kind in kinds(item_class).items():
        if name in _NOT_DATA or kind is Kind.RAW or name in _TRAVEL_WITH_TEXT or name in keep:
            continue
        if _other_wins(item_class, name, kind, richer, other):
            took_other = True
            for moving in _travelling_with(item_class, name):
                merged[moving] = other.get(moving)
    for name, how in keep.items():
        first, second = earlier.get(name), later.get(name)
        merged[name] = _either(first, second, max if how == "latest" else min)
    if took_other:  # the row's values came from both: it names the layers of both
        merged[DATA_SOURCE] = join_sources(richer.get(DATA_SOURCE), other.get(DATA_SOURCE))
    return merged


def _other_wins(
    item_class: type, name: str, kind: Kind, richer: dict[str, Any], other: dict[str, Any]
) -> bool:
    mine, theirs = richer.get(name), other.get(name)
    if is_empty(theirs):
        return False
    if is_empty(mine):
        return True
    if kind in (Kind.TEXT, Kind.BODY):
        return extends(theirs, mine)
    if kind is Kind.TIMESTAMP:
        companion = raw_companion(item_class, name)
        if companion is None:
            return False
        return not is_empty(richer.get(companion)) and is_empty(other.get(companion))
    return False


def _travelling_with(item_class: type, name: str) -> list[str]:
    """The field and what moves with it: its ``*_raw`` companion; with a story's ``text``,
    ``text_is_preview``, ``access`` and ``preview_share``."""
    moving = [name]
    companion = raw_companion(item_class, name)
    if companion:
        moving.append(companion)
    if item_class is Story and name == "text":
        moving += sorted(_TRAVEL_WITH_TEXT)
    return moving


def extends(longer: Any, shorter: Any) -> bool:
    """True when ``longer`` is a longer text starting with ``shorter`` (minus a trailing ``…``)."""
    if not isinstance(longer, str) or not isinstance(shorter, str) or len(longer) <= len(shorter):
        return False
    stem = shorter.rstrip()
    for ellipsis in _PREVIEW_ELLIPSES:
        stem = stem.removesuffix(ellipsis)
    return longer.startswith(stem.rstrip())


def _either(first: Any, second: Any, pick: Callable[[str, str], str]) -> Any:
    """``pick`` (``max``: the later, ``min``: the earlier) of two ISO timestamps (they sort as
    strings); the set one if only one is."""
    if not isinstance(first, str):
        return second
    if not isinstance(second, str):
        return first
    return pick(first, second)
