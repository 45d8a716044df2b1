"""Combining field values from several sources of one page, best source first, and naming them.

A *layer* is a plain mapping of item field → value (a page's embedded state,
JSON-LD, meta tags, DOM hooks; or the item a listing card gave). Every parser
combines layers with these rules: the first non-empty value wins (:func:`pick`), a
``*_raw`` companion travels with its value (:func:`pick_paired`), on items
:func:`fill_missing`. Records of one entity from different pages or runs are merged
by the richer-value rule of :mod:`topics_crawler.items.merge` instead. A parser that names
its layers (:func:`pick_named`) also gets the row's ``data_source``: the layers that gave it
at least one value, in :data:`SOURCES` order, joined by ``+`` (``state+jsonld``, ``card``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from topics_crawler.items.classes import Item

RAW_SUFFIX = "_raw"
DATA_SOURCE = "data_source"
#: Every layer name a row's ``data_source`` may hold, in the order they are written: a page's
#: embedded state, its JSON-LD, its meta tags, its DOM, its URL; a listing card; Medium's
#: GraphQL endpoint, a ``?format=json`` payload, an RSS feed, a day archive page.
SOURCES = ("state", "jsonld", "meta", "dom", "url", "card", "graphql", "json", "feed", "archive")
#: Fields that are no value of the entity (left out when naming the layers used).
_NOT_VALUES = frozenset({DATA_SOURCE, "item_type", "scraped_at"})


def is_empty(value: Any) -> bool:
    """None, blank strings and empty containers count as "the source does not carry it"."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list | tuple | dict | set):
        return not value
    return False


def pick(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Each field takes its first non-empty value, best layer first; a field no layer
    carries is absent from the result."""
    merged: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if key not in merged and not is_empty(value):
                merged[key] = value
    return merged


def pick_paired(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`pick`, except that each ``<field>_raw`` comes from the layer that gave
    ``<field>``: an exact count from the state never keeps the ``"1.2K"`` of the HTML,
    and a raw text whose value was not taken is dropped. When no layer gave the value,
    the best layer's raw text stays: the source of a value that was refused (a count
    past ``int64``), for validation to reject with the item."""
    merged = pick(*layers)
    for raw_name in [key for key in merged if key.endswith(RAW_SUFFIX)]:
        name = raw_name.removesuffix(RAW_SUFFIX)
        source = next((layer for layer in layers if not is_empty(layer.get(name))), None)
        if source is None:
            continue  # no layer gave the value: the picked raw text is all there is
        raw = source.get(raw_name)
        if is_empty(raw):
            del merged[raw_name]
        else:
            merged[raw_name] = raw
    return merged


def join_sources(*sources: str | None) -> str | None:
    """``data_source`` values united: each layer once, in :data:`SOURCES` order."""
    names = {name for source in sources if source for name in source.split("+") if name}
    ordered = sorted(names, key=lambda n: (SOURCES.index(n) if n in SOURCES else len(SOURCES), n))
    return "+".join(ordered) or None


def pick_named(*layers: tuple[str, Mapping[str, Any]]) -> dict[str, Any]:
    """:func:`pick_paired` of ``(name, layer)`` pairs, plus ``data_source``: the names of the
    layers that gave at least one value of the result."""
    merged = pick_paired(*(layer for _, layer in layers))
    used = set()
    for key in merged:
        if key in _NOT_VALUES or key.endswith(RAW_SUFFIX):
            continue
        used.add(next(name for name, layer in layers if not is_empty(layer.get(key))))
    merged[DATA_SOURCE] = join_sources(*used)
    return merged


def fill_missing(item: Item, other: Item) -> Item:
    """Copy of ``item`` with its empty fields filled from ``other`` (same type).

    :func:`pick_paired` on two items: inside a parser, what one part of the page gave
    fills the gaps of another; the page's values win. A ``*_raw`` field travels with its
    value: it is taken from ``other`` only together with that value; ``data_source`` names
    both when ``other`` filled a gap.
    """
    if type(item) is not type(other):
        raise TypeError(f"cannot merge {other.item_type} into {item.item_type}")
    names = [f.name for f in fields(item) if f.init]
    own = {name: getattr(item, name) for name in names}
    theirs = {name: getattr(other, name) for name in names}
    merged = pick_paired(own, theirs)
    if any(is_empty(own[name]) and not is_empty(theirs[name]) for name in names):
        merged[DATA_SOURCE] = join_sources(own.get(DATA_SOURCE), theirs.get(DATA_SOURCE))
    return replace(item, **merged)
