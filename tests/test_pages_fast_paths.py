"""The parsers' fast paths give exactly what the plain XPath / regex / str versions gave.

Speed work parses clean UTF-8 bytes instead of the decoded str, replaced whole-tree XPath
walks with C-level tag walks (``iter_tags``), a class-token XPath on every element with a
substring XPath on the ``class`` attributes and a token test of the few that pass
(``Document.with_class``) and the white-space fold of ``clean_text``
with one that leaves lone spaces alone. Each is checked here against the reference it
replaced, on every real capture and on small pages written to hit the edge cases.
"""

from __future__ import annotations

import random
import re
import unicodedata
from pathlib import Path

import lxml.html
import pytest
from lxml import etree

from topics_crawler.items.values import clean_text
from topics_crawler.pages import Document
from topics_crawler.pages._body import count_words
from topics_crawler.pages._html_tree import iter_tags
from topics_crawler.pages._markdown_dom import (
    _GRAF_XPATH,
    _article_blocks,
    _is_byline,
    _outermost_grafs,
    _tag,
    _walk,
)

#: The word regex :func:`count_words` ran on the whole text before it skipped plain tokens.
REFERENCE_WORD_RE = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
CLASS_NAMES = (
    "graf",
    "graf--title",
    "pw-post-title",
    "pw-author-name",
    "pw-multi-vote-count",
    "postMetaInline",
    "postArticle",
)

#: Edge cases for the article walk: nested articles, an article inside a list item and
#: inside a byline, a byline inside the article, blocks nested in blocks (a heading in a
#: caption counts, a paragraph in a quote does not), a second top-level ``<html>`` (as in
#: a broken capture).
EDGE_PAGE = """<html><head><meta name="a" content="1"></head><body>
<ul><li><article><p>in a list item</p></article></li></ul>
<div class="pw-author x"><article><p>in a byline</p></article></div>
<article><h2>Title</h2>
  <div class="pw-post-byline-header"><p>byline</p></div>
  <p class="pw-reading-time">4 min</p>
  <blockquote><p>nested in quote</p></blockquote>
  <article><p>inner article</p><li>loose li</li></article>
  <figure><figcaption>caption <h4>h4 in caption</h4></figcaption></figure>
  <pre>code</pre>
  <section class="x PW-Author-Name"><p>upper-case byline</p></section>
  <div><script>var p = 1;</script><svg><p>in an svg</p></svg><div><p>deep</p></div></div>
</article>
<p>outside any article</p>
</body></html>
<html><body><article><p>second top-level html</p></article>
<a href="/@late">late</a><meta name="b" content="2"></body></html>"""


