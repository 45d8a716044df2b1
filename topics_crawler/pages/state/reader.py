"""The normalized-state reader: entities by typename and id, field calls, typed accessors.

See the package docstring (:mod:`topics_crawler.pages.state`) for the API.
"""

from __future__ import annotations

import builtins
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from topics_crawler.pages.state.keys import split_field_key

#: References followed in a row before giving up (a cache whose refs loop).
MAX_REFERENCE_HOPS = 8
#: Depth to which a GraphQL response is walked for inline entities.
MAX_WALK_DEPTH = 64
#: Type swaps noted per page; past that a page is plainly not Medium's data any more.
MAX_NOTES = 20
_APOLLO2_REF_KEYS = frozenset({"type", "id", "generated", "typename"})
_TYPE_NAMES = {
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
}
Notes = Callable[[str], None]
_SCALAR_TYPES = frozenset({str, int, float, bool})
_LEADING_NAME_RE = re.compile(r"[A-Za-z_$][\w$]*")


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


def _unwrap_json(value: Any) -> Any:
    """Apollo-2 stores JSON scalars as ``{"type": "json", "json": …}``."""
    if isinstance(value, dict) and len(value) == 2 and value.get("type") == "json":
        return value.get("json")
    return value


@dataclass(frozen=True)
class Call:
    """One field call of a node: ``name``, parsed ``args`` and the stored ``value``."""

    name: str
    args: dict[str, Any]
    key: str
    node: Node | None
    """The value as a node (references followed), or None when it is not an object."""
    nodes: list[Node]
    """The value as a list of nodes (references followed); empty when not a list."""
    raw: Any


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
                    return _unwrap_json(value)
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


def _is_plain(value: Any) -> bool:
    if isinstance(value, list):
        return len(value) <= 10_000 and all(_is_plain_scalar(item) for item in value)
    return _is_plain_scalar(value)


def _is_plain_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


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


