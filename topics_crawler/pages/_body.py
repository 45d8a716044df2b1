"""Story body as Markdown-flavoured plain text.

The body comes from the embedded ``bodyModel`` paragraphs when the page has
them (integer types in 2015–2018 JSON, string types in the Apollo cache), else
from the DOM paragraphs. Both are reduced to ``(type, text)`` pairs and
rendered the same way: ``### `` headings, ``- `` list items, fenced code,
``> `` quotes, paragraphs separated by blank lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import filterfalse

import lxml.html

from topics_crawler.normalize import clean_text
from topics_crawler.pages._document import iter_tags
from topics_crawler.pages._markdown_state import LEGACY_PARAGRAPH_TYPES
from topics_crawler.pages.state import Node

Paragraph = tuple[str, str]

_HEADING_PREFIX = {"H1": "# ", "H2": "## ", "H3": "### ", "H4": "#### "}
_QUOTES = frozenset({"BQ", "PQ"})
_SKIPPED = frozenset({"IFRAME"})
#: Longest text whose words are counted from a list of them (faster); longer ones one by one.
_FINDALL_LIMIT = 1_000_000
_WORD_RE = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*", re.UNICODE)


def legacy_paragraphs(body_model: Node | None) -> list[Paragraph]:
    """``(type, text)`` pairs of a legacy ``bodyModel`` (int paragraph types)."""
    out: list[Paragraph] = []
    for paragraph in body_model.nodes("paragraphs") if body_model is not None else []:
        kind = paragraph.int("type")
        name = LEGACY_PARAGRAPH_TYPES.get(kind, "P") if kind is not None else "P"
        out.append((name, _text(paragraph)))
    return out


def apollo_paragraphs(body_model: Node | None) -> list[Paragraph]:
    """``(type, text)`` pairs of an Apollo ``bodyModel`` (``Paragraph:<id>`` references)."""
    out: list[Paragraph] = []
    for paragraph in body_model.nodes("paragraphs") if body_model is not None else []:
        out.append((paragraph.str("type") or "P", _text(paragraph)))
    return out


def _text(paragraph: Node) -> str:
    return paragraph.str("text") or ""


def render_paragraphs(paragraphs: Iterable[Paragraph]) -> str | None:
    """Markdown-flavoured text of ``(type, text)`` pairs; None when nothing is left."""
    blocks = [block for block in _blocks(list(paragraphs)) if block]
    return "\n\n".join(blocks) if blocks else None


def _blocks(paragraphs: list[Paragraph]) -> Iterator[str]:
    index = 0
    while index < len(paragraphs):
        kind = paragraphs[index][0]
        if kind in {"PRE", "ULI", "OLI"}:
            end = index
            while end < len(paragraphs) and paragraphs[end][0] == kind:
                end += 1
            yield _group(kind, [text for _, text in paragraphs[index:end]])
            index = end
            continue
        yield _single(*paragraphs[index])
        index += 1


def _group(kind: str, texts: list[str]) -> str:
    if kind == "PRE":
        code = "\n".join(text.rstrip() for text in texts if text.strip())
        return f"```\n{code}\n```" if code else ""
    lines = [clean_text(text) for text in texts]
    items = [line.replace("\n", " ") for line in lines if line]
    if kind == "OLI":
        return "\n".join(f"{number}. {item}" for number, item in enumerate(items, 1))
    return "\n".join(f"- {item}" for item in items)


def _single(kind: str, text: str) -> str:
    if kind in _SKIPPED:
        return ""
    cleaned = clean_text(text)
    if cleaned is None:
        return ""
    if kind in _HEADING_PREFIX:
        return _HEADING_PREFIX[kind] + cleaned.replace("\n", " ")
    if kind in _QUOTES:
        return "\n".join(f"> {line}" for line in cleaned.split("\n"))
    return cleaned


def count_words(text: str | None) -> int | None:
    """Words in ``text`` (Markdown markers and code fences do not count); None for no text."""
    if not text:
        return None
    if len(text) > _FINDALL_LIMIT:
        return sum(1 for _word in _WORD_RE.finditer(text))  # a huge body: no list of every word
    # A word never spans white space, and a blank-separated token of letters and digits
    # only (``str.isalnum``: what ``[^\W_]`` matches) is one word: the regex reads only
    # the other tokens (punctuation, hyphens, Markdown marks), about a third of the text.
    tokens = text.split()
    others = list(filterfalse(str.isalnum, tokens))
    words = len(tokens) - len(others)
    return words + len(_WORD_RE.findall(" ".join(others))) if others else words


_DOM_TYPES = {
    "h1": "H1",
    "h2": "H2",
    "h3": "H3",
    "h4": "H4",
    "pre": "PRE",
    "blockquote": "BQ",
    "figcaption": "P",
    "p": "P",
}
#: 2019+ React body: these blocks inside ``<article>`` …
ARTICLE_BLOCK_TAGS = ("p", "h1", "h2", "h3", "h4", "pre", "li", "blockquote", "figcaption")
#: … unless nested in one of these blocks …
_NESTING_TAGS = frozenset({"p", "li", "blockquote", "pre"})
#: … or inside (or being) the byline, whose class names contain one of these.
_BYLINE_CLASSES = ("pw-published-date", "pw-author", "pw-reading-time", "pw-post-byline-header")


def class_xpath(name: str) -> str:
    """XPath of the elements whose ``class`` has the token ``name``. It walks the ``class``
    attributes with a plain substring test and runs the token test only on the owners of
    the few that pass: about twice as fast in libxml2 as a token test on every element."""
    return (
        f"//@class[contains(., '{name}')]/parent::*"
        f"[contains(concat(' ', normalize-space(@class), ' '), ' {name} ')]"
    )


#: G1/G2 server-rendered body: every block carries the ``graf`` class.
_GRAF_XPATH = class_xpath("graf")


def dom_paragraphs(
    tree: lxml.html.HtmlElement | None,
    *,
    graf: bool = True,
    grafs: list[lxml.html.HtmlElement] | None = None,
) -> list[Paragraph]:
    """``(type, text)`` pairs read from the body markup (``graf`` blocks, else ``<article>``).
    ``graf=False`` skips the ``graf`` walk (the page text has no such class); ``grafs``: the
    page's ``graf`` elements, already found (:meth:`Document.with_class`)."""
    if tree is None:
        return []
    if grafs is None:
        grafs = tree.xpath(_GRAF_XPATH) if graf else []
    elements = grafs or article_blocks(tree)
    return [(_dom_type(element), text_with_breaks(element)) for element in elements]


