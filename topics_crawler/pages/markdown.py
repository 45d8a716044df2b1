"""Story bodies as CommonMark: Medium's paragraph model in, Markdown text out.

Every page generation describes a body the same way: a list of paragraphs, each
with a type, a text and *markups* (``STRONG``, ``EM``, ``A``, ``CODE``) given as
``[start, end)`` offsets into the text. This module holds that model
(:class:`Block`, :class:`Markup`), turns the paragraph objects of the state into it
through the state reader's typed accessors (:func:`apollo_blocks` for the Apollo cache
with string types, :func:`legacy_blocks` for 2015–2018 JSON with integer types; a
wrong-typed value is a missing one, noted on the page) and renders it
(:func:`render_markdown`).
The DOM of a page without state is read into the same model by
:mod:`topics_crawler.pages._markdown_dom`.

Rendering rules:

* headings ``##``–``####``; ``ULI``/``OLI`` runs are one list; consecutive ``PRE``
  paragraphs are one fenced code block whose content is the paragraphs' text
  byte for byte (joined by ``\\n``; the fence is longer than any backtick run in
  it); ``BQ`` and ``PQ`` are block quotes; a section break is ``---``;
* an image is ``![alt](url)`` with its caption in italics on the next line; an
  embed (``IFRAME``, ``MIXTAPE_EMBED``) is a link to what it embeds;
* markups may overlap and nest in any way: the text is cut at every markup
  boundary and the open delimiters are kept as a stack (links outermost, inline
  code innermost), closing and reopening what a boundary crosses, so the output
  is always well nested; white space at a markup's edges is moved outside it;
* Medium counts offsets in UTF-16 code units (JavaScript strings): an emoji
  before a markup shifts it by two, not one; :func:`utf16_markups` converts;
* text outside code is escaped so that it reads back as the same text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any
from urllib.parse import parse_qs, urlsplit

from topics_crawler.pages.state import Node

#: Paragraph types the renderer knows; anything else renders as a paragraph.
BLOCK_KINDS = frozenset(
    {"P", "H1", "H2", "H3", "H4", "IMG", "PRE", "ULI", "OLI", "BQ", "PQ"}
    | {"IFRAME", "MIXTAPE_EMBED", "HR"}
)
MARKUP_KINDS = ("A", "STRONG", "EM", "CODE")

#: 2015–2018 paragraph type ints. 1, 3, 4, 8, 9, 11, 13 were verified on the same story
#: in 2017 JSON and the 2021 Apollo cache, 6 and 10 on another story (2017 vs 2020);
#: 2 is the title-style heading of 2015 posts and 7 the pull quote, judged from the texts;
#: 14 (mixtape embed) is not in any capture; 15 (a section's image credit line) renders
#: as a paragraph.
LEGACY_PARAGRAPH_TYPES = {
    1: "P",
    2: "H2",
    3: "H3",
    4: "IMG",
    6: "BQ",
    7: "PQ",
    8: "PRE",
    9: "ULI",
    10: "OLI",
    11: "IFRAME",
    13: "H4",
    14: "MIXTAPE_EMBED",
    15: "P",
}
#: 2015–2018 markup type ints, verified the same way: 1 bold, 2 italic, 3 link, 10 code.
LEGACY_MARKUP_TYPES = {1: "STRONG", 2: "EM", 3: "A", 10: "CODE"}

#: Where an image id (``1*AbC….jpeg``) is served; Medium's own pages use this form.
IMAGE_URL = "https://miro.medium.com/v2/resize:fit:1400/{id}"
#: Where an embedded media resource is served when the state gives only its id.
MEDIA_URL = "https://medium.com/media/{id}"
#: Where a user mention without a link points.
USER_URL = "https://medium.com/u/{id}"
PREVIEW_NOTICE = (
    "*This is a member-only story: the text above is the preview a logged-out reader"
    " sees; the rest is on Medium.*"
)

_HEADING_LEVEL = {"H1": 2, "H2": 2, "H3": 3, "H4": 4}
_LIST_KINDS = frozenset({"ULI", "OLI"})
_QUOTE_KINDS = frozenset({"BQ", "PQ"})
_LANGUAGE_RE = re.compile(r"[\w+#.-]{1,40}")
#: Characters outside the BMP: two UTF-16 code units each.
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


@dataclass(frozen=True, slots=True, eq=False)
class Markup:
    """One inline markup over ``Block.text[start:end]`` (code point offsets). Compared by
    identity: the renderer keeps each one as a delimiter on a stack."""

    kind: str
    """``STRONG``, ``EM``, ``A`` or ``CODE``."""
    start: int
    end: int
    href: str | None = None
    """Link target of an ``A`` markup."""


@dataclass(frozen=True, slots=True)
class Block:
    """One paragraph of the body."""

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


# --- the model from the state ------------------------------------------------------------


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
            out.append(replace(markup, start=start, end=end))
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


def _markup(raw: Node, kind: str | None) -> Markup | None:
    if kind not in MARKUP_KINDS:
        return None
    start, end = raw.int("start"), raw.int("end")
    if start is None or end is None:
        return None
    if kind != "A":
        return Markup(kind, start, end)
    href = raw.str("href")
    if not href:
        user_id = raw.str("userId")
        href = USER_URL.format(id=user_id) if user_id else None
    return Markup(kind, start, end, href) if href else None


def embed_url(src: str | None) -> str | None:
    """What an embed shows: the ``url`` of an Embedly widget, else the frame's source."""
    if not src:
        return None
    try:
        parts = urlsplit(src)
    except ValueError:
        return None
    if parts.hostname and parts.hostname.endswith("embedly.com"):
        target = parse_qs(parts.query).get("url", [None])[0]
        if target:
            return target
    return src if parts.scheme in {"http", "https"} else None