def html_captures(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.html"))


def edge_tree() -> lxml.html.HtmlElement:
    return lxml.html.fromstring(EDGE_PAGE)


def page_trees(folder: Path) -> list[tuple[str, lxml.html.HtmlElement]]:
    trees = [(path.name, lxml.html.fromstring(path.read_bytes())) for path in html_captures(folder)]
    return [*trees, ("edge page", edge_tree())]


def serialised(tree: lxml.html.HtmlElement | None) -> str:
    assert tree is not None
    return etree.tostring(tree.getroottree(), encoding="unicode")


def test_tree_from_utf8_bytes_equals_tree_from_text(real_pages: Path) -> None:
    for path in html_captures(real_pages):
        doc = Document(path.read_bytes(), "https://medium.com/p/1")
        assert doc._utf8_body is not None, path.name
        assert serialised(doc.tree) == serialised(lxml.html.fromstring(doc.text)), path.name


@pytest.mark.parametrize(
    "body",
    [
        '<html><head><meta charset="iso-8859-1"></head><body><p>café 🎉</p></body></html>',
        "\ufeff<html><body><p>café</p></body></html>",
        "<html><body><p>naïve</p></body></html>",
    ],
)
def test_utf8_bytes_are_read_as_utf8_whatever_the_page_declares(body: str) -> None:
    doc = Document(body.encode("utf-8"), "https://medium.com/p/1")
    assert serialised(doc.tree) == serialised(lxml.html.fromstring(body))


def test_other_encodings_parse_the_decoded_text() -> None:
    doc = Document(
        "<html><body><p>café</p></body></html>".encode("latin-1"), "u", encoding="latin-1"
    )
    assert doc._utf8_body is None
    assert doc.tree is not None
    assert doc.tree.text_content() == "café"


def walked_article_blocks(tree: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The reference the article XPath replaced: the Python walk of every outermost
    ``<article>`` that is not the byline."""
    blocks: list[lxml.html.HtmlElement] = []
    for article in iter_tags(tree, "article"):
        if not _is_byline(article) and all(_tag(a) != "article" for a in article.iterancestors()):
            _walk(article, blocks)
    return blocks


def test_article_blocks_match_the_walk(real_pages: Path) -> None:
    for name, tree in page_trees(real_pages):
        assert _article_blocks(tree) == walked_article_blocks(tree), name


def test_article_blocks_on_the_edge_page() -> None:
    tree = edge_tree()
    texts = [element.text_content().strip() for element in _article_blocks(tree)]
    assert texts == [
        "in a list item",  # an article inside a block or a byline: walked in Python
        "in a byline",
        "Title",
        "nested in quote",
        "inner article",
        "loose li",
        "caption h4 in caption",
        "code",
        "deep",
        "second top-level html",
    ]
    assert _article_blocks(tree) == walked_article_blocks(tree)


#: Grafs inside grafs (a list item in a graf list, a graf in a ``grafx`` wrapper that only
#: looks like one) and a second top-level ``<html>``.
NESTED_GRAFS_PAGE = """<html><body><div class="section grafx">
<p class="graf graf--p">one</p>
<ul class="graf postList"><li class="graf graf--li">item</li></ul>
<div class="Graf"><p class="graf">under a non-graf</p></div>
<div class="graf"><div><p class="x graf--p graf">deep</p></div></div>
</div></body></html>
<html><body><p class="graf">second html</p></body></html>"""


def test_outermost_grafs_match_the_ancestor_xpath(real_pages: Path) -> None:
    pages = [page.read_bytes() for page in html_captures(real_pages)]
    for body in [*pages, NESTED_GRAFS_PAGE.encode()]:
        doc = Document(body, "https://medium.com/p/x")
        assert doc.tree is not None
        assert _outermost_grafs(doc.with_class("graf")) == doc.xpath(_GRAF_XPATH)
    doc = Document(NESTED_GRAFS_PAGE, "https://medium.com/p/x")
    texts = [e.text_content().strip() for e in _outermost_grafs(doc.with_class("graf"))]
    assert texts == ["one", "item", "under a non-graf", "deep", "second html"]


@pytest.mark.parametrize("tag", ["meta", "link", "script", "a", "article"])
def test_iter_tags_matches_descendant_xpath(real_pages: Path, tag: str) -> None:
    for name, tree in page_trees(real_pages):
        assert list(iter_tags(tree, tag)) == tree.xpath(f"//{tag}"), name


def test_iter_tags_walks_every_top_level_element() -> None:
    doc = Document(EDGE_PAGE, "https://medium.com/p/1")
    assert doc.meta == {"a": "1", "b": "2"}
    assert [a.get("href") for a in doc.iter_tags("a")] == ["/@late"]


def test_iter_tags_without_a_tree_is_empty() -> None:
    doc = Document(b"  \n", "https://medium.com/p/1")
    assert list(doc.iter_tags("a")) == []
    assert doc.errors == ["empty body"]


@pytest.mark.parametrize("name", CLASS_NAMES)
def test_with_class_matches_the_token_xpath(real_pages: Path, name: str) -> None:
    token_only = f"//*[contains(concat(' ', normalize-space(@class), ' '), ' {name} ')]"
    for page in [*html_captures(real_pages), None]:
        body = page.read_bytes() if page is not None else EDGE_PAGE.encode()
        doc = Document(body, "https://medium.com/p/x")
        assert doc.with_class(name) == doc.xpath(token_only), page


def test_document_contains_remembers_the_answer() -> None:
    doc = Document("<html><body>postArticle</body></html>", "https://medium.com/p/1")
    assert doc.contains("postArticle")
    assert not doc.contains("graf--title")
    doc._text = "changed graf--title"  # each answer is scanned once per page, not again
    assert doc.contains("postArticle")
    assert not doc.contains("graf--title")


@pytest.mark.parametrize("as_bytes", [True, False])
def test_document_contains_with_a_shared_beginning_matches_a_plain_search(as_bytes: bool) -> None:
    """A marker starting with a shared beginning (``pw-``, ``graf``) is not looked for when
    the beginning is absent; every answer must still be the plain substring test."""
    markers = ["pw-author-name", "pw-", "pw-x", "graf--title", "graf", 'data-testid="a"', "zz"]
    pages = ["", "pw", "pw-", "a pw-author-nam", "pw-author-name", "grafgraf--title", "zz pw-x"]
    pages += ['data-testid="a" graf', "gra f--title pw -author-name"]
    for text in pages:
        page = f"<html><body>{text}</body></html>"
        for order in (markers, markers[::-1]):
            doc = Document(page.encode() if as_bytes else page, "https://medium.com/p/1")
            assert [doc.contains(m) for m in order] == [m in page for m in order], page


def reference_clean_text(value: str) -> str | None:
    """``clean_text`` before the speed change: every blank run replaced."""
    text = unicodedata.normalize("NFC", value).replace("\u00a0", " ")
    text = re.sub(r"[ \t\r\f\v]+", " ", text)
    text = re.sub(r" *\n *", "\n", text).strip()
    return text or None


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        ("a \t b", "a b"),
        ("a\t b", "a b"),
        ("a \tb", "a b"),
        ("a\tb", "a b"),
        ("a\u00a0 b", "a b"),
        ("  x  \n  y \t\n\tz ", "x\ny\nz"),
        ("one two", "one two"),
        ("zero\u200bwidth  space", "zero\u200bwidth space"),
        ("tab\tafter\u200b", "tab after\u200b"),
        ("\t\r\f\v", None),
    ],
)
def test_clean_text_folds_blanks(raw: str, cleaned: str | None) -> None:
    assert clean_text(raw) == cleaned == reference_clean_text(raw)


def test_clean_text_matches_the_reference_on_random_blanks() -> None:
    rng = random.Random(20261130)
    alphabet = " \t\r\n\f\vab\u00a0"
    for _ in range(5000):
        raw = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        assert clean_text(raw) == reference_clean_text(raw), repr(raw)


def test_count_words_matches_the_word_regex_on_random_text() -> None:
    """:func:`count_words` counts blank-separated letter-and-digit tokens without the
    regex; the count must be the regex's on any text."""
    alphabet = "ab é_-'’ \n\t1.,😀ß\u00a0\u2028x–*#`٣"
    rng = random.Random(7)
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        assert count_words(text) == len(REFERENCE_WORD_RE.findall(text)), repr(text)


PREFIX_PAGE = """<html><body>
<h1 class="pw-post-title">T</h1><p class="x pw-post-title-not">no</p>
<span class="a\tpw-author-name\nb">A</span><div class="pw-author-name"><b class="pw-">?</b></div>
<i class="xpw-author-name">no</i><em class="PW-AUTHOR-NAME">no (case)</em>
</body></html>"""


@pytest.mark.parametrize("name", ["pw-post-title", "pw-author-name", "pw-", "pw-nowhere"])
def test_with_class_prefix_walk_matches_the_token_xpath(name: str) -> None:
    """Names of a shared prefix (``pw-``) are picked from one walk; each must be exactly
    what the token XPath selects, in document order, whichever is asked first."""
    token_only = f"//*[contains(concat(' ', normalize-space(@class), ' '), ' {name} ')]"
    doc = Document(PREFIX_PAGE, "https://medium.com/p/x")
    doc.with_class("pw-author-name" if name != "pw-author-name" else "pw-post-title")
    assert doc.with_class(name) == doc.tree.xpath(token_only)


def test_with_class_prefix_walk_on_the_captures(real_pages: Path) -> None:
    for page in sorted(real_pages.glob("*.html")):
        doc = Document(page.read_bytes(), "https://medium.com/p/x")
        for name in ("pw-author-name", "pw-post-title", "pw-multi-vote-count"):
            token_only = f"//*[contains(concat(' ', normalize-space(@class), ' '), ' {name} ')]"
            assert doc.with_class(name) == doc.xpath(token_only), (page.name, name)
