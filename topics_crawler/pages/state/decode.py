"""Finding and decoding the JSON a page embeds: Apollo state (2019–2025), legacy
``GLOBALS``/``obvInit`` JSON (2015–2018) and ``?format=json``/GraphQL bodies.

Every JSON value is decoded with a JSON decoder starting at a known marker
(``raw_decode``), never cut out with a regex, so a ``</script>`` inside a
string or a trailing statement cannot break it. JSON nested too deeply for the
decoder is a :class:`StateError`, like broken JSON.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Iterator
from typing import Any

import orjson

_DECODER = json.JSONDecoder()
XSSI_GUARD = "])}while(1);</x>"

APOLLO_MARKERS = ("window.__APOLLO_STATE__", "__APOLLO_STATE__")
LEGACY_MARKERS = ('window["obvInit"](', "window['obvInit'](", "var GLOBALS =", "GLOBALS =")


class StateError(ValueError):
    """Embedded JSON was found but could not be decoded."""


def decode_after(
    text: str, marker: str, start: int = 0, origin: int | Callable[[], int] = 0
) -> tuple[Any, int] | None:
    """Decode the JSON value that follows ``marker`` (after ``=``/``(`` and white space).

    Returns ``(value, end index)`` or None when the marker is absent; raises
    :class:`StateError` when the marker is there but the JSON is broken, with the offset
    in the page (``origin``: where ``text`` starts in the page, or a function that says).
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
        where = (origin() if callable(origin) else origin) + exc.pos
        raise StateError(f"broken JSON after {marker!r}: {exc.msg} (offset {where})") from exc
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


Located = tuple[str, int | Callable[[], int]]


def _from_marker(text: str | None, body: bytes | None, marker: str) -> Located | None:
    """``(text from the first marker on, its offset in the page)``, or None when the
    marker is absent. With the page's clean UTF-8 ``body`` the marker is looked for in the
    bytes (an ASCII search, fast whatever the page's characters) and only the text after
    it is decoded; the offset, in characters, is then worked out only if asked for."""
    if body is None:
        text = text or ""
        index = text.find(marker)
        return (text[index:], index) if index >= 0 else None
    index = body.find(marker.encode("ascii"))
    if index < 0:
        return None
    segment = body[index:].decode("utf-8", errors="replace")
    return segment, lambda: len(body[:index].decode("utf-8", errors="replace"))


#: What may follow the JSON at a script's end: a statement end, the close of a
#: ``obvInit(…)`` call, a CDATA section's end (with or without a ``//`` before it; written
#: ``]]&gt;`` by tools that re-serialise a page and escape the script's text; it comes
#: first, or its ``;`` would be taken for a statement end).
_SCRIPT_TAILS = (b"]]&gt;", b";", b")", b"]]>", b"//")


def _script_json(body: bytes, marker: str, start: int = 0) -> Any:
    """The JSON between ``marker`` (and its ``=``/``(``) and the script's end, read straight
    from the bytes with orjson (several times faster than :mod:`json`, and no text copy),
    or None when that is not exactly one JSON value — the caller then takes the slower,
    more forgiving way, which also gives the error message. When it is one value, it is
    the value the slower way decodes first after the marker. ``start``: where to look for
    the marker from (no occurrence before it)."""
    index = body.find(marker.encode("ascii"), start)
    if index < 0:
        return None
    start = index + len(marker)
    while body[start : start + 1] in (b" ", b"\t", b"\r", b"\n", b"=", b"("):
        start += 1
    end = body.find(b"</script", start)
    candidate = body[start : end if end >= 0 else len(body)].rstrip()
    trimmed = True
    while trimmed:
        trimmed = False
        for tail in _SCRIPT_TAILS:
            if candidate.endswith(tail):
                candidate = candidate[: -len(tail)].rstrip()
                trimmed = True
    try:
        return orjson.loads(candidate)
    except orjson.JSONDecodeError:  # trailing code, NaN, huge numbers, lone surrogates…
        return None


def find_apollo_state(text: str | None, body: bytes | None = None) -> dict[str, Any] | None:
    """The ``window.__APOLLO_STATE__`` object of a 2019+ page, or None when absent.
    ``body``: the page's bytes when they are clean UTF-8 (see :func:`_from_marker`)."""
    if body is not None:
        stem = body.find(APOLLO_MARKERS[-1].encode("ascii"))  # one scan, not one per marker
        if stem < 0:
            return None
        # every marker ends with the stem, so none occurs before this (no second scan)
        fast = _script_json(body, APOLLO_MARKERS[0], _before(stem, APOLLO_MARKERS[0]))
        if isinstance(fast, dict):
            return fast
    elif not _may_hold(text, body, (APOLLO_MARKERS[-1],)):
        return None
    for marker in APOLLO_MARKERS:
        located = _from_marker(text, body, marker)
        found = decode_after(located[0], marker, origin=located[1]) if located else None
        if found is not None:
            value = found[0]
            if not isinstance(value, dict):
                raise StateError("__APOLLO_STATE__ is not a JSON object")
            return value
    return None


def find_legacy_state(text: str | None, body: bytes | None = None) -> dict[str, Any] | None:
    """The embedded ``{value, references, …}`` payload of a 2015–2018 page.

    2016–18 pages call ``window["obvInit"]({...})``; 2015 pages assign
    ``var GLOBALS = {...}`` whose ``embedded`` member holds the payload.
    Pages re-serialised by other tools may have the script HTML-escaped.
    ``body``: the page's bytes when they are clean UTF-8 (see :func:`_from_marker`).
    """
    if body is not None:
        where = _first_occurrences(body)
        if all(where(stem) < 0 for stem in _LEGACY_STEMS):  # at most two scans, not ten
            return None
        fast = _legacy_fast(body, where)
        if fast is not None:
            return fast
    elif not _may_hold(text, body, _LEGACY_STEMS):
        return None
    for candidate, candidate_body in _legacy_texts(text, body):
        for marker in LEGACY_MARKERS:
            located = _from_marker(candidate, candidate_body, marker)
            segment, origin = located if located is not None else ("", 0)
            index = 0 if located else -1
            while index >= 0:
                found = decode_after(segment, marker, index, origin)
                if found is None:
                    break
                value, end = found
                payload = _legacy_payload(value, marker)
                if payload is not None:
                    return payload
                index = segment.find(marker, end)
    return None


#: Every legacy marker contains one of these (an HTML-escaped script too).
_LEGACY_STEMS = ("obvInit", "GLOBALS")


def _may_hold(text: str | None, body: bytes | None, stems: tuple[str, ...]) -> bool:
    """False when none of ``stems`` occurs in the page (no marker containing one can)."""
    if body is not None:
        return any(stem.encode("ascii") in body for stem in stems)
    return any(stem in (text or "") for stem in stems)


def _legacy_payload(value: Any, marker: str) -> dict[str, Any] | None:
    """The payload a decoded legacy value holds (``embedded`` of ``GLOBALS``), or None."""
    if not isinstance(value, dict):
        return None
    embedded = value.get("embedded") if "GLOBALS" in marker else value
    return embedded if isinstance(embedded, dict) and embedded else None


def _first_occurrences(body: bytes) -> Callable[[str], int]:
    """Where a stem first occurs in ``body`` (-1: nowhere), each looked for once."""
    found: dict[str, int] = {}

    def where(stem: str) -> int:
        if stem not in found:
            found[stem] = body.find(stem.encode("ascii"))
        return found[stem]

    return where


def _legacy_fast(body: bytes, where: Callable[[str], int] | None = None) -> dict[str, Any] | None:
    """:func:`find_legacy_state`'s answer read by orjson from the first legacy marker's
    script, or None to let the slower way decide (which it then does exactly as before:
    the fast way answers only when that way would stop at the same value). ``where``:
    the stems' first occurrences (:func:`_first_occurrences`); a marker is looked for only
    from its stem's first occurrence on, and not at all when the stem is absent."""
    where = where or _first_occurrences(body)
    for marker in LEGACY_MARKERS:
        stem = next(s for s in _LEGACY_STEMS if s in marker)
        if where(stem) < 0:
            continue
        start = _before(where(stem), marker, stem)
        if body.find(marker.encode("ascii"), start) < 0:
            continue
        return _legacy_payload(_script_json(body, marker, start), marker)
    return None


def _before(stem_index: int, marker: str, stem: str = APOLLO_MARKERS[-1]) -> int:
    """The earliest place ``marker`` can start, given the first occurrence of ``stem``
    (which it contains) at ``stem_index``."""
    return max(0, stem_index - marker.index(stem))


def _legacy_texts(
    text: str | None, body: bytes | None
) -> Iterator[tuple[str | None, bytes | None]]:
    yield text, body
    if body is not None:
        if b"&quot;" in body and b"obvInit" in body:
            yield html.unescape(body.decode("utf-8", errors="replace")), None
    elif text and "&quot;" in text and "obvInit" in text:
        yield html.unescape(text), None


def load_json(text: str) -> Any:
    """``json.loads`` that raises only :class:`StateError` (broken, or nested too deeply);
    orjson reads it first, :mod:`json` what orjson refuses (and says why)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise StateError(f"not JSON: {exc.msg} (offset {exc.pos})") from exc
    except RecursionError as exc:
        raise StateError("JSON nested too deeply") from exc


def parse_json_payload(text: str) -> Any:
    """Decode a ``?format=json`` / GraphQL body (XSSI guard stripped); raises StateError."""
    return load_json(strip_xssi(text).strip())
