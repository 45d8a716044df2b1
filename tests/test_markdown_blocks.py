"""The Markdown renderer's blocks: each kind of block, the state's paragraph objects (legacy
and Apollo 2) and the DOM of a page without state, rendered and read back by a real parser.

Each case is checked by parsing the output with markdown-it-py (CommonMark) and
looking at what a reader gets; the inline markups are in ``tests/test_markdown_inline.py``.
"""

from __future__ import annotations

import random
from typing import Any
from urllib.parse import urljoin

import lxml.html

from tests.markdown_readback import md, node, read_back, styles_of
from topics_crawler.pages._markdown_dom import _absolute, dom_blocks
from topics_crawler.pages.markdown import (
    IMAGE_URL,
    PREVIEW_NOTICE,
    Block,
    Markup,
    apollo_blocks,
    legacy_blocks,
    render_markdown,
)

# --- blocks --------------------------------------------------------------------------------


def test_headings_lists_quotes_and_rule() -> None:
    out = md(
        Block("H3", "Big heading"),
        Block("P", "Intro."),
        Block("H4", "Small heading"),
        Block("ULI", "one"),
        Block("ULI", "two"),
        Block("OLI", "first"),
        Block("OLI", "second"),
        Block("HR"),
        Block("BQ", "quoted\nsecond line"),
        Block("PQ", "pulled"),
    )
    seen = read_back(out)
    assert seen.headings == [(3, "Big heading"), (4, "Small heading")]
    assert seen.blocks.count("bullet_list_open") == 1
    assert seen.blocks.count("ordered_list_open") == 1
    assert seen.blocks.count("list_item_open") == 4
    assert seen.blocks.count("blockquote_open") == 2
    assert "hr" in seen.blocks
    assert "1. first\n2. second" in out


def test_code_block_keeps_every_byte_and_outlasts_backticks() -> None:
    code = "def f():\n\treturn '```'  \n\n  # trailing spaces kept  "
    out = md(Block("PRE", code), Block("PRE", "second = 2"), Block("P", "after"))
    (info, content), *_ = read_back(out).code_blocks
    assert info == ""
    assert content == code + "\nsecond = 2\n"
    assert out.startswith("````\n")


def test_code_block_language_from_state() -> None:
    body = {
        "paragraphs": [
            {"type": "PRE", "text": "x = 1", "codeBlockMetadata": {"lang": "python"}},
        ]
    }
    assert read_back(md(*apollo_blocks(node(body)))).code_blocks == [("python", "x = 1\n")]


def test_image_with_alt_and_caption_with_link() -> None:
    block = Block(
        "IMG",
        "Photo by Ada",
        (Markup("A", 9, 12, "https://example.com/ada"),),
        src="https://miro.medium.com/v2/resize:fit:1400/1*abc.jpeg",
        alt="A cat [sleeping]",
    )
    seen = read_back(md(block))
    assert seen.images == [(block.src, "A cat [sleeping]")]
    assert seen.links == [("https://example.com/ada", "Ada")]
    assert styles_of(md(block), block.text, "Photo") == {"EM"}
    assert styles_of(md(block), block.text, "Ada") == {"EM", "A:https://example.com/ada"}


def test_embeds_are_links() -> None:
    iframe = Block("IFRAME", "", src="https://twitter.com/x/status/1")
    mixtape = Block("MIXTAPE_EMBED", "Other story\nA subtitle", src="https://medium.com/p/abc")
    seen = read_back(md(iframe, mixtape))
    assert [href for href, _ in seen.links] == [iframe.src, mixtape.src]


def test_escaping_reads_back_as_the_same_text() -> None:
    text = "# not a heading *nor* _this_ [x](y) <b>tag</b> a\\b `c` 3 < 4 &amp;"
    for line_start in ("- item?", "1. step?", "> quote?", "+ plus", "=== rule?"):
        seen = read_back(md(Block("P", line_start)))
        assert seen.blocks == ["paragraph_open"]
        assert "".join(c for c, _ in seen.styled) == line_start
    seen = read_back(md(Block("P", text)))
    assert seen.blocks == ["paragraph_open"]
    assert "".join(c for c, _ in seen.styled) == text
    assert not seen.links


