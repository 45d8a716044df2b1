"""The Apollo cache as the tag and card parsers still read it (:class:`ApolloState`).

New code reads state through :mod:`topics_crawler.pages.state`; the decoding
functions live there and are re-exported here for the callers of this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from topics_crawler.pages.state.decode import (
    APOLLO_MARKERS,
    LEGACY_MARKERS,
    XSSI_GUARD,
    StateError,
    decode_after,
    find_apollo_state,
    find_legacy_state,
    parse_json_payload,
    strip_xssi,
)
from topics_crawler.pages.state.keys import split_field_key
from topics_crawler.pages.state.reader import Node, State

__all__ = [
    "APOLLO_MARKERS",
    "LEGACY_MARKERS",
    "XSSI_GUARD",
    "ApolloState",
    "StateError",
    "decode_after",
    "find_apollo_state",
    "find_legacy_state",
    "parse_json_payload",
    "strip_xssi",
]


class ApolloState:
    """Normalised Apollo cache with reference resolution for both cache formats.

    * Apollo-3 (late 2020 on): ``{"__ref": "Post:<id>"}``, nested objects inline.
    * Apollo-2 (2019–2020): ``{"type": "id", "id": "User:<id>", "generated": false}``;
      nested objects live under generated keys such as ``$Post:<id>.previewContent``.
    """

    def __init__(self, data: dict[str, Any], reader: State | None = None) -> None:
        self.data = data
        self._reader = reader

    @property
    def reader(self) -> State:
        """The same cache through the typed reader (:class:`~topics_crawler.pages.state.State`)."""
        if self._reader is None:
            self._reader = State.from_apollo(self.data)
        return self._reader

    def node(self, value: dict[str, Any]) -> Node:
        """``value`` (an entity of this cache) as a reader node."""
        return Node(self.reader, value, "")

    def __contains__(self, key: str) -> bool:
        return key in self.data

    def get(self, key: str) -> dict[str, Any] | None:
        """The raw entity stored under ``key`` (``"Post:c9700a7cf36d"``), or None."""
        value = self.data.get(key)
        return value if isinstance(value, dict) else None

    def resolve(self, value: Any) -> Any:
        """Follow one reference; other values come back unchanged."""
        if isinstance(value, dict):
            ref = value.get("__ref")
            if isinstance(ref, str):
                return self.data.get(ref)
            if value.get("type") == "id" and isinstance(value.get("id"), str):
                return self.data.get(value["id"])
        return value

    def field(self, entity: dict[str, Any] | None, name: str) -> Any:
        """Field ``name`` of ``entity`` with references followed.

        Matches field calls too: ``field(post, "content")`` finds
        ``content({"postMeteringOptions": …})``. Lists are resolved item by item.
        """
        if not isinstance(entity, dict):
            return None
        if name in entity:
            raw = entity[name]
        else:
            prefix = name + "("
            raw = next((v for k, v in entity.items() if k.startswith(prefix)), None)
        if isinstance(raw, list):
            return [self.resolve(item) for item in raw]
        return self.resolve(raw)

    def path(self, entity: dict[str, Any] | None, *names: str) -> Any:
        """Walk ``names`` from ``entity``, resolving references at each step."""
        current: Any = entity
        for name in names:
            current = self.field(current, name)
            if current is None:
                return None
        return current

    def entities(self, typename: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(key, entity)`` for every top-level entity of ``typename`` in cache order."""
        prefix = typename + ":"
        for key, value in self.data.items():
            if key.startswith(prefix) and isinstance(value, dict):
                yield key, value

    def root_field(self, name: str) -> Any:
        """A ``ROOT_QUERY`` field (with or without call arguments), references followed."""
        return self.field(self.get("ROOT_QUERY"), name)

    def root_calls(self, name: str) -> Iterator[tuple[dict[str, Any], Any]]:
        """``(arguments, value)`` for every ``ROOT_QUERY`` call ``name({...})``."""
        root = self.get("ROOT_QUERY") or {}
        prefix = name + "("
        for key, value in root.items():
            if not key.startswith(prefix):
                continue
            yield split_field_key(key)[1], self.resolve(value)
