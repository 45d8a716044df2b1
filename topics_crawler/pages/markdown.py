"""Story bodies as CommonMark: Medium's paragraph model in, Markdown text out.

Every page generation describes a body the same way: a list of paragraphs, each
with a type, a text and *markups* (``STRONG``, ``EM``, ``A``, ``CODE``) given as
``[start, end)`` offsets into the text. This module and its parts (``_markdown_model``,
``_markdown_state``, ``_markdown_inline``) hold that model (:class:`Block`,
:class:`Markup`), turn the paragraph objects of the state into it
through the state reader's typed accessors (:func:`apollo_blocks` for the Apollo cache
with string types, :func:`legacy_blocks` for 2015–2018 JSON with integer types; a
wrong-typed value is a missing one, noted on the page) and render it
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
from collections.abc import Iterator, Mapping, Sequence

from topics_crawler.pages._markdown_inline import (
    destination,
    escape,
    escape_heading,
    inline,
    paragraph_lines,
)
from topics_crawler.pages._markdown_model import (
    BLOCK_KINDS,
    MARKUP_KINDS,
    Block,
    Markup,
    utf16_markups,
)
from topics_crawler.pages._markdown_state import (
    IMAGE_URL,
    LEGACY_MARKUP_TYPES,
    LEGACY_PARAGRAPH_TYPES,
    MEDIA_URL,
    USER_URL,
    apollo_blocks,
    embed_url,
    legacy_blocks,
)

__all__ = [
    "BLOCK_KINDS",
    "IMAGE_URL",
    "LEGACY_MARKUP_TYPES",
    "LEGACY_PARAGRAPH_TYPES",
    "MARKUP_KINDS",
    "MEDIA_URL",
    "PREVIEW_NOTICE",
    "USER_URL",
    "Block",
    "Markup",
    "apollo_blocks",
    "embed_url",
    "image_links",
    "legacy_blocks",
    "render_markdown",
    "utf16_markups",
    "with_image_links",
]

PREVIEW_NOTICE = (
    "*This is a member-only story: the text above is the preview a logged-out reader"
    " sees; the rest is on Medium.*"
)
_HEADING_LEVEL = {"H1": 2, "H2": 2, "H3": 3, "H4": 4}
_LIST_KINDS = frozenset({"ULI", "OLI"})
_QUOTE_KINDS = frozenset({"BQ", "PQ"})
#: A figure as :func:`_figure` writes it, at the start of a block: ``![alt](destination)``.
_FIGURE_RE = re.compile(r"!\[(?:[^\]\\\n]|\\.)*\]\(((?:[^()\\\s]|\\.)*)\)")
_FENCE_RE = re.compile(r"^(`{3,})")
_UNESCAPE_RE = re.compile(r"\\([()\\])")


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
        text = escape_heading(inline(block.text.replace("\n", " "), block.markups).strip())
        return f"{'#' * _HEADING_LEVEL[kind]} {text}" if text else ""
    if kind == "IMG":
        return _figure(block)
    if kind in {"IFRAME", "MIXTAPE_EMBED"}:
        return _embed(block)
    text = paragraph_lines(inline(block.text, block.markups))
    if kind in _QUOTE_KINDS:
        return "\n".join(f"> {line}".rstrip() for line in text.split("\n")) if text else ""
    return text


def _figure(block: Block) -> str:
    caption = _caption(block)
    if not block.src:
        return caption
    alt = escape(block.alt or "").replace("\n", " ")
    image = f"![{alt}]({destination(block.src)})"
    return f"{image}\n{caption}" if caption else image


def image_links(markdown: str) -> list[str]:
    """The image URLs of a body rendered by :func:`render_markdown`, in order, each once
    (the figures' destinations; text that only looks like one, in code, is skipped)."""
    if "![" not in markdown:
        return []
    found = (url for _, _, url in _figures(markdown.split("\n")))
    return list(dict.fromkeys(found))


def with_image_links(markdown: str, replacements: Mapping[str, str]) -> str:
    """``markdown`` with each figure whose URL is a key of ``replacements`` pointing at its
    value instead (a local copy); everything else byte for byte."""
    if "![" not in markdown or not replacements:
        return markdown
    lines = markdown.split("\n")
    for index, figure, url in list(_figures(lines)):
        if url in replacements:
            line = lines[index]
            new = destination(replacements[url])
            lines[index] = line[: figure.start(1)] + new + line[figure.end(1) :]
    return "\n".join(lines)


def _figures(lines: list[str]) -> Iterator[tuple[int, re.Match[str], str]]:
    """``(line index, match, URL)`` of each figure that starts a block outside code."""
    fence: str | None = None
    previous = ""
    for index, line in enumerate(lines):
        opening = _FENCE_RE.match(line)
        if fence is not None:
            if line.rstrip() == fence:
                fence = None
        elif opening is not None:
            fence = opening.group(1)
        elif not previous and (figure := _FIGURE_RE.match(line)) is not None:
            yield index, figure, _UNESCAPE_RE.sub(r"\1", figure.group(1))
        previous = line


def _caption(block: Block) -> str:
    """The block's text in italics (its own markups kept inside)."""
    text = block.text.strip()
    if not text:
        return ""
    offset = len(block.text) - len(block.text.lstrip())
    markups = (Markup("EM", offset, offset + len(text)), *block.markups)
    return paragraph_lines(inline(block.text, markups))


def _embed(block: Block) -> str:
    text = block.text.strip()
    if block.src is None:
        return paragraph_lines(inline(block.text, block.markups))
    if block.kind == "MIXTAPE_EMBED" and text:
        if any(markup.kind == "A" for markup in block.markups):
            return paragraph_lines(inline(block.text, block.markups))
        whole = Markup("A", 0, len(block.text), block.src)
        return paragraph_lines(inline(block.text, (whole, *block.markups)))
    link = f"[{escape(block.src)}]({destination(block.src)})"
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
        text = paragraph_lines(inline(block.text, block.markups))
        if not text:
            continue
        number += 1
        marker = f"{number}. " if block.kind == "OLI" else "- "
        indent = " " * len(marker)
        lines = text.split("\n")
        items.append(marker + "\n".join([lines[0], *(indent + line for line in lines[1:])]))
    return "\n".join(items)
