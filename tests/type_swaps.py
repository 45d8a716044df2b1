"""Answers with one value swapped for another type, for the strict readers' tests."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

#: What a value is swapped for: null, a boolean, numbers, a string, an empty list/object,
#: and a reference-shaped object (the reader follows references; here it leads nowhere).
SWAPS: tuple[Any, ...] = (None, True, 7, 2.5, "x", [], {}, {"__ref": "Post:nowhere"})


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, child in items:
        yield (*path, key)
        yield from _paths(child, (*path, key))


def type_swapped(answer: Any, limit: int) -> Iterator[bytes]:
    """The answer with one value swapped, for every value down to the ``limit``-th path."""
    for path in list(_paths(answer))[:limit]:
        for swap in SWAPS:
            copied = copy.deepcopy(answer)
            target = copied
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = swap
            yield json.dumps(copied).encode()
