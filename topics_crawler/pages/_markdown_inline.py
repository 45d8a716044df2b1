"""Inline Markdown: a paragraph's text with its markups as delimiters, always well nested,
escaped so that it reads back as the same text (see :mod:`topics_crawler.pages.markdown`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import Any

from topics_crawler.pages._markdown_model import Markup

# --- inline text -------------------------------------------------------------------------

_ESCAPED = re.compile(r"([\\`*_\[\]<>|])")
_ENTITY = re.compile(r"&(?=#?\w+;)")
_SPECIAL = re.compile(r"[\\`*_\[\]<>|&]")
_LINE_START = re.compile(r"^([#>+=~-]|\d{1,9}[.)](?=\s|$))")
_NUMBERED = re.compile(r"^(\d{1,9})([.)])")


def escape(text: str) -> str:
    if _SPECIAL.search(text) is None:
        return text
    return _ENTITY.sub("&amp;", _ESCAPED.sub(r"\\\1", text))


def escape_heading(text: str) -> str:
    return text[:-1] + "\\#" if text.endswith("#") else text


def paragraph_lines(text: str) -> str:
    """Lines of a paragraph: leading blanks dropped (they would make code), a line that
    would start a block (``#``, ``>``, ``-``, ``1.``) escaped, breaks kept as hard breaks."""
    if "\n" not in text:  # most paragraphs: one line
        return _escape_line_start(text.strip(" \t"))
    lines = [line.strip(" \t") for line in text.strip("\n").split("\n")]
    lines = [_escape_line_start(line) for line in lines]
    return "\\\n".join(line for line in lines if line) if len(lines) > 1 else lines[0]


def _escape_line_start(line: str) -> str:
    match = _LINE_START.match(line)
    if match is None:
        return line
    numbered = _NUMBERED.match(line)
    if numbered:
        return f"{numbered.group(1)}\\{line[numbered.end(1) :]}"
    return "\\" + line


def _trimmed(text: str, markup: Markup) -> Markup | None:
    """``markup`` without the blanks at its edges (None when only blanks are left); its
    range is already within ``text``."""
    start, end = markup.start, markup.end
    if not (text[start].isspace() or text[end - 1].isspace()):
        return markup  # the common case: nothing to trim
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Markup(markup.kind, start, end, markup.href) if start < end else None


def _order(markup: Markup) -> tuple[int, int, int, str]:
    """Stack order: links outermost, code innermost, else the longer-lasting outside."""
    rank = 0 if markup.kind == "A" else 2 if markup.kind == "CODE" else 1
    return (rank, -markup.end, markup.start, markup.kind)


def _start_longest(markup: Markup) -> tuple[int, int]:
    return (markup.start, -markup.end)


_FRAMING_KINDS = frozenset({"CODE", "A"})
_EMPHASIS_KINDS = frozenset({"STRONG", "EM"})


def _expressible(text: str, markup: Markup, framed: list[Markup]) -> bool:
    """False for emphasis CommonMark cannot delimit: an edge with a letter outside and
    punctuation inside (``a**"b"**``, or a code span or link starting right inside it);
    such a markup is left out, its text kept. ``framed``: the code and link markups."""
    start, end = markup.start, markup.end
    outer_start = start > 0 and text[start - 1].isalnum()
    outer_end = end < len(text) and text[end].isalnum()
    if not (outer_start or outer_end):
        return True  # blanks or punctuation outside both edges: always delimitable
    inner_start = not text[start].isalnum() or any(m.start == start for m in framed)
    inner_end = not text[end - 1].isalnum() or any(m.end == end for m in framed)
    outer_start = outer_start and all(m.end != start for m in framed)
    outer_end = outer_end and all(m.start != end for m in framed)
    return not ((outer_start and inner_start) or (outer_end and inner_end))


def _clamped(markup: Markup, length: int) -> Markup | None:
    """``markup`` cut to a text of ``length`` (itself when it fits); None when empty."""
    start = markup.start if markup.start > 0 else 0
    end = markup.end if markup.end < length else length
    if start >= end:
        return None
    if start == markup.start and end == markup.end:
        return markup
    return Markup(markup.kind, start, end, markup.href)


def _spans(text: str, markups: Iterable[Markup]) -> list[Markup]:
    """Markups of a kind that overlap or touch merged (two ``*`` in a row would read as
    bold; ``<em>a </em><em>b</em>`` is one emphasis), a link overlapping an earlier link
    dropped (links do not nest), edge blanks trimmed, inexpressible emphasis left out."""
    length = len(text)
    by_kind: dict[str, list[Markup]] = {}
    for given in markups:
        clamped = _clamped(given, length)
        if clamped is None:
            continue
        same = by_kind.get(given.kind)
        if same is None:
            by_kind[given.kind] = [clamped]
        else:
            same.append(clamped)
    trimmed: list[Markup] = []
    for kind, found in by_kind.items():
        runs = _merged(kind, found) if len(found) > 1 else found
        trimmed.extend(cut for m in runs if (cut := _trimmed(text, m)) is not None)
    framed = [m for m in trimmed if m.kind in _FRAMING_KINDS]
    return [m for m in trimmed if m.kind not in _EMPHASIS_KINDS or _expressible(text, m, framed)]


def _one_span(text: str, markup: Markup) -> list[Markup]:
    """:func:`_spans` of a single markup (most paragraphs with markups have one)."""
    clamped = _clamped(markup, len(text))
    cut = _trimmed(text, clamped) if clamped is not None else None
    if cut is None or (cut.kind in _EMPHASIS_KINDS and not _expressible(text, cut, [])):
        return []
    return [cut]


def _merged(kind: str, found: list[Markup]) -> list[Markup]:
    """Markups of one kind in start order, those that overlap or touch as one (links:
    one that overlaps an earlier link is dropped; touching links stay two)."""
    found.sort(key=_start_longest)
    runs = [found[0]]
    for markup in found[1:]:
        last = runs[-1]
        if markup.start > last.end or (kind == "A" and markup.start >= last.end):
            runs.append(markup)
        elif kind != "A" and markup.end > last.end:
            runs[-1] = Markup(kind, last.start, markup.end, last.href)
    return runs


#: One step of inline output: ``("open", markup)``, ``("close", markup)`` or
#: ``("text", (piece, is_code))``.
_Token = tuple[str, Any]


def inline(text: str, markups: Sequence[Markup]) -> str:
    """``text`` with its markups as Markdown delimiters, always well nested."""
    if not markups:
        return escape(text)
    spans = _spans(text, markups) if len(markups) > 1 else _one_span(text, markups[0])
    if not spans:
        return escape(text)
    spans.sort(key=_start_longest)
    if all(a.end <= b.start for a, b in pairwise(spans)):
        return _apart(text, spans)  # the common case: nothing overlaps
    tokens = _tokens(text, spans)
    if _blanks_at_inner_edges(tokens):  # else neither pass below would change a step
        tokens = _cancel(_blanks_outside(tokens))
    return _serialize(tokens)


def _apart(text: str, spans: list[Markup]) -> str:
    """:func:`_inline` for markups that do not overlap (edges already trimmed)."""
    out: list[str] = []
    position = 0
    for markup in spans:
        before = escape(text[position : markup.start])
        if markup.kind == "A" and before.endswith("!") and not before.endswith("\\!"):
            before = before[:-1] + "\\!"  # "![" would start an image
        inner = text[markup.start : markup.end]
        body = _code_span(inner) if markup.kind == "CODE" else escape(inner)
        out += [before, _open(markup), body, _close(markup)]
        position = markup.end
    out.append(escape(text[position:]))
    return "".join(out)


def _tokens(text: str, spans: list[Markup]) -> list[_Token]:
    """Open/close/text steps: the text cut at every markup edge; at each cut the markups
    still open stay open unless a link opening inside them would have to be split (then
    they close and reopen inside the link) or they are code (always innermost). Every cut
    is a markup's edge, so each text step is non-empty and comes after an open or close."""
    edges = {0, len(text)}
    for markup in spans:
        edges.add(markup.start)
        edges.add(markup.end)
    cuts = sorted(edges)
    tokens: list[_Token] = []
    stack: list[Markup] = []
    for index in range(len(cuts) - 1):
        start, end = cuts[index], cuts[index + 1]
        active = [m for m in spans if m.start <= start and end <= m.end]
        new = [m for m in active if m not in stack]
        link_end = max([m.end for m in new if m.kind == "A"], default=0)
        keep = 0
        for markup in stack:
            if markup not in active or markup.end < link_end or (new and markup.kind == "CODE"):
                break
            keep += 1
        kept = stack[:keep]
        opened = [m for m in active if m not in kept]
        if len(opened) > 1:
            opened.sort(key=_order)
        for markup in reversed(stack[keep:]):
            tokens.append(("close", markup))
        for markup in opened:
            tokens.append(("open", markup))
        stack = kept + opened
        is_code = False
        for markup in stack:
            if markup.kind == "CODE":
                is_code = True
                break
        tokens.append(("text", (text[start:end], is_code)))
    for markup in reversed(stack):
        tokens.append(("close", markup))
    return tokens


def _blanks_at_inner_edges(tokens: list[_Token]) -> bool:
    """True when a non-code text step starts with a blank right after an open or ends with
    one right before a close: only then do :func:`_blanks_outside` and :func:`_cancel`
    change anything (:func:`_tokens` gives no empty text, no open closed at once and no
    two texts in a row)."""
    for index, (kind, value) in enumerate(tokens):
        if kind != "text" or value[1]:
            continue
        piece = value[0]
        if piece[0].isspace() and index and tokens[index - 1][0] == "open":
            return True
        if piece[-1].isspace() and index + 1 < len(tokens) and tokens[index + 1][0] == "close":
            return True
    return False


def _blanks_outside(tokens: list[_Token]) -> list[_Token]:
    """Blanks at the inner edge of a delimiter moved outside it (``** a**`` cannot open)."""
    out: list[_Token] = []
    for kind, value in tokens:
        step = (kind, value)
        if kind == "text" and not value[1]:
            piece = value[0]
            lead = piece[: len(piece) - len(piece.lstrip())]
            if lead and out and out[-1][0] == "open":
                run = len(out)
                while run and out[run - 1][0] == "open":
                    run -= 1
                out.insert(run, ("text", (lead, False)))
                step = ("text", (piece[len(lead) :], False))
        out.append(step)
    moved: list[_Token] = []
    for kind, value in reversed(out):
        step = (kind, value)
        if kind == "text" and not value[1]:
            piece = value[0]
            trail = piece[len(piece.rstrip()) :]
            if trail and moved and moved[-1][0] == "close":
                run = len(moved)
                while run and moved[run - 1][0] == "close":
                    run -= 1
                moved.insert(run, ("text", (trail, False)))
                step = ("text", (piece[: len(piece) - len(trail)], False))
        moved.append(step)
    return list(reversed(moved))


def _cancel(tokens: list[_Token]) -> list[_Token]:
    """Empty texts dropped, an open directly closed again dropped, adjacent code merged."""
    out: list[_Token] = []
    for kind, value in tokens:
        if kind == "text" and not value[0]:
            continue
        if kind == "close" and out and out[-1] == ("open", value):
            out.pop()
            continue
        if kind == "text" and out and out[-1][0] == "text" and out[-1][1][1] == value[1]:
            out[-1] = ("text", (out[-1][1][0] + value[0], value[1]))
            continue
        out.append((kind, value))
    return out


def _serialize(tokens: list[_Token]) -> str:
    out: list[str] = []
    for kind, value in tokens:
        if kind == "text":
            out.append(_code_span(value[0]) if value[1] else escape(value[0]))
        elif kind == "open":
            if value.kind == "A" and out and out[-1].endswith("!") and not out[-1].endswith("\\!"):
                out[-1] = out[-1][:-1] + "\\!"  # "![" would start an image
            out.append(_open(value))
        else:
            out.append(_close(value))
    return "".join(out)


_OPENERS = {"A": "[", "STRONG": "**", "EM": "*"}
_CLOSERS = {"STRONG": "**", "EM": "*"}


def _open(markup: Markup) -> str:
    return _OPENERS.get(markup.kind, "")


def _close(markup: Markup) -> str:
    if markup.kind == "A":
        return f"]({destination(markup.href or '')})"
    return _CLOSERS.get(markup.kind, "")


def _code_span(code: str) -> str:
    code = code.replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if code.startswith(("`", " ")) or code.endswith(("`", " ")) else ""
    return f"{fence}{pad}{code}{pad}{fence}"


def destination(url: str) -> str:
    """A link destination that reads back as ``url`` (blanks encoded, parentheses escaped)."""
    cleaned = url.strip().replace(" ", "%20").replace("<", "%3C").replace(">", "%3E")
    return re.sub(r"([()\\])", r"\\\1", cleaned)
