"""The body of a page without state, read from its markup into Markdown blocks.

Blocks are found the way a reader sees them, not by CSS: 2015–2018 pages mark every
body block with the ``graf`` class (``graf--pullquote`` tells a pull quote from a block
quote); 2019+ pages put the body in ``<article>``, whose paragraphs, headings, lists,
code, quotes and figures are taken in document order, leaving out the byline. Inline
markup becomes :class:`~topics_crawler.pages.markdown.Markup` over the block's text:
``strong``/``b``, ``em``/``i``, ``code`` and ``a[href]`` (made absolute). ``<pre>``
keeps every byte, ``<br>`` as a line break. Heading levels follow the page generation:
2019+ pages render Medium's ``H3``/``H4`` as ``<h1>``/``<h2>``, older pages as
``<h3>``/``<h4>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urljoin

import lxml.html
from lxml import etree

from topics_crawler.pages._html_tree import iter_tags
from topics_crawler.pages.markdown import Block, Markup, embed_url

_GRAF_TOKEN = "contains(concat(' ', normalize-space(@class), ' '), ' graf ')"
#: Outermost elements with the class token ``graf``: a substring test on every ``class``
#: first, the token and ancestor tests only on the few that pass (libxml2 does the walk).
_GRAF_XPATH = (
    f"//@class[contains(., 'graf')]/parent::*[{_GRAF_TOKEN}][not(ancestor::*[{_GRAF_TOKEN}])]"
)
_PARAGRAPH_NAME = re.compile(r"[0-9a-f]{4}")
_BLANKS = re.compile(r"[ \t\r\n\f]+")
_INLINE = {"strong": "STRONG", "b": "STRONG", "em": "EM", "i": "EM", "code": "CODE"}
_BLOCK_TAGS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "li"})
_BLOCK_TAGS |= {"blockquote", "figure"}
#: Never body text: scripts, styles, controls.
_SKIPPED_TAGS = frozenset({"script", "style", "noscript", "button", "svg", "template"})
#: The byline of 2022+ pages (author, date, reading time) is not body.
_BYLINE_CLASSES = ("pw-published-date", "pw-author", "pw-reading-time", "pw-post-byline-header")
_STOP_TAGS = tuple(sorted(_BLOCK_TAGS | _SKIPPED_TAGS))
#: Elements whose ``class`` may name a byline (every byline class has ``w-``).
_MAYBE_BYLINES = etree.XPath(".//@class[contains(., 'w-') or contains(., 'W-')]/..")
_MODERN_HEADINGS = {"h1": "H3", "h2": "H4", "h3": "H4", "h4": "H4", "h5": "H4", "h6": "H4"}
_LEGACY_HEADINGS = {"h1": "H2", "h2": "H2", "h3": "H3", "h4": "H4", "h5": "H4", "h6": "H4"}


def dom_blocks(
    tree: lxml.html.HtmlElement | None,
    base_url: str,
    *,
    graf: bool = True,
    grafs: list[lxml.html.HtmlElement] | None = None,
) -> list[Block]:
    """Markdown blocks of the story body in ``tree``; empty when none is found.
    ``graf=False`` skips looking for ``graf`` blocks (the page text has no such class);
    ``grafs``: every element with the ``graf`` class, already found (the outermost are
    the blocks)."""
    if tree is None:
        return []
    if grafs is not None:
        grafs = _outermost_grafs(grafs)
    elif graf:
        grafs = tree.xpath(_GRAF_XPATH)
    if grafs:
        return [b for e in grafs if (b := _block(e, base_url, _LEGACY_HEADINGS)) is not None]
    elements = _within_named(list(_article_blocks(tree)))
    return [b for e in elements if (b := _block(e, base_url, _MODERN_HEADINGS)) is not None]


def _outermost_grafs(grafs: list[lxml.html.HtmlElement]) -> list[lxml.html.HtmlElement]:
    """``grafs`` (the page's ``graf`` elements, document order) that have no ancestor
    among them, as ``not(ancestor::…)`` selects: the grafs below each one taken are
    marked as it is taken (most grafs hold a few inline elements), not every graf's
    ancestors walked."""
    among = set(grafs)
    inside: set[lxml.html.HtmlElement] = set()
    outermost = []
    for element in grafs:
        if element in inside:
            continue
        outermost.append(element)
        if len(element):
            inside.update(e for e in element.iterdescendants() if e in among)
    return outermost


def _elements(query: etree.XPath, node: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The elements an element-selecting XPath finds under ``node``."""
    found = query(node)
    items = found if isinstance(found, list) else []
    return [item for item in items if isinstance(item, lxml.html.HtmlElement)]


def fragment_blocks(root: lxml.html.HtmlElement, base_url: str) -> list[Block]:
    """Blocks of an HTML fragment whose children are the body (a feed item's content)."""
    elements: list[lxml.html.HtmlElement] = []
    _walk(root, elements)
    return [b for e in elements if (b := _block(e, base_url, _LEGACY_HEADINGS)) is not None]


def _is_named(element: lxml.html.HtmlElement) -> bool:
    """A body paragraph: Medium anchors each one by its name, a 4-hex ``id`` (on the block
    or, for code, on its line ``<span>``)."""
    if _PARAGRAPH_NAME.fullmatch(element.get("id") or ""):
        return True
    return _tag(element) == "pre" and any(
        _PARAGRAPH_NAME.fullmatch(child.get("id") or "") for child in element.iter("span")
    )


def _within_named(elements: list[lxml.html.HtmlElement]) -> list[lxml.html.HtmlElement]:
    """The blocks from the first named paragraph to the last, plus the figures right after
    it (figures carry no name on 2019+ pages): what an ``<article>`` holds around the body
    (byline, claps, "Written by", footer links) is left out. Pages without names keep all."""
    named = [index for index, element in enumerate(elements) if _is_named(element)]
    if not named:
        return elements
    end = named[-1] + 1
    while end < len(elements) and _tag(elements[end]) == "figure":
        end += 1
    return elements[named[0] : end]


def _tag(element: lxml.html.HtmlElement) -> str:
    tag = element.tag
    return tag.lower() if isinstance(tag, str) else ""


def _has_class(element: lxml.html.HtmlElement, name: str) -> bool:
    classes = element.get("class")
    return classes is not None and name in classes.lower().split()


def _is_byline(element: lxml.html.HtmlElement) -> bool:
    classes = (element.get("class") or "").lower()
    if "pw-" not in classes:  # every byline class starts so: most elements end here
        return False
    return any(name in classes for name in _BYLINE_CLASSES)


def _article_blocks(tree: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """Blocks of the outermost ``<article>`` elements in document order: not inside another
    block, a skipped element or the byline (what :func:`_walk` collects, see
    :func:`_blocks_under`). An article inside a block or a byline is walked in Python.
    Every top-level ``<html>`` of a broken capture is read (:func:`iter_tags`)."""
    blocks: list[lxml.html.HtmlElement] = []
    for article in iter_tags(tree, "article"):
        if _is_byline(article):
            continue
        ancestors = list(article.iterancestors())
        if any(_tag(a) == "article" for a in ancestors):
            continue
        if any(_tag(a) in _STOP_TAGS or _is_byline(a) for a in ancestors):
            _walk(article, blocks)
        else:
            blocks.extend(_blocks_under(article))
    return blocks


def _blocks_under(article: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """:func:`_walk` of an article by libxml2's tag walks: the block and skipped elements in
    document order, each taken unless it is inside one taken or skipped before it or in a
    byline. Python touches only those elements, not every element of the article."""
    covered: set[lxml.html.HtmlElement] = set()
    for element in _elements(_MAYBE_BYLINES, article):
        if _is_byline(element):
            covered.update(element.iter(*_STOP_TAGS))
    blocks = []
    for element in article.iter(*_STOP_TAGS):
        if element in covered:
            continue
        if element.tag in _BLOCK_TAGS:
            blocks.append(element)
        if len(element):  # most blocks hold no block: nothing below them to cover
            covered.update(element.iterdescendants(*_STOP_TAGS))
    return blocks


def _walk(parent: lxml.html.HtmlElement, blocks: list[lxml.html.HtmlElement]) -> None:
    for child in parent.iterchildren("*"):
        tag = _tag(child)
        if tag in _SKIPPED_TAGS or _is_byline(child):
            continue
        if tag in _BLOCK_TAGS:
            blocks.append(child)
        else:
            _walk(child, blocks)


def _block(element: lxml.html.HtmlElement, base_url: str, headings: dict[str, str]) -> Block | None:
    tag = _tag(element)
    if tag in headings:
        return _text_block(headings[tag], element, base_url)
    if tag == "pre":
        return Block("PRE", code_text(element))
    if tag == "li":
        parent = element.getparent()
        ordered = parent is not None and _tag(parent) == "ol"
        return _text_block("OLI" if ordered else "ULI", element, base_url)
    if tag == "blockquote":
        kind = "PQ" if _has_class(element, "graf--pullquote") else "BQ"
        return _text_block(kind, element, base_url)
    if tag == "figure":
        return _figure(element, base_url)
    if _has_class(element, "graf--mixtapeembed"):
        return _mixtape(element, base_url)
    if tag in {"ul", "ol"}:
        return None  # a graf-marked list: its items are grafs of their own
    return _text_block("P", element, base_url)


def _text_block(kind: str, element: lxml.html.HtmlElement, base_url: str) -> Block | None:
    text, markups = inline_text(element, base_url)
    if kind.startswith("H"):
        text = text.replace("\n", " ")
    return Block(kind, text, tuple(markups)) if text.strip() else None


def _figure(element: lxml.html.HtmlElement, base_url: str) -> Block | None:
    caption = next(element.iter("figcaption"), None)
    text, markups = inline_text(caption, base_url) if caption is not None else ("", [])
    frame = next(element.iter("iframe"), None)
    if frame is not None:
        src = frame.get("src") or frame.get("data-src")
        return Block("IFRAME", text, tuple(markups), src=embed_url(_absolute(src, base_url)))
    image = _image(element, base_url)
    if image is None:
        return Block("P", text, tuple(markups)) if text.strip() else None
    src, alt = image
    return Block("IMG", text, tuple(markups), src=src, alt=alt)


def _image(figure: lxml.html.HtmlElement, base_url: str) -> tuple[str, str | None] | None:
    """The full-size image of a figure. Lazy-loading pages show a blurred placeholder
    (``progressiveMedia-thumbnail`` 2015–2018, ``/max/60/…?q=20`` 2019–2020) and keep the
    real one in ``<noscript>``, ``data-src`` or ``srcset``; those come first."""
    images = list(figure.iter("img"))
    alt = next((i.get("alt") for i in images if i.get("alt")), None)
    for src in _image_sources(figure, images):  # the first one found wins
        if src:
            return _absolute(src, base_url) or src, alt
    return None


def _image_sources(
    figure: lxml.html.HtmlElement, images: list[lxml.html.HtmlElement]
) -> Iterator[str | None]:
    """A figure's image sources, best first, each looked up only when those before it
    gave nothing."""
    in_noscript = any(_tag(a) == "noscript" for a in figure.iterancestors())
    for image in images:
        if in_noscript or _noscript_between(image, figure):
            yield image.get("src")
    for image in images:
        yield image.get("data-src")
    for image in images:
        yield _last_srcset(image.get("srcset"))
    for source in figure.iter("source"):
        yield _last_srcset(source.get("srcset"))
    for image in images:
        if not _is_placeholder(image):
            yield image.get("src")


def _noscript_between(image: lxml.html.HtmlElement, figure: lxml.html.HtmlElement) -> bool:
    """True when a ``<noscript>`` between ``figure`` and ``image`` holds the image."""
    for ancestor in image.iterancestors():
        if _tag(ancestor) == "noscript":
            return True
        if ancestor is figure:
            return False
    return False


def _is_placeholder(image: lxml.html.HtmlElement) -> bool:
    src = image.get("src") or ""
    return "thumbnail" in (image.get("class") or "").lower() or src.endswith("?q=20")


def _last_srcset(srcset: str | None) -> str | None:
    candidates = [part.strip().split(" ")[0] for part in (srcset or "").split(",")]
    candidates = [c for c in candidates if c]
    return candidates[-1] if candidates else None


def _mixtape(element: lxml.html.HtmlElement, base_url: str) -> Block | None:
    text, markups = inline_text(element, base_url)
    link = next((a.get("href") for a in element.iter("a") if a.get("href")), None)
    href = _absolute(link, base_url)
    if not text.strip():
        return None
    return Block("MIXTAPE_EMBED", text, tuple(markups), src=href)


#: Characters that make :func:`urljoin` rewrite an absolute URL (it drops an empty query,
#: fragment or parameters and the tabs and line breaks it refuses; brackets are IPv6).
_REWRITTEN_BY_URLJOIN = frozenset("?#;[]\t\r\n")


def _absolute(href: str | None, base_url: str) -> str | None:
    """``href`` made absolute against ``base_url`` (:func:`urljoin`); None for none, a
    script or data URL, or one ``urljoin`` refuses."""
    if not href or href.startswith(("javascript:", "data:")):
        return None
    href = href.strip()
    if (
        href.startswith("https://")
        and href[8:9] not in ("", "/")  # a host follows
        and base_url.startswith("https:")
        and _REWRITTEN_BY_URLJOIN.isdisjoint(href)
    ):
        return href  # what urljoin gives such a URL, without splitting and joining it
    try:
        return urljoin(base_url, href)
    except ValueError:
        return None


def code_text(element: lxml.html.HtmlElement) -> str:
    """Text of a code block byte for byte, ``<br>`` as a line break."""
    parts = [element.text or ""]
    for child in element:
        if _tag(child) == "br":
            parts.append("\n")
        elif isinstance(child.tag, str):
            parts.append(code_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def inline_text(element: lxml.html.HtmlElement, base_url: str) -> tuple[str, list[Markup]]:
    """Text of ``element`` (blank runs folded, ``<br>`` kept) and its markups."""
    parts: list[str] = []
    markups: list[Markup] = []
    _collect(element, base_url, parts, markups, 0)
    return "".join(parts), markups


def _folded(text: str) -> str:
    """``text`` with each run of blanks as one space (most texts have none)."""
    if "  " in text or "\n" in text or "\t" in text or "\r" in text or "\f" in text:
        return _BLANKS.sub(" ", text)
    return text


def _collect(
    element: lxml.html.HtmlElement,
    base_url: str,
    parts: list[str],
    markups: list[Markup],
    length: int,
) -> int:
    """Append the text under ``element`` to ``parts`` and its markups (offsets from
    ``length``, the text before it); return the length after it."""
    text = element.text
    if text:
        text = _folded(text)
        parts.append(text)
        length += len(text)
    for child in element:
        tag = _tag(child)
        if tag == "br":
            parts.append("\n")
            length += 1
        elif tag and tag not in _SKIPPED_TAGS and tag != "figcaption":
            start = length
            length = _collect(child, base_url, parts, markups, length)
            if tag == "a":
                href = _absolute(child.get("href"), base_url)
                if href:
                    markups.append(Markup("A", start, length, href))
            else:
                kind = _INLINE.get(tag)
                if kind:
                    markups.append(Markup(kind, start, length))
        tail = child.tail
        if tail:
            tail = _folded(tail)
            parts.append(tail)
            length += len(tail)
    return length
