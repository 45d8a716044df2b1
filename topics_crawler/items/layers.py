"""Combining field values from several sources of one page, best source first.

A *layer* is a plain mapping of item field → value (a page's embedded state,
JSON-LD, meta tags, DOM hooks; or the item a listing card gave). Every parser
combines layers with these rules: the first non-empty value wins (:func:`pick`), a
``*_raw`` companion travels with its value (:func:`pick_paired`), on items
:func:`fill_missing`. Records of one entity from different pages or runs are merged
by the richer-value rule of :mod:`topics_crawler.items.merge` instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from topics_crawler.items.classes import Item

RAW_SUFFIX = "_raw"


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


def fill_missing(item: Item, other: Item) -> Item:
    """Copy of ``item`` with its empty fields filled from ``other`` (same type).

    :func:`pick_paired` on two items: inside a parser, what one part of the page gave
    fills the gaps of another; the page's values win. A ``*_raw`` field travels with its
    value: it is taken from ``other`` only together with that value.
    """
    if type(item) is not type(other):
        raise TypeError(f"cannot merge {other.item_type} into {item.item_type}")
    names = [f.name for f in fields(item) if f.init]
    own = {name: getattr(item, name) for name in names}
    theirs = {name: getattr(other, name) for name in names}
    return replace(item, **pick_paired(own, theirs))
