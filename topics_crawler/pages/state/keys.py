"""Field keys of Medium's normalized cache split into a field name and its arguments.

Apollo stores a field called with arguments under one string key; the captures
show three spellings of the same thing, and the argument values vary from page
to page (a ``mode``, a ``limit``, extra flags)::

    tagFromSlug({"tagSlug":"programming"})          Apollo-2/3, JSON arguments
    homepagePostsConnection:{"paging":{"limit":10}} Apollo-3 keyArgs, JSON arguments
    tagFeed:(mode:HOT,tagSlug:programming,limit:10) Apollo-3 keyArgs, ``k:v`` arguments
    tagFeed:popularStories(mode:TOP_WEEK,limit:5)   the same under an alias (2026)

:func:`split_field_key` turns each into ``("tagFeed", {"mode": "HOT", …})`` (an alias
is dropped: the field and its arguments say what the value is).
Arguments that cannot be read give ``{}`` (the name still matches); nothing
here raises.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Nesting allowed inside an argument list; deeper keys are read as having no arguments.
MAX_ARGUMENT_DEPTH = 16
_NAME_RE = re.compile(r"[A-Za-z_$][\w$]*")
_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\Z")
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}


def split_field_key(key: str) -> tuple[str, dict[str, Any]]:
    """``(field name, arguments)`` of a cache key; a plain key has no arguments."""
    match = _NAME_RE.match(key)
    if match is None:
        return key, {}
    name = match.group()
    rest = key[match.end() :]
    if not rest:
        return name, {}
    if rest.startswith("(") and rest.endswith(")"):
        return name, _json_arguments(rest[1:-1])
    if rest.startswith(":"):
        body = rest[1:].strip()
        alias = _NAME_RE.match(body)
        if alias is not None:  # ``name:alias(…)`` or a bare ``name:alias``
            body = body[alias.end() :]
            if not body:
                return name, {}
            if body.startswith("(") and body.endswith(")"):
                inner = body[1:-1].strip()
                return name, _json_arguments(inner) if inner.startswith("{") else _paren_arguments(
                    body
                )
            return key, {}
        if body.startswith("{"):
            return name, _json_arguments(body)
        if body.startswith("(") and body.endswith(")"):
            return name, _paren_arguments(body)
    return key, {}


def _json_arguments(text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    if _too_deep(text):
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _too_deep(text: str) -> bool:
    if sum(text.count(bracket) for bracket in "{[(") <= MAX_ARGUMENT_DEPTH:
        return False  # too few brackets to nest that deep (no walk of every character)
    depth = 0
    for char in text:
        if char in "{[(":
            depth += 1
            if depth > MAX_ARGUMENT_DEPTH:
                return True
        elif char in "}])":
            depth -= 1
    return False


def _paren_arguments(text: str) -> dict[str, Any]:
    """``(k:v,k2:(a:1),k3:[x,y])`` → dict; unreadable text gives ``{}``."""
    if _too_deep(text):
        return {}
    reader = _ParenReader(text)
    try:
        value = reader.value()
    except ValueError:
        return {}
    if reader.pos != len(text) or not isinstance(value, dict):
        return {}
    return value


class _ParenReader:
    """A tiny reader for Apollo's ``keyArgs`` text: ``(k:v,…)`` objects, ``[…]`` lists,
    bare words (numbers, ``true``/``false``/``null``, else strings) and JSON strings."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def value(self) -> Any:
        char = self.text[self.pos : self.pos + 1]
        if char == "(":
            return self._object()
        if char == "[":
            return self._list()
        if char == '"':
            return self._string()
        return self._word()

    def _object(self) -> dict[str, Any]:
        self.pos += 1
        out: dict[str, Any] = {}
        while self._peek() != ")":
            key = self._until(":")
            self.pos += 1
            out[key.strip()] = self.value()
            if self._peek() == ",":
                self.pos += 1
        self.pos += 1
        return out

    def _list(self) -> list[Any]:
        self.pos += 1
        out: list[Any] = []
        while self._peek() != "]":
            out.append(self.value())
            if self._peek() == ",":
                self.pos += 1
        self.pos += 1
        return out

    def _string(self) -> str:
        try:
            value, end = json.JSONDecoder().raw_decode(self.text, self.pos)
        except ValueError as exc:
            raise ValueError("bad string") from exc
        self.pos = end
        return str(value)

    def _word(self) -> Any:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in ",)]":
            self.pos += 1
        word = self.text[start : self.pos].strip()
        if word in _LITERALS:
            return _LITERALS[word]
        if _NUMBER_RE.match(word):
            number = float(word)
            return int(number) if number.is_integer() and "." not in word else number
        return word

    def _peek(self) -> str:
        if self.pos >= len(self.text):
            raise ValueError("unexpected end")
        return self.text[self.pos]

    def _until(self, stop: str) -> str:
        end = self.text.find(stop, self.pos)
        if end < 0:
            raise ValueError(f"missing {stop!r}")
        word = self.text[self.pos : end]
        self.pos = end
        return word