def article_blocks(tree: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """Body blocks of a 2019+ page in document order: one walk down each outermost
    ``<article>`` that does not enter blocks or the byline (an XPath ``ancestor::`` test on
    every element of the page costs more than building the tree)."""
    blocks: list[lxml.html.HtmlElement] = []
    for article in iter_tags(tree, "article"):
        if _is_outermost_body_article(article):
            _collect_blocks(article, blocks)
    return blocks


def _is_outermost_body_article(article: lxml.html.HtmlElement) -> bool:
    """Not inside another ``<article>`` (that one's walk covers it), a block or the byline."""
    if _is_byline(article):
        return False
    return not any(
        ancestor.tag == "article" or ancestor.tag in _NESTING_TAGS or _is_byline(ancestor)
        for ancestor in article.iterancestors()
    )


def _collect_blocks(parent: lxml.html.HtmlElement, blocks: list[lxml.html.HtmlElement]) -> None:
    """Append the body blocks under ``parent``; nothing inside a nesting block or the byline."""
    for child in parent.iterchildren("*"):
        if _is_byline(child):
            continue
        if child.tag in ARTICLE_BLOCK_TAGS:
            blocks.append(child)
        if child.tag not in _NESTING_TAGS:
            _collect_blocks(child, blocks)


def _is_byline(element: lxml.html.HtmlElement) -> bool:
    classes = element.get("class")
    return classes is not None and "pw-" in classes and any(n in classes for n in _BYLINE_CLASSES)


def text_with_breaks(element: lxml.html.HtmlElement) -> str:
    """Text content of ``element`` with ``<br>`` kept as a line break (code blocks)."""
    parts = [element.text or ""]
    for child in element:
        if child.tag == "br":
            parts.append("\n")
        elif isinstance(child.tag, str):
            parts.append(text_with_breaks(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _dom_type(element: lxml.html.HtmlElement) -> str:
    tag = str(element.tag).lower()
    if tag == "li":
        parent = element.getparent()
        return "OLI" if parent is not None and str(parent.tag).lower() == "ol" else "ULI"
    if tag == "figure":
        return "IMG"
    return _DOM_TYPES.get(tag, "P")