def test_preview_says_so() -> None:
    assert md(Block("P", "First paragraph."), preview=True).endswith(PREVIEW_NOTICE)


def test_nothing_to_render_is_none() -> None:
    assert render_markdown([]) is None
    assert render_markdown([Block("P", "  "), Block("HR"), Block("PRE", "\n")]) is None


# --- the state's paragraph objects ---------------------------------------------------------


def test_legacy_integer_types_and_sections() -> None:
    body = {
        "sections": [{"name": "a", "startIndex": 0}, {"name": "b", "startIndex": 2}],
        "paragraphs": [
            {"type": 3, "text": "Title"},
            {"type": 1, "text": "bold and link", "markups": [
                {"type": 1, "start": 0, "end": 4},
                {"type": 3, "start": 9, "end": 13, "href": "https://e.com"},
            ]},
            {"type": 4, "text": "cap", "metadata": {"id": "1*x.png"}},
            {"type": 11, "text": "", "iframe": {"mediaResourceId": "m1"}},
            {"type": 8, "text": "code"},
            {"type": 99, "text": "unknown type"},
            {"type": "13", "text": "wrong-typed type"},
            "not a paragraph",
        ],
    }  # fmt: skip
    out = md(*legacy_blocks(node(body)))
    seen = read_back(out)
    assert seen.headings == [(3, "Title")]
    assert ("https://e.com", "link") in seen.links
    assert ("https://medium.com/media/m1", "https://medium.com/media/m1") in seen.links
    assert seen.images == [(IMAGE_URL.format(id="1*x.png"), "")]
    assert seen.code_blocks == [("", "code\n")]
    assert "hr" in seen.blocks
    assert "unknown type" in out
    assert "wrong-typed type" in out


def apollo2_state() -> dict[str, Any]:
    """Apollo-2 form: generated ``$`` keys for nested objects, ``{"type": "id"}`` refs."""

    def ref(key: str) -> dict[str, Any]:
        return {"type": "id", "generated": key.startswith("$"), "id": key}

    return {
        "Paragraph:p_0": {
            "type": "IFRAME",
            "text": "A tweet",
            "iframe": ref("$Paragraph:p_0.iframe"),
            "markups": [],
        },
        "$Paragraph:p_0.iframe": {"mediaResource": ref("MediaResource:m1")},
        "MediaResource:m1": {
            "id": "m1",
            "iframeSrc": "https://cdn.embedly.com/widgets/media.html?url=https%3A//twitter.com/a/status/1",
        },
        "Paragraph:p_1": {
            "type": "P",
            "text": "see this",
            "markups": [ref("$Paragraph:p_1.markups.0")],
        },
        "$Paragraph:p_1.markups.0": {"type": "A", "start": 4, "end": 8, "href": "https://e.com"},
        "Paragraph:p_2": {
            "type": "IMG",
            "text": "",
            "metadata": ref("ImageMetadata:1*y.jpeg"),
            "markups": [],
        },
        "ImageMetadata:1*y.jpeg": {"id": "1*y.jpeg", "alt": "the alt"},
    }


def test_apollo2_references_are_followed() -> None:
    body = {"paragraphs": [{"type": "id", "id": f"Paragraph:p_{n}"} for n in range(3)]}
    seen = read_back(md(*apollo_blocks(node(body, apollo2_state()))))
    assert seen.links == [
        ("https://twitter.com/a/status/1", "https://twitter.com/a/status/1"),
        ("https://e.com", "this"),
    ]
    assert seen.images == [(IMAGE_URL.format(id="1*y.jpeg"), "the alt")]


# --- the DOM of a page without state ------------------------------------------------------