def _image(metadata: Node | None) -> tuple[str | None, str | None]:
    if metadata is None:
        return None, None
    image_id = metadata.str("id") or metadata.id
    return (IMAGE_URL.format(id=image_id) if image_id else None), metadata.str("alt") or None


def _media(paragraph: Node) -> str | None:
    iframe = paragraph.node("iframe")
    if iframe is None:
        return None
    resource = iframe.node("mediaResource")
    if resource is not None:
        found = embed_url(resource.str("iframeSrc") or resource.str("href"))
        if found:
            return found
        media_id = resource.id
    else:
        media_id = iframe.str("mediaResourceId")
    return MEDIA_URL.format(id=media_id) if media_id else None


def _block(paragraph: Node, kind: str, markup_kind: Callable[[Any], str | None]) -> Block:
    text = paragraph.str("text") or ""
    found = (_markup(m, markup_kind(m.scalar("type"))) for m in paragraph.nodes("markups"))
    markups = utf16_markups(text, (m for m in found if m is not None))
    src = alt = language = None
    if kind == "IMG":
        src, alt = _image(paragraph.node("metadata"))
    elif kind == "IFRAME":
        src = _media(paragraph)
    elif kind == "MIXTAPE_EMBED":
        mixtape = paragraph.node("mixtapeMetadata")
        src = mixtape.str("href") if mixtape is not None else None
    elif kind == "PRE":
        code = paragraph.node("codeBlockMetadata")
        lang = code.str("lang") if code is not None else None
        language = lang if lang and _LANGUAGE_RE.fullmatch(lang) else None
    return Block(kind, text, markups, src, alt, language)


def _with_sections(blocks: list[Block], body_model: Node) -> list[Block]:
    """A ``HR`` block where each section after the first starts."""
    starts = set()
    for section in body_model.nodes("sections"):
        start = section.int("startIndex")
        if start is not None and 0 < start < len(blocks):
            starts.add(start)
    if not starts:
        return blocks
    out: list[Block] = []
    for index, block in enumerate(blocks):
        if index in starts:
            out.append(Block("HR"))
        out.append(block)
    return out


