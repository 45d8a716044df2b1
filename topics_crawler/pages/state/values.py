"""What a value stored in Medium's normalized state is: a reference (in either Apollo
form), an Apollo-2 JSON scalar, a plain value, and its kind as notes name it.

The :class:`~topics_crawler.pages.state.reader.State` and its
:class:`~topics_crawler.pages.state.node.Node` objects read every value through these.
"""

from __future__ import annotations

from typing import Any

_APOLLO2_REF_KEYS = frozenset({"type", "id", "generated", "typename"})
_TYPE_NAMES = {
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
}


def kind_of(value: Any) -> str:
    """``a string``, ``a list``, ``null``… for notes."""
    if value is None:
        return "null"
    return _TYPE_NAMES.get(type(value), f"a {type(value).__name__}")


def reference_key(value: Any) -> str | None:
    """The cache key a reference points at, in either form, else None.

    Apollo-3: ``{"__ref": "User:abc"}``; Apollo-2: ``{"type": "id", "id": "User:abc",
    "generated": false, "typename": "User"}``.
    """
    if not isinstance(value, dict):
        return None
    ref = value.get("__ref")
    if isinstance(ref, str):
        return ref
    entity_id = value.get("id")
    is_apollo2 = value.get("type") == "id" and value.keys() <= _APOLLO2_REF_KEYS
    return entity_id if is_apollo2 and isinstance(entity_id, str) else None


def unwrap_json(value: Any) -> Any:
    """Apollo-2 stores JSON scalars as ``{"type": "json", "json": …}``."""
    if isinstance(value, dict) and len(value) == 2 and value.get("type") == "json":
        return value.get("json")
    return value


def is_plain(value: Any) -> bool:
    if isinstance(value, list):
        return len(value) <= 10_000 and all(_is_plain_scalar(item) for item in value)
    return _is_plain_scalar(value)


def _is_plain_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)