class Node:
    """One object of the state (an entity, a root, an inline value) with typed accessors.

    Every accessor takes a field name and finds the plain field or, failing that,
    the first call of that field whatever its arguments (:meth:`calls` gives all
    of them). References are followed. A value of another type than asked is
    returned as missing (None, ``[]``) and noted in the page's errors.
    """

    __slots__ = ("key", "raw", "state")

    def __init__(self, state: State, raw: dict[builtins.str, Any], key: builtins.str = "") -> None:
        self.state = state
        self.raw = raw
        self.key = key

    def __repr__(self) -> builtins.str:
        return f"Node({self.key or self.typename or '?'})"

    @property
    def typename(self) -> builtins.str | None:
        """``__typename`` of the object, else the typename part of its cache key."""
        typename = self.raw.get("__typename")
        if isinstance(typename, str):
            return typename
        prefix, colon, _ = self.key.partition(":")
        return prefix if colon and not prefix.startswith("$") else None

    @property
    def id(self) -> builtins.str | None:
        """The object's ``id`` (a string id; numbers are not ids)."""
        value = self.raw.get("id")
        return value if isinstance(value, str) and value else None

    def fields(self) -> builtins.list[builtins.str]:
        """The object's field keys as stored (calls keep their arguments), in order."""
        return [key for key in self.raw if isinstance(key, builtins.str)]

    def scalars(self) -> dict[builtins.str, Any]:
        """The object's plain values — strings, numbers, booleans, nulls and lists of
        them — by field key, without ``__typename`` (e.g. a paging cursor)."""
        return {
            key: value
            for key, value in self.raw.items()
            if isinstance(key, builtins.str) and key != "__typename" and _is_plain(value)
        }

    def children(self) -> Iterator[tuple[builtins.str, Node]]:
        """``(field key, node)`` for every object-valued field (references followed), in
        order; other values are skipped without a note."""
        for key in self.fields():
            value = self.state.resolve(self.raw[key])
            if isinstance(value, dict):
                yield key, Node(self.state, value, reference_key(self.raw[key]) or "")

    def has(self, name: builtins.str) -> builtins.bool:
        """True when the field (or a call of it) is present, whatever its value."""
        return self.state.first_key(self.raw, name) is not None

    def value(self, name: builtins.str) -> Any:
        """The field's value with references followed (any JSON type); None when absent."""
        raw = self.raw
        if name in raw:  # the plain field (what first_key answers first), no key split
            value = raw[name]
        else:
            key = self.state.first_key(raw, name)
            if key is None:
                return None
            value = raw[key]
        return self.state.resolve(value) if isinstance(value, dict) else value

    # --- scalars ---------------------------------------------------------------------------

    def str(self, name: builtins.str) -> builtins.str | None:
        """A string field; numbers are not strings (noted)."""
        raw = self.raw
        value = raw[name] if name in raw else self.value(name)
        if value is None or type(value) is str:  # the common cases, without a second look
            return value
        return self._typed(name, str, "a string")

    def int(self, name: builtins.str) -> builtins.int | None:
        """An integer field; a float with no fraction counts, booleans do not."""
        raw = self.raw
        value = raw.get(name)
        if type(value) is int:  # the plain field holding an int: no second look
            return value
        value = self.value(name)
        if value is None or type(value) is int:
            return value
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
            return int(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        self._wrong(name, value, "an integer")
        return None

    def float(self, name: builtins.str) -> builtins.float | None:
        """A number field (integers too), finite; booleans are not numbers."""
        value = self.value(name)
        if value is None:
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
            if math.isfinite(number):
                return number
        self._wrong(name, value, "a number")
        return None

    def bool(self, name: builtins.str) -> builtins.bool | None:
        """A boolean field."""
        return self._typed(name, bool, "a boolean")

    def scalar(
        self, name: builtins.str
    ) -> builtins.str | builtins.int | builtins.float | builtins.bool | None:
        """A string, number or boolean field (for values Medium spells either way)."""
        raw = self.raw
        value = raw.get(name)
        if type(value) in _SCALAR_TYPES:  # the plain field holding a scalar
            return value
        value = self.value(name)
        if value is None or isinstance(value, str | int | float | bool):
            return value
        self._wrong(name, value, "a scalar")
        return None

    def ref(self, name: builtins.str) -> builtins.str | None:
        """The cache key a reference field points at (``"User:abc"``), not followed."""
        key = self.state.first_key(self.raw, name)
        return reference_key(self.raw[key]) if key is not None else None

    # --- objects and lists -----------------------------------------------------------------

    def node(self, name: builtins.str) -> Node | None:
        """An object field as a node (references followed); None when absent or not an object."""
        stored = self.raw.get(name)
        if type(stored) is dict:  # the plain field: its reference, if any, read once
            value = self.state.resolve(stored)
            if type(value) is dict:
                ref = stored.get("__ref")
                key = ref if type(ref) is str else reference_key(stored)
                return Node(self.state, value, key or "")
        return self._as_node(name, self.value(name))

    def dig(self, *names: builtins.str) -> Node | None:
        """:meth:`node` along a path of fields; None at the first gap."""
        current: Node | None = self
        for name in names:
            if current is None:
                return None
            current = current.node(name)
        return current

    def list(self, name: builtins.str) -> builtins.list[Any]:
        """A list field, its elements with references followed; ``[]`` when absent."""
        value = self.value(name)
        if value is None:
            return []
        if not isinstance(value, list):
            self._wrong(name, value, "a list")
            return []
        resolve = self.state.resolve
        return [resolve(item) if isinstance(item, dict) else item for item in value]

    def _stored_list(self, name: builtins.str) -> builtins.list[Any]:
        """The list a field holds as stored: the plain field's, else the value of its call or
        the list a reference points at; ``[]`` when absent or not a list (noted)."""
        stored = self.raw.get(name)
        if type(stored) is list:
            return stored
        stored = self.value(name)  # a call key, a reference to a list, or a wrong type
        if stored is None:
            return []
        if not isinstance(stored, list):
            self._wrong(name, stored, "a list")
            return []
        return stored

    def nodes(self, name: builtins.str) -> builtins.list[Node]:
        """A list-of-objects field as nodes (references followed, other elements skipped)."""
        stored = self._stored_list(name)
        if not stored:  # e.g. most paragraphs' markups
            return []
        state = self.state
        resolve = state.resolve
        out = []
        for item in stored:
            target = resolve(item) if isinstance(item, dict) else item
            if isinstance(target, dict):
                out.append(Node(state, target, ""))
            elif target is not None:
                self._wrong(f"{name}[]", target, "an object")
        return out

    def listed(self, name: builtins.str) -> builtins.list[tuple[builtins.str | None, Node | None]]:
        """A list field's elements as ``(reference key, node or None)`` (:meth:`State.listed`):
        references whose entities the state lacks are kept by their key."""
        stored = self._stored_list(name)
        for item in stored:
            if item is not None and not isinstance(item, dict):
                self._wrong(f"{name}[]", item, "an object")
        return self.state.listed(stored)

    def strs(self, name: builtins.str) -> builtins.list[builtins.str]:
        """A list-of-strings field (other elements skipped, noted)."""
        out = []
        for item in self.list(name):
            if isinstance(item, str):
                out.append(item)
            elif item is not None:
                self._wrong(f"{name}[]", item, "a string")
        return out

    # --- one or many (JSON-LD gives a value once or as a list) -------------------------------

    def objects(self, name: builtins.str) -> builtins.list[Node]:
        """An object field or a list of objects, as nodes; other values skipped, noted."""
        value = self.value(name)
        if isinstance(value, list):
            return self.nodes(name)
        node = self._as_node(name, value)
        return [node] if node is not None else []

    def texts(self, name: builtins.str) -> builtins.list[builtins.str]:
        """A string field or a list of strings; other values skipped, noted."""
        if isinstance(self.value(name), list):
            return self.strs(name)
        text = self.str(name)
        return [text] if text is not None else []

    # --- field calls -------------------------------------------------------------------------

    def calls(self, name: builtins.str) -> builtins.list[Call]:
        """Every call of field ``name`` with its parsed arguments, in stored order."""
        out = []
        for key in self.state.call_keys(self.raw, name):
            raw = self.raw.get(key)
            value = self.state.resolve(raw)
            node = Node(self.state, value, "") if isinstance(value, dict) else None
            items = value if isinstance(value, list) else []
            nodes = [
                Node(self.state, item, "")
                for item in (self.state.resolve(i) for i in items)
                if isinstance(item, dict)
            ]
            args = split_field_key(key)[1]
            out.append(Call(name, args, key, node, nodes, raw))
        return out

    def call(
        self,
        name: builtins.str,
        where: Callable[[dict[builtins.str, Any]], builtins.bool] | None = None,
        *,
        best: Callable[[Call], Any] | None = None,
    ) -> Call | None:
        """One call of ``name``: the first whose arguments pass ``where``, or with ``best``
        the one it ranks highest (e.g. ``best=lambda c: len(c.node.nodes("posts"))``)."""
        found = [c for c in self.calls(name) if where is None or where(c.args)]
        if not found:
            return None
        if best is None:
            return found[0]
        return max(found, key=best)

    # --- internals -------------------------------------------------------------------------

    def _typed(self, name: builtins.str, expected: type, label: builtins.str) -> Any:
        value = self.value(name)
        if value is None or type(value) is expected:
            return value
        if isinstance(value, expected) and (expected is bool or not isinstance(value, bool)):
            return value
        self._wrong(name, value, label)
        return None

    def _as_node(self, name: builtins.str, value: Any) -> Node | None:
        if value is None:
            return None
        if isinstance(value, dict):
            key = self.state.first_key(self.raw, name)
            ref = reference_key(self.raw[key]) if key is not None else None
            return Node(self.state, value, ref or "")
        self._wrong(name, value, "an object")
        return None

    def _wrong(self, name: builtins.str, value: Any, expected: builtins.str) -> None:
        where = self.key or self.typename or "object"
        self.state.note(f"{where}.{name} is {kind_of(value)}, not {expected}")