def _apollo_kind(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _legacy_markup_kind(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return LEGACY_MARKUP_TYPES.get(value)
    return None


def apollo_blocks(body_model: Node | None) -> list[Block]:
    """Blocks of an Apollo ``RichText`` body model (``paragraphs`` of ``Paragraph``
    entities with string types; references are followed by the state reader)."""
    if body_model is None:
        return []
    blocks = []
    for paragraph in body_model.nodes("paragraphs"):
        kind = _apollo_kind(paragraph.scalar("type"))
        kind = kind if kind in BLOCK_KINDS else "P"
        blocks.append(_block(paragraph, kind, _apollo_kind))
    return _with_sections(blocks, body_model)


def legacy_blocks(body_model: Node | None) -> list[Block]:
    """Blocks of a 2015–2018 ``bodyModel`` (integer paragraph and markup types)."""
    if body_model is None:
        return []
    blocks = []
    for paragraph in body_model.nodes("paragraphs"):
        number = paragraph.scalar("type")
        kind = "P"
        if isinstance(number, int) and not isinstance(number, bool):
            kind = LEGACY_PARAGRAPH_TYPES.get(number, "P")
        blocks.append(_block(paragraph, kind, _legacy_markup_kind))
    return _with_sections(blocks, body_model)


# --- rendering ---------------------------------------------------------------------------


def render_markdown(blocks: Sequence[Block], *, preview: bool = False) -> str | None:
    """CommonMark text of ``blocks``; None when nothing is left. ``preview`` (a locked
    story's logged-out preview) ends the text with a line that says so."""
    rendered = [text for text in _render_blocks(list(blocks)) if text]
    while rendered and rendered[0] == "---":
        rendered.pop(0)
    while rendered and rendered[-1] == "---":
        rendered.pop()
    if not rendered:
        return None
    if preview:
        rendered.append(PREVIEW_NOTICE)
    return "\n\n".join(rendered)


def _render_blocks(blocks: list[Block]) -> Iterator[str]:
    index = 0
    while index < len(blocks):
        kind = blocks[index].kind
        end = index + 1
        if kind == "PRE" or kind in _LIST_KINDS:
            while end < len(blocks) and blocks[end].kind == kind:
                end += 1
        group = blocks[index:end]
        if kind == "PRE":
            yield _code_block(group)
        elif kind in _LIST_KINDS:
            yield _list_block(group)
        else:
            yield _single(group[0])
        index = end


def _single(block: Block) -> str:
    kind = block.kind
    if kind == "HR":
        return "---"
    if kind in _HEADING_LEVEL:
        text = _escape_heading(_inline(block.text.replace("\n", " "), block.markups).strip())
        return f"{'#' * _HEADING_LEVEL[kind]} {text}" if text else ""
    if kind == "IMG":
        return _figure(block)
    if kind in {"IFRAME", "MIXTAPE_EMBED"}:
        return _embed(block)
    text = _lines(_inline(block.text, block.markups))
    if kind in _QUOTE_KINDS:
        return "\n".join(f"> {line}".rstrip() for line in text.split("\n")) if text else ""
    return text


def _figure(block: Block) -> str:
    caption = _caption(block)
    if not block.src:
        return caption
    alt = _escape(block.alt or "").replace("\n", " ")
    image = f"![{alt}]({_destination(block.src)})"
    return f"{image}\n{caption}" if caption else image


def _caption(block: Block) -> str:
    """The block's text in italics (its own markups kept inside)."""
    text = block.text.strip()
    if not text:
        return ""
    offset = len(block.text) - len(block.text.lstrip())
    markups = (Markup("EM", offset, offset + len(text)), *block.markups)
    return _lines(_inline(block.text, markups))


def _embed(block: Block) -> str:
    text = block.text.strip()
    if block.src is None:
        return _lines(_inline(block.text, block.markups))
    if block.kind == "MIXTAPE_EMBED" and text:
        if any(markup.kind == "A" for markup in block.markups):
            return _lines(_inline(block.text, block.markups))
        whole = Markup("A", 0, len(block.text), block.src)
        return _lines(_inline(block.text, (whole, *block.markups)))
    link = f"[{_escape(block.src)}]({_destination(block.src)})"
    caption = _caption(block)
    return f"{link}\n{caption}" if caption else link


def _code_block(blocks: list[Block]) -> str:
    code = "\n".join(block.text for block in blocks)
    if not code.strip():
        return ""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    language = next((block.language for block in blocks if block.language), None) or ""
    return f"{fence}{language}\n{code}\n{fence}"


def _list_block(blocks: list[Block]) -> str:
    items = []
    number = 0
    for block in blocks:
        text = _lines(_inline(block.text, block.markups))
        if not text:
            continue
        number += 1
        marker = f"{number}. " if block.kind == "OLI" else "- "
        indent = " " * len(marker)
        lines = text.split("\n")
        items.append(marker + "\n".join([lines[0], *(indent + line for line in lines[1:])]))
    return "\n".join(items)


# --- inline text -------------------------------------------------------------------------

_ESCAPED = re.compile(r"([\\`*_\[\]<>|])")
_ENTITY = re.compile(r"&(?=#?\w+;)")
_SPECIAL = re.compile(r"[\\`*_\[\]<>|&]")
_LINE_START = re.compile(r"^([#>+=~-]|\d{1,9}[.)](?=\s|$))")
_NUMBERED = re.compile(r"^(\d{1,9})([.)])")


def _escape(text: str) -> str:
    if _SPECIAL.search(text) is None:
        return text
    return _ENTITY.sub("&amp;", _ESCAPED.sub(r"\\\1", text))


def _escape_heading(text: str) -> str:
    return text[:-1] + "\\#" if text.endswith("#") else text


def _lines(text: str) -> str:
    """Lines of a paragraph: leading blanks dropped (they would make code), a line that
    would start a block (``#``, ``>``, ``-``, ``1.``) escaped, breaks kept as hard breaks."""
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
    start, end = max(markup.start, 0), min(markup.end, len(text))
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start >= end:
        return None
    if (start, end) == (markup.start, markup.end):
        return markup
    return Markup(markup.kind, start, end, markup.href)


def _order(markup: Markup) -> tuple[int, int, int, str]:
    """Stack order: links outermost, code innermost, else the longer-lasting outside."""
    rank = 0 if markup.kind == "A" else 2 if markup.kind == "CODE" else 1
    return (rank, -markup.end, markup.start, markup.kind)


def _expressible(text: str, markup: Markup, others: list[Markup]) -> bool:
    """False for emphasis CommonMark cannot delimit: an edge with a letter outside and
    punctuation inside (``a**"b"**``, or a code span or link starting right inside it);
    such a markup is left out, its text kept."""
    if markup.kind not in {"STRONG", "EM"}:
        return True
    start, end = markup.start, markup.end
    framed = [m for m in others if m.kind in {"CODE", "A"} and m is not markup]
    inner_start = not text[start].isalnum() or any(m.start == start for m in framed)
    inner_end = not text[end - 1].isalnum() or any(m.end == end for m in framed)
    outer_start = start > 0 and text[start - 1].isalnum() and all(m.end != start for m in framed)
    outer_end = end < len(text) and text[end].isalnum() and all(m.start != end for m in framed)
    return not ((outer_start and inner_start) or (outer_end and inner_end))


def _spans(text: str, markups: Iterable[Markup]) -> list[Markup]:
    """Markups of a kind that overlap or touch merged (two ``*`` in a row would read as
    bold; ``<em>a </em><em>b</em>`` is one emphasis), a link overlapping an earlier link
    dropped (links do not nest), edge blanks trimmed, inexpressible emphasis left out."""
    by_kind: dict[str, list[Markup]] = {}
    for markup in markups:
        start, end = max(markup.start, 0), min(markup.end, len(text))
        if start < end:
            clamped = markup if (start, end) == (markup.start, markup.end) else None
            clamped = clamped or Markup(markup.kind, start, end, markup.href)
            by_kind.setdefault(markup.kind, []).append(clamped)
    merged: list[Markup] = []
    for kind, found in by_kind.items():
        found.sort(key=lambda m: (m.start, -m.end))
        runs: list[Markup] = []
        for markup in found:
            last = runs[-1] if runs else None
            if (
                last is None
                or markup.start > last.end
                or (kind == "A" and markup.start >= last.end)
            ):
                runs.append(markup)
            elif kind != "A":
                runs[-1] = replace(last, end=max(last.end, markup.end))
        merged.extend(runs)
    trimmed = [cut for m in merged if (cut := _trimmed(text, m)) is not None]
    return [m for m in trimmed if _expressible(text, m, trimmed)]


#: One step of inline output: ``("open", markup)``, ``("close", markup)`` or
#: ``("text", (piece, is_code))``.
_Token = tuple[str, Any]


def _inline(text: str, markups: Sequence[Markup]) -> str:
    """``text`` with its markups as Markdown delimiters, always well nested."""
    spans = _spans(text, markups) if markups else []
    if not spans:
        return _escape(text)
    spans.sort(key=lambda m: (m.start, -m.end))
    if all(a.end <= b.start for a, b in pairwise(spans)):
        return _apart(text, spans)  # the common case: nothing overlaps
    tokens = _cancel(_blanks_outside(_tokens(text, spans)))
    return _serialize(tokens)


def _apart(text: str, spans: list[Markup]) -> str:
    """:func:`_inline` for markups that do not overlap (edges already trimmed)."""
    out: list[str] = []
    position = 0
    for markup in spans:
        before = _escape(text[position : markup.start])
        if markup.kind == "A" and before.endswith("!") and not before.endswith("\\!"):
            before = before[:-1] + "\\!"  # "![" would start an image
        inner = text[markup.start : markup.end]
        body = _code_span(inner) if markup.kind == "CODE" else _escape(inner)
        out += [before, _open(markup), body, _close(markup)]
        position = markup.end
    out.append(_escape(text[position:]))
    return "".join(out)


def _tokens(text: str, spans: list[Markup]) -> list[_Token]:
    """Open/close/text steps: the text cut at every markup edge; at each cut the markups
    still open stay open unless a link opening inside them would have to be split (then
    they close and reopen inside the link) or they are code (always innermost)."""
    cuts = sorted({0, len(text), *(m.start for m in spans), *(m.end for m in spans)})
    tokens: list[_Token] = []
    stack: list[Markup] = []
    for start, end in pairwise(cuts):
        active = [m for m in spans if m.start <= start and end <= m.end]
        new = [m for m in active if m not in stack]
        link_end = max((m.end for m in new if m.kind == "A"), default=0)
        keep = 0
        while keep < len(stack):
            markup = stack[keep]
            if markup not in active or markup.end < link_end or (new and markup.kind == "CODE"):
                break
            keep += 1
        wanted = stack[:keep] + sorted((m for m in active if m not in stack[:keep]), key=_order)
        tokens.extend(("close", m) for m in reversed(stack[keep:]))
        tokens.extend(("open", m) for m in wanted[keep:])
        tokens.append(("text", (text[start:end], any(m.kind == "CODE" for m in wanted))))
        stack = wanted
    tokens.extend(("close", m) for m in reversed(stack))
    return tokens


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
            out.append(_code_span(value[0]) if value[1] else _escape(value[0]))
        elif kind == "open":
            if value.kind == "A" and out and out[-1].endswith("!") and not out[-1].endswith("\\!"):
                out[-1] = out[-1][:-1] + "\\!"  # "![" would start an image
            out.append(_open(value))
        else:
            out.append(_close(value))
    return "".join(out)


def _open(markup: Markup) -> str:
    return {"A": "[", "STRONG": "**", "EM": "*"}.get(markup.kind, "")


def _close(markup: Markup) -> str:
    if markup.kind == "A":
        return f"]({_destination(markup.href or '')})"
    return {"STRONG": "**", "EM": "*"}.get(markup.kind, "")


def _code_span(code: str) -> str:
    code = code.replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if code.startswith(("`", " ")) or code.endswith(("`", " ")) else ""
    return f"{fence}{pad}{code}{pad}{fence}"


def _destination(url: str) -> str:
    """A link destination that reads back as ``url`` (blanks encoded, parentheses escaped)."""
    cleaned = url.strip().replace(" ", "%20").replace("<", "%3C").replace(">", "%3E")
    return re.sub(r"([()\\])", r"\\\1", cleaned)
