"""Reads our Markdown back with a CommonMark parser (markdown-it-py), for the tests.

A test never checks the Markdown by string matching alone: it parses it as any
Markdown reader would and checks what a reader gets (headings, links, code). The
renderer's tests build their input and read their output with :func:`node`, :func:`md`
and :func:`styles_of`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from topics_crawler.pages.markdown import Block, render_markdown
from topics_crawler.pages.state import Node, State

_PARSER = MarkdownIt("commonmark")


@dataclass
class ReadBack:
    """What a CommonMark reader sees in a Markdown text."""

    headings: list[tuple[int, str]] = field(default_factory=list)
    """``(level, text)`` in order."""
    links: list[tuple[str, str]] = field(default_factory=list)
    """``(href, text)`` in order."""
    images: list[tuple[str, str]] = field(default_factory=list)
    """``(src, alt)`` in order."""
    code_blocks: list[tuple[str, str]] = field(default_factory=list)
    """``(info, content)`` of fenced code blocks."""
    styled: list[tuple[str, frozenset[str]]] = field(default_factory=list)
    """Every character of inline text with the styles over it (``STRONG``, ``EM``,
    ``CODE``, ``A:<href>``)."""
    blocks: list[str] = field(default_factory=list)
    """Block token types in order (``heading_open``, ``bullet_list_open``, …)."""


def read_back(markdown: str) -> ReadBack:
    """Parse ``markdown`` and collect what a reader sees."""
    out = ReadBack()
    tokens = _PARSER.parse(markdown)
    for index, token in enumerate(tokens):
        if token.type.endswith("_open") or token.type in {"fence", "hr", "code_block"}:
            out.blocks.append(token.type)
        if token.type == "heading_open":
            children = tokens[index + 1].children or []
            text = "".join(_text_of(child)[0] for child in children)
            out.headings.append((int(token.tag[1]), text))
        elif token.type == "fence":
            out.code_blocks.append((token.info, token.content))
        elif token.type == "inline":
            _inline(token.children or [], out)
    return out


def _inline(children: list[Token], out: ReadBack) -> None:
    active: list[str] = []
    link_text: list[str] = []
    href = None
    for token in children:
        kind = token.type
        if kind == "strong_open":
            active.append("STRONG")
        elif kind == "em_open":
            active.append("EM")
        elif kind in {"strong_close", "em_close"}:
            active.remove("STRONG" if kind == "strong_close" else "EM")
        elif kind == "link_open":
            href = str(token.attrs.get("href", ""))
            active.append(f"A:{href}")
            link_text = []
        elif kind == "link_close":
            active = [style for style in active if not style.startswith("A:")]
            out.links.append((href or "", "".join(link_text)))
            href = None
        elif kind == "image":
            alt = "".join(child.content for child in token.children or [])
            out.images.append((str(token.attrs.get("src", "")), alt))
        else:
            text, extra = _text_of(token)
            if href is not None:
                link_text.append(text)
            styles = frozenset([*active, *extra])
            out.styled.extend((char, styles) for char in text)


def _text_of(token: Token) -> tuple[str, tuple[str, ...]]:
    if token.type == "code_inline":
        return token.content, ("CODE",)
    if token.type in {"softbreak", "hardbreak"}:
        return "\n", ()
    return token.content, ()


def node(raw: dict[str, Any], cache: dict[str, Any] | None = None) -> Node:
    """``raw`` as a state node; references resolve in ``cache`` (an Apollo cache)."""
    return Node(State.from_apollo(cache or {}), raw)


def md(*blocks: Block, preview: bool = False) -> str:
    rendered = render_markdown(list(blocks), preview=preview)
    assert rendered is not None
    return rendered


def styles_of(markdown: str, text: str, word: str) -> frozenset[str]:
    """Styles over the first character of ``word`` in ``text`` (one paragraph), as read back."""
    seen = [(c, s) for c, s in read_back(markdown).styled if not c.isspace()]
    assert "".join(c for c, _ in seen) == "".join(c for c in text if not c.isspace())
    index = text.index(word)
    return seen[index - sum(c.isspace() for c in text[:index])][1]