def test_dom_blocks_read_what_a_reader_sees() -> None:
    """A 2019+-style article with upper-case tags and attributes, a lazy image, a code
    block of line spans, a pull quote and a byline; the footer after the last named
    paragraph is not body."""
    html = """<HTML><BODY><ARTICLE>
      <DIV CLASS="pw-author">Ada Writer</DIV>
      <H1 ID="a001">Title <EM>here</EM></H1>
      <P ID="a002">Read <A HREF="/@ada?source=x">Ada</A> and <CODE>x = 1</CODE> or <B>bold</B>.</P>
      <FIGURE><IMG SRC="https://miro.medium.com/max/60/1*p.png?q=20">
        <NOSCRIPT><IMG ALT="a plot" SRC="https://miro.medium.com/max/1400/1*p.png"></NOSCRIPT>
        <FIGCAPTION>Plot by <A HREF="https://e.com/me">me</A></FIGCAPTION></FIGURE>
      <PRE><SPAN ID="a003">if a:<BR>    return  b  </SPAN><BR><SPAN ID="a004">`x`</SPAN></PRE>
      <OL><LI ID="a005">one</LI><LI ID="a006">two</LI></OL>
      <BLOCKQUOTE ID="a007"><P>quoted</P></BLOCKQUOTE>
      <H2 ID="a008">Small</H2>
      <P ID="a009">The end.</P>
      <FIGURE><IFRAME SRC="https://cdn.embedly.com/widgets/media.html?url=https%3A%2F%2Fyoutu.be%2Fx"></IFRAME></FIGURE>
      <H2>Written by Ada</H2><P>Follow</P>
    </ARTICLE></BODY></HTML>"""
    tree = lxml.html.fromstring(html)
    out = md(*dom_blocks(tree, "https://medium.com/@ada/a-0123456789ab"))
    seen = read_back(out)
    assert seen.headings == [(3, "Title here"), (4, "Small")]
    assert ("https://medium.com/@ada?source=x", "Ada") in seen.links
    assert ("https://e.com/me", "me") in seen.links
    assert seen.images == [("https://miro.medium.com/max/1400/1*p.png", "a plot")]
    assert seen.code_blocks == [("", "if a:\n    return  b  \n`x`\n")]
    assert seen.blocks.count("list_item_open") == 2
    assert "blockquote_open" in seen.blocks
    assert ("https://youtu.be/x", "https://youtu.be/x") in seen.links
    assert "Written by" not in out
    assert "Ada Writer" not in out


def test_dom_blocks_of_legacy_grafs() -> None:
    html = """<div class="section-inner">
      <h3 class="graf graf--h3" id="b001">Heading</h3>
      <blockquote class="graf graf--pullquote" id="b002">Pulled <strong>out</strong></blockquote>
      <figure class="graf graf--figure" id="b003"><img class="progressiveMedia-thumbnail"
        src="https://cdn-images-1.medium.com/freeze/max/30/1*q.png"><img
        data-src="https://cdn-images-1.medium.com/max/800/1*q.png"><figcaption>cap</figcaption></figure>
      <div class="graf graf--mixtapeEmbed" id="b004"><a class="markup--mixtapeEmbed-anchor"
        href="https://medium.com/p/abc"><strong>Other story</strong> its deck</a></div>
    </div>"""
    out = md(*dom_blocks(lxml.html.fromstring(html), "https://medium.com/p/x"))
    seen = read_back(out)
    assert seen.headings == [(3, "Heading")]
    assert seen.images == [("https://cdn-images-1.medium.com/max/800/1*q.png", "")]
    assert seen.links == [("https://medium.com/p/abc", "Other story its deck")]
    assert "> Pulled **out**" in out


def test_absolute_links_are_what_urljoin_gives() -> None:
    """The DOM reader's shortcut for absolute ``https://`` links gives what ``urljoin``
    gives, edge cases included (no host, empty query or fragment, brackets, breaks)."""
    rnd = random.Random(7)
    chars = "ab/.:?#;[]@%\t\n\r &=-_~Ü\x00"
    bases = ["https://medium.com/p/x", "https://blog.example.com/a/b", "http://medium.com/x"]
    for _ in range(20_000):
        href = "https://" + "".join(rnd.choice(chars) for _ in range(rnd.randint(0, 12)))
        href = f" {href} " if rnd.random() < 0.3 else href
        base = rnd.choice(bases)
        try:
            expected: str | None = urljoin(base, href.strip())
        except ValueError:
            expected = None
        assert _absolute(href, base) == expected, (href, base)
