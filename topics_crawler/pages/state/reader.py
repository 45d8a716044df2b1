"""The normalized-state reader: entities by typename and id, references followed, the
keys of each field's calls; every object is read through a
:class:`~topics_crawler.pages.state.node.Node`.

See the package docstring (:mod:`topics_crawler.pages.state`) for the API.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from topics_crawler.pages.state.node import Node
from topics_crawler.pages.state.values import reference_key, unwrap_json

#: References followed in a row before giving up (a cache whose refs loop).
MAX_REFERENCE_HOPS = 8
#: Depth to which a GraphQL response is walked for inline entities.
MAX_WALK_DEPTH = 64
#: Type swaps noted per page; past that a page is plainly not Medium's data any more.
MAX_NOTES = 20
Notes = Callable[[str], None]
_LEADING_NAME_RE = re.compile(r"[A-Za-z_$][\w$]*")


class State:
    """One page's normalized data, read through :class:`Node` accessors.

    ``notes`` receives a sentence for each value of the wrong type (usually
    :meth:`Document.error <topics_crawler.pages.Document.error>`).
    """

    def __init__(
        self,
        cache: dict[str, Any] | None = None,
        *,
        roots: Iterable[dict[str, Any]] = (),
        references: dict[str, Any] | None = None,
        notes: Notes | None = None,
        source: str = "state",
    ) -> None:
        self.cache: dict[str, Any] = cache if isinstance(cache, dict) else {}
        self.source = source
        self._notes = notes
        self._noted = 0
        self._by_type: dict[str, list[str]] = {}
        self._by_id: dict[tuple[str, str], str] = {}
        self._calls: dict[int, tuple[dict[str, Any], dict[str, list[str]]]] = {}
        self._indexed = False
        self._inline: dict[tuple[str, str], dict[str, Any]] = {}
        self._inline_order: dict[str, list[str]] = {}
        root_list = [r for r in roots if isinstance(r, dict)]
        if references is not None:
            self._index_references(references)
        else:
            for root in root_list:
                self._index_inline(root)
        root_query = self.cache.get("ROOT_QUERY")
        if isinstance(root_query, dict):
            root_list.insert(0, root_query)
        self._root_keys = ["ROOT_QUERY"] if isinstance(root_query, dict) else []
        self._root_keys += [""] * (len(root_list) - len(self._root_keys))
        #: The roots' raw objects; :attr:`roots` makes their nodes on each use, so a state
        #: holds no node of itself (no reference cycle: a page's state is freed with it).
        self._roots = root_list

    # --- construction --------------------------------------------------------------------

    @classmethod
    def from_apollo(cls, cache: Any, notes: Notes | None = None) -> State:
        """An Apollo-2 or Apollo-3 ``__APOLLO_STATE__`` cache."""
        return cls(cache if isinstance(cache, dict) else {}, notes=notes, source="Apollo state")

    @classmethod
    def from_payload(cls, payload: Any, notes: Notes | None = None) -> State:
        """A legacy ``{value, references, …}`` payload (``obvInit``, ``GLOBALS.embedded``,
        ``?format=json``'s ``payload``): the payload is the root, ``references`` the entities."""
        payload = payload if isinstance(payload, dict) else {}
        references = payload.get("references")
        return cls(
            roots=[payload],
            references=references if isinstance(references, dict) else {},
            notes=notes,
            source="embedded payload",
        )

    @classmethod
    def from_response(cls, body: Any, notes: Notes | None = None) -> State:
        """A GraphQL response body: one ``{data, errors}`` object or a batch array of them.
        Each ``data`` is a root; objects carrying ``__typename`` and ``id`` are entities."""
        results = body if isinstance(body, list) else [body]
        roots = []
        for result in results:
            data = result.get("data") if isinstance(result, dict) else None
            if isinstance(data, dict):
                roots.append(data)
        return cls(roots=roots, notes=notes, source="GraphQL response")

    # --- notes -----------------------------------------------------------------------------

    def note(self, sentence: str) -> None:
        """Record a problem with the data (a value of the wrong type)."""
        if self._notes is None or self._noted >= MAX_NOTES:
            return
        self._noted += 1
        self._notes(f"{self.source}: {sentence}")

    # --- entities --------------------------------------------------------------------------

    @property
    def roots(self) -> list[Node]:
        """Every root: ``ROOT_QUERY`` first, then the payload or each ``data``."""
        return [Node(self, raw, key) for raw, key in zip(self._roots, self._root_keys, strict=True)]

    @property
    def root(self) -> Node:
        """The first root (``ROOT_QUERY``, the payload, the first ``data``); empty when none."""
        if self._roots:
            return Node(self, self._roots[0], self._root_keys[0])
        return Node(self, {}, "")

    def entity(self, typename: str, entity_id: str | None) -> Node | None:
        """The entity ``typename`` with ``entity_id`` (as stored, or lowercased), or None."""
        if not isinstance(entity_id, str) or not entity_id:
            return None
        for candidate in (entity_id, entity_id.lower()):
            direct = self.at(f"{typename}:{candidate}")
            if direct is not None:
                return direct
        self._index_cache()
        for candidate in (entity_id, entity_id.lower()):
            key = self._by_id.get((typename, candidate))
            if key is not None:
                return self.at(key)
            inline = self._inline.get((typename, candidate))
            if inline is not None:
                return Node(self, inline, f"{typename}:{candidate}")
        return None

    def entities(self, *typenames: str) -> Iterator[Node]:
        """Every entity of the given typenames, in the data's order, typename by typename."""
        self._index_cache()
        for typename in typenames:
            for key in self._by_type.get(typename, ()):
                node = self.at(key)
                if node is not None:
                    yield node
            for entity_id in self._inline_order.get(typename, ()):
                yield Node(self, self._inline[(typename, entity_id)], f"{typename}:{entity_id}")

    def at(self, key: str) -> Node | None:
        """The cache object stored under ``key`` (``"Post:abc"``, ``"$Post:abc.x"``), or None."""
        value = self.cache.get(key)
        return Node(self, value, key) if isinstance(value, dict) else None

    def resolve(self, value: Any) -> Any:
        """Follow references (both forms, bounded hops) and unwrap Apollo-2 JSON scalars."""
        cache = self.cache
        for _ in range(MAX_REFERENCE_HOPS):
            if not isinstance(value, dict):  # most values: scalars and lists
                return value
            key = value.get("__ref")  # Apollo-3, the common form (else as reference_key)
            if key is None and "type" not in value:
                return value  # an inline object (legacy paragraphs…): neither reference form
            if not isinstance(key, str):
                key = reference_key(value)
                if key is None:
                    return unwrap_json(value)
            target = cache.get(key)
            if target is None and ":" in key:
                typename, _, entity_id = key.partition(":")
                target = self._inline.get((typename, entity_id))
            value = target
        return None

    def listed(self, value: Any) -> list[tuple[str | None, Node | None]]:
        """Each element of a stored list as ``(reference key, node)``: the key its reference
        names (None for an inline object) and the object it resolves to — None for a
        reference the state holds no entity for (a trimmed cache lists ``Tag:<slug>`` refs
        whose entities are absent: the key still names the thing). Not a list: ``[]``."""
        if not isinstance(value, list):
            return []
        out: list[tuple[str | None, Node | None]] = []
        for item in value:
            key = reference_key(item)
            target = self.resolve(item) if isinstance(item, dict) else item
            node = Node(self, target, "") if isinstance(target, dict) else None  # as nodes()
            if key is not None or node is not None:
                out.append((key, node))
        return out

    # --- field calls ------------------------------------------------------------------------

    def call_keys(self, raw: dict[str, Any], name: str) -> list[str]:
        """Keys of ``raw`` that are field ``name`` (plain or called with arguments), in
        stored order. Each object's keys are split once, on the first lookup."""
        entry = self._calls.get(id(raw))
        if entry is None or entry[0] is not raw:
            entry = (raw, _index_keys(raw))
            self._calls[id(raw)] = entry
        return entry[1].get(name, [])

    def first_key(self, raw: dict[str, Any], name: str) -> str | None:
        """The key a read of field ``name`` uses: the plain field, else its first call."""
        if name in raw:
            return name
        keys = self.call_keys(raw, name)
        return keys[0] if keys else None

    # --- indexing ---------------------------------------------------------------------------

    def _index_cache(self) -> None:
        """Entities of the cache by typename and id (once, on the first lookup needing it)."""
        if self._indexed:
            return
        self._indexed = True
        for key, value in self.cache.items():
            if not isinstance(value, dict) or not isinstance(key, str) or key.startswith("$"):
                continue
            typename = value.get("__typename")
            prefix, colon, rest = key.partition(":")
            if not isinstance(typename, str):
                if not colon:
                    continue
                typename = prefix
            entity_id = value.get("id")
            if not isinstance(entity_id, str):
                entity_id = rest if colon else key
            self._by_type.setdefault(typename, []).append(key)
            self._by_id.setdefault((typename, entity_id), key)
            if colon and rest != entity_id:
                self._by_id.setdefault((typename, rest), key)

    def _index_references(self, references: dict[str, Any]) -> None:
        for typename, table in references.items():
            if not isinstance(table, dict) or not isinstance(typename, str):
                continue
            for entity_id, value in table.items():
                if isinstance(value, dict) and isinstance(entity_id, str):
                    self._add_inline(typename, entity_id, value)

    def _index_inline(self, root: dict[str, Any]) -> None:
        """Every object with ``__typename`` and ``id`` under ``root`` (iterative, bounded)."""
        stack: list[tuple[Any, int]] = [(root, 0)]
        while stack:
            value, depth = stack.pop()
            if depth > MAX_WALK_DEPTH:
                continue
            if isinstance(value, dict):
                typename, entity_id = value.get("__typename"), value.get("id")
                if isinstance(typename, str) and isinstance(entity_id, str) and entity_id:
                    self._add_inline(typename, entity_id, value)
                children: Iterable[Any] = value.values()
            elif isinstance(value, list):
                children = value
            else:
                continue
            stack.extend((child, depth + 1) for child in reversed(list(children)))

    def _add_inline(self, typename: str, entity_id: str, value: dict[str, Any]) -> None:
        known = self._inline.get((typename, entity_id))
        if known is None:
            self._inline[(typename, entity_id)] = value
            self._inline_order.setdefault(typename, []).append(entity_id)
        elif known is not value:
            merged = {**value, **known}
            self._inline[(typename, entity_id)] = merged


def _index_keys(raw: dict[str, Any]) -> dict[str, list[str]]:
    """Field name → keys of that field in ``raw``: a key with arguments is indexed under
    the name it starts with, readable arguments or not (they are parsed only when a
    :meth:`Node.calls` asks for them)."""
    index: dict[str, list[str]] = {}
    for key in raw:
        if not isinstance(key, str):
            continue
        if _has_arguments(key):
            match = _LEADING_NAME_RE.match(key)
            index.setdefault(match.group() if match else key, []).append(key)
        else:
            index.setdefault(key, []).append(key)
    return index


def _has_arguments(key: str) -> bool:
    return "(" in key or ":" in key
