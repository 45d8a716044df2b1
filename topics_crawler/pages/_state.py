"""Embedded page data: Apollo state (2019–2025), legacy ``GLOBALS``/``obvInit`` JSON
(2015–2018), JSON-LD and meta tags.

Every JSON value is decoded with a JSON decoder starting at a known marker
(``raw_decode``), never cut out with a regex, so a ``</script>`` inside a
string or a trailing statement cannot break it.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from typing import Any

_DECODER = json.JSONDecoder()
XSSI_GUARD = "])}while(1);</x>"

APOLLO_MARKERS = ("window.__APOLLO_STATE__", "__APOLLO_STATE__")
LEGACY_MARKERS = ('window["obvInit"](', "window['obvInit'](", "var GLOBALS =", "GLOBALS =")


class StateError(ValueError):
    """Embedded JSON was found but could not be decoded."""


def decode_after(text: str, marker: str, start: int = 0) -> tuple[Any, int] | None:
    """Decode the JSON value that follows ``marker`` (after ``=``/``(`` and white space).

    Returns ``(value, end index)`` or None when the marker is absent; raises
    :class:`StateError` when the marker is there but the JSON is broken.
    """
    index = text.find(marker, start)
    if index < 0:
        return None
    pos = index + len(marker)
    length = len(text)
    while pos < length and text[pos] in " \t\r\n=(":
        pos += 1
    try:
        value, end = _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        raise StateError(f"broken JSON after {marker!r}: {exc.msg} (offset {exc.pos})") from exc
    except RecursionError as exc:
        raise StateError(f"JSON after {marker!r} is nested too deeply") from exc
    return value, end


def strip_xssi(text: str) -> str:
    """Body of a Medium JSON response without its ``])}while(1);</x>`` guard."""
    stripped = text.lstrip()
    if stripped.startswith(XSSI_GUARD):
        return stripped[len(XSSI_GUARD) :]
    if stripped.startswith("])}while(1);"):
        return stripped.split("</x>", 1)[-1]
    return text


def find_apollo_state(text: str) -> dict[str, Any] | None:
    """The ``window.__APOLLO_STATE__`` object of a 2019+ page, or None when absent."""
    for marker in APOLLO_MARKERS:
        found = decode_after(text, marker)
        if found is not None:
            value = found[0]
            if not isinstance(value, dict):
                raise StateError("__APOLLO_STATE__ is not a JSON object")
            return value
    return None


def find_legacy_state(text: str) -> dict[str, Any] | None:
    """The embedded ``{value, references, …}`` payload of a 2015–2018 page.

    2016–18 pages call ``window["obvInit"]({...})``; 2015 pages assign
    ``var GLOBALS = {...}`` whose ``embedded`` member holds the payload.
    Pages re-serialised by other tools may have the script HTML-escaped.
    """
    for candidate in _legacy_texts(text):
        for marker in LEGACY_MARKERS:
            index = candidate.find(marker)
            while index >= 0:
                found = decode_after(candidate, marker, index)
                if found is None:
                    break
                value, end = found
                if isinstance(value, dict):
                    embedded = value.get("embedded") if "GLOBALS" in marker else value
                    if isinstance(embedded, dict) and embedded:
                        return embedded
                index = candidate.find(marker, end)
    return None


def _legacy_texts(text: str) -> Iterator[str]:
    yield text
    if "&quot;" in text and "obvInit" in text:
        yield html.unescape(text)


def parse_json_payload(text: str) -> Any:
    """Decode a ``?format=json`` / GraphQL body (XSSI guard stripped); raises StateError."""
    body = strip_xssi(text).strip()
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise StateError(f"not JSON: {exc.msg} (offset {exc.pos})") from exc
    except RecursionError as exc:
        raise StateError("JSON nested too deeply") from exc


class ApolloState:
    """Normalised Apollo cache with reference resolution for both cache formats.

    * Apollo-3 (late 2020 on): ``{"__ref": "Post:<id>"}``, nested objects inline.
    * Apollo-2 (2019–2020): ``{"type": "id", "id": "User:<id>", "generated": false}``;
      nested objects live under generated keys such as ``$Post:<id>.previewContent``.
    """

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

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
            try:
                args = json.loads(key[len(prefix) : -1] or "{}")
            except json.JSONDecodeError:
                args = {}
            yield (args if isinstance(args, dict) else {}), self.resolve(value)
