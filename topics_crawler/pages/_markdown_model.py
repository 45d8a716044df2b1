"""The paragraph model of a story body: :class:`Block` and :class:`Markup`, with Medium's
UTF-16 offsets turned into text indexes (:func:`utf16_markups`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

#: Paragraph types the renderer knows; anything else renders as a paragraph.
BLOCK_KINDS = frozenset(
    {"P", "H1", "H2", "H3", "H4", "IMG", "PRE", "ULI", "OLI", "BQ", "PQ"}
    | {"IFRAME", "MIXTAPE_EMBED", "HR"}
)
MARKUP_KINDS = ("A", "STRONG", "EM", "CODE")
#: Characters outside the BMP: two UTF-16 code units each.
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


@dataclass(slots=True, eq=False)
class Markup:
    """One inline markup over ``Block.text[start:end]`` (code point offsets). Compared by
    identity: the renderer keeps each one as a delimiter on a stack. Never changed once
    made (not ``frozen``: a frozen dataclass costs four times as much to build, and a
    page makes hundreds)."""

    kind: str
    """``STRONG``, ``EM``, ``A`` or ``CODE``."""
    start: int
    end: int
    href: str | None = None
    """Link target of an ``A`` markup."""


@dataclass(slots=True)
class Block:
    """One paragraph of the body; never changed once made (see :class:`Markup`)."""

    kind: str
    """Medium's paragraph type name (``P``, ``H3``, ``IMG``, ``PRE``, …) or ``HR``."""
    text: str = ""
    """The paragraph's text (an image's caption); code keeps every byte."""
    markups: tuple[Markup, ...] = ()
    src: str | None = None
    """Image URL, embed target or mixtape link."""
    alt: str | None = None
    """Image alt text."""
    language: str | None = None
    """Code block language, when Medium states it."""


def utf16_markups(text: str, markups: Iterable[Markup]) -> tuple[Markup, ...]:
    """``markups`` with UTF-16 code unit offsets turned into ``text`` indexes, clamped to
    the text; empty and inverted ranges are dropped."""
    markups = list(markups)
    if not markups:
        return ()
    units = _utf16_index(text)
    out = []
    for markup in markups:
        start = units(max(markup.start, 0))
        end = units(max(markup.end, 0))
        if start < end:
            out.append(Markup(markup.kind, start, end, markup.href))
    return tuple(out)


def _utf16_index(text: str) -> Callable[[int], int]:
    """Maps a UTF-16 offset to the code point index (offsets inside a pair round up)."""
    length = len(text)
    if _ASTRAL.search(text) is None:
        return lambda unit: min(unit, length)
    starts = []
    for index, char in enumerate(text):
        starts.append(index)
        if ord(char) > 0xFFFF:
            starts.append(index + 1)
    starts.append(length)

    def index_of(unit: int) -> int:
        return starts[min(unit, len(starts) - 1)]

    return index_of
