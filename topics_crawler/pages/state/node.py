"""The typed accessors of one object of the normalized state: :class:`Node`, and the
:class:`Call` of a field with arguments.

A node reads its state through :class:`NodeState`, which
:class:`~topics_crawler.pages.state.reader.State` fills (the reader makes the nodes).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from topics_crawler.pages.state.keys import split_field_key
from topics_crawler.pages.state.values import is_plain, kind_of, reference_key

_SCALAR_TYPES = frozenset({str, int, float, bool})


class NodeState(Protocol):
    """What a :class:`Node` reads through: the
    :class:`~topics_crawler.pages.state.reader.State` it belongs to."""

    def note(self, sentence: str) -> None: ...

    def resolve(self, value: Any) -> Any: ...

    def listed(self, value: Any) -> list[tuple[str | None, Node | None]]: ...

    def call_keys(self, raw: dict[str, Any], name: str) -> list[str]: ...

    def first_key(self, raw: dict[str, Any], name: str) -> str | None: ...


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


class Node:
    """One object of the state (an entity, a root, an inline value) with typed accessors.

    Every accessor takes a field name and finds the plain field or, failing that,
    the first call of that field whatever its arguments (:meth:`calls` gives all
    of them). References are followed. A value of another type than asked is
    returned as missing (None, ``[]``) and noted in the page's errors.
    """

    __slots__ = ("key", "raw", "state")

    def __init__(
        self, state: NodeState, raw: dict[builtins.str, Any], key: builtins.str = ""
    ) -> None:
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
            if isinstance(key, builtins.str) and key != "__typename" and is_plain(value)
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
        """A list field's elements as ``(reference key, node or None)``
        (:meth:`~topics_crawler.pages.state.reader.State.listed`): references whose
        entities the state lacks are kept by their key."""
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
