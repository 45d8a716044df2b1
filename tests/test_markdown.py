"""The Markdown renderer: paragraph model in, CommonMark out, read back by a real parser.

Each case is checked by parsing the output with markdown-it-py (CommonMark) and
looking at what a reader gets, plus a property test over random texts and
markups (overlapping, nested, at emoji, at punctuation).
"""

from __future__ import annotations

import random
from typing import Any
from urllib.parse import urljoin

import lxml.html
import pytest

from tests.markdown_readback import read_back
from topics_crawler.pages._markdown_dom import _absolute, dom_blocks
from topics_crawler.pages._markdown_inline import (
    _blanks_at_inner_edges,
    _blanks_outside,
    _cancel,
    _one_span,
    _serialize,
    _spans,
    _tokens,
)
from topics_crawler.pages.markdown import (
    IMAGE_URL,
    PREVIEW_NOTICE,
    Block,
    Markup,
    apollo_blocks,
    legacy_blocks,
    render_markdown,
    utf16_markups,
)
from topics_crawler.pages.state import Node, State


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


# --- markups ------------------------------------------------------------------------------


def test_overlapping_markups_stay_well_nested() -> None:
    text = "alpha beta gamma delta"
    markups = (
        Markup("STRONG", 0, 10),  # alpha beta
        Markup("EM", 6, 16),  # beta gamma
        Markup("A", 11, 22, "https://example.com/g"),  # gamma delta
    )
    out = md(Block("P", text, markups))
    seen = read_back(out)
    styles = {word: styles_of(out, text, word) for word in ("alpha", "beta", "gamma")}
    assert styles["alpha"] == {"STRONG"}
    assert styles["beta"] == {"STRONG", "EM"}
    assert styles["gamma"] == {"EM", "A:https://example.com/g"}
    assert seen.links == [("https://example.com/g", "gamma delta")]


def test_blanks_at_markup_edges_move_outside() -> None:
    out = md(Block("P", "say hello world", (Markup("STRONG", 3, 10),)))
    assert out == "say **hello** world"


def test_code_markup_inside_bold_and_backticks_in_code() -> None:
    text = "run npm `i` now"
    out = md(Block("P", text, (Markup("STRONG", 0, 15), Markup("CODE", 4, 11))))
    assert styles_of(out, text, "npm") == {"STRONG", "CODE"}
    assert styles_of(out, text, "`") == {"STRONG", "CODE"}
    assert styles_of(out, text, "now") == {"STRONG"}


def test_same_kind_overlaps_merge_instead_of_turning_bold() -> None:
    out = md(Block("P", "abcdef", (Markup("EM", 0, 4), Markup("EM", 2, 6))))
    assert out == "*abcdef*"


def test_mention_without_href_links_to_the_user() -> None:
    body = {
        "paragraphs": [
            {
                "type": "P",
                "text": "thanks Ada",
                "markups": [{"type": "A", "start": 7, "end": 10, "userId": "a1b2"}],
            }
        ]
    }
    assert read_back(md(*apollo_blocks(node(body)))).links == [("https://medium.com/u/a1b2", "Ada")]


def test_utf16_offsets_after_an_emoji() -> None:
    text = "🍾 cheers and code"  # the bottle is two UTF-16 units
    # Medium's offsets of "code": 14..18 in UTF-16, 13..17 in code points.
    (markup,) = utf16_markups(text, [Markup("CODE", 14, 18)])
    assert text[markup.start : markup.end] == "code"
    body = {
        "paragraphs": [
            {"type": 1, "text": text, "markups": [{"type": 10, "start": 14, "end": 18}]},
        ]
    }
    assert md(*legacy_blocks(node(body))) == "🍾 cheers and `code`"


def test_offsets_past_the_text_are_clamped_and_bad_ones_dropped() -> None:
    markups = [Markup("EM", 2, 99), Markup("STRONG", 5, 1), Markup("A", -3, 2, "https://x.io")]
    assert [(m.start, m.end) for m in utf16_markups("hello", markups)] == [(2, 5), (0, 2)]


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


# --- property: whatever the markups, a reader gets the text and its styles back ------------

#: Letters and blanks mostly, with the characters Markdown cares about and an emoji.
_ALPHABET = "abcxyzé" * 4 + "   \n" + ".,!?'\"()*_[]`#<>&-🍾"
_KINDS = ("STRONG", "EM", "CODE", "A")


def random_paragraph(rng: random.Random) -> tuple[str, list[Markup]]:
    """A text of up to 40 characters with up to 5 markups anywhere (overlapping, nested,
    empty, at emoji, at punctuation)."""
    text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 40)))
    markups = []
    for _ in range(rng.randint(0, 5)):
        start = rng.randint(0, len(text))
        end = rng.randint(start, len(text))
        kind = rng.choice(_KINDS)
        markups.append(Markup(kind, start, end, "https://e.com/x" if kind == "A" else None))
    return text, markups


def _apart_or_nested(text: str, markups: list[Markup]) -> bool:
    """Bold and italic either nested or apart (touching ones of a kind are one), as in
    every capture (495 markups, none crossing). Crossing ones must close and reopen at a
    letter, which CommonMark reads as one delimiter run: there is no Markdown for them."""
    spans: dict[str, list[tuple[int, int]]] = {"STRONG": [], "EM": []}
    for m in sorted(markups, key=lambda m: m.start):
        inner = text[m.start : m.end]
        if m.kind in spans and inner.strip():
            start = m.start + len(inner) - len(inner.lstrip())
            end = start + len(inner.strip())
            runs = spans[m.kind]
            if runs and start <= runs[-1][1]:
                runs[-1] = (runs[-1][0], max(end, runs[-1][1]))
            else:
                runs.append((start, end))
    every = spans["STRONG"] + spans["EM"]
    if any(a[1] == b[0] for a in spans["STRONG"] for b in spans["EM"]):
        return False  # "**a***b*": a closing and an opening run at one point read as one
    if any(a[1] == b[0] for a in spans["EM"] for b in spans["STRONG"]):
        return False
    return not any(a[0] < b[0] < a[1] < b[1] for a in every for b in every)


def _letter_edges(text: str, markups: list[Markup]) -> bool:
    """Every markup edge sits at a letter or a blank on both sides. At punctuation,
    CommonMark's flanking rules can merge or void delimiter runs (``**"a"**b``,
    ``*<**<***``): what Markdown can say there depends on the neighbours. A code span or
    link edge is punctuation too (a backtick, a bracket)."""
    framed = {edge for m in markups if m.kind in {"CODE", "A"} for edge in (m.start, m.end)}
    for m in markups:
        if m.kind in {"STRONG", "EM"} and {m.start, m.end} & framed:
            return False
        inner = text[m.start : m.end]
        if not inner.strip():
            continue
        start = m.start + len(inner) - len(inner.lstrip())
        end = start + len(inner.strip())
        for edge in (start, end):
            for char in text[max(edge - 1, 0) : edge + 1]:
                if not (char.isalnum() or char.isspace()):
                    return False
    return True


@pytest.mark.parametrize("seed", range(4))
def test_any_markups_read_back_as_text_and_styles(seed: int) -> None:
    """2,000 random paragraphs: the renderer never fails, and wherever Markdown can say it
    (markup edges at letters or blanks, links apart, bold and italic nested or apart) a
    CommonMark reader gets back exactly the text and, character by character, the styles."""
    rng = random.Random(seed)
    checked = 0
    for _ in range(500):
        text, markups = random_paragraph(rng)
        out = render_markdown([Block("P", text, tuple(markups))])
        if out is None:
            assert not text.strip()
            continue
        links = [m for m in markups if m.kind == "A"]
        if any(a.start < b.end and b.start < a.end for a in links for b in links if a is not b):
            continue  # Medium never overlaps two links; the renderer keeps only the first
        if not (_letter_edges(text, markups) and _apart_or_nested(text, markups)):
            continue
        seen = [(c, s) for c, s in read_back(out).styled if not c.isspace()]
        assert "".join(c for c, _ in seen) == "".join(c for c in text if not c.isspace()), out
        expected = [
            frozenset(
                (f"A:{m.href}" if m.kind == "A" else m.kind)
                for m in markups
                if m.start <= index < m.end
            )
            for index, char in enumerate(text)
            if not char.isspace()
        ]
        assert [styles for _, styles in seen] == expected, (text, markups, out)
        checked += 1
    assert checked >= 100, f"only {checked} of 500 paragraphs were checkable"


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


def fields(markups: list[Markup]) -> list[tuple[str, int, int, str | None]]:
    return [(m.kind, m.start, m.end, m.href) for m in markups]


@pytest.mark.parametrize("seed", range(4))
def test_inline_shortcuts_change_nothing(seed: int) -> None:
    """The inline renderer's shortcuts give what the general path gives: one markup read
    without the merge, and nested markups without the blank-moving and cancelling passes
    when :func:`_blanks_at_inner_edges` says they would change no step."""
    rnd = random.Random(seed)
    letters = "ab c!*_`\n é😀.,&"
    for _ in range(5_000):
        text = "".join(rnd.choice(letters) for _ in range(rnd.randint(1, 14)))
        markups = []
        for _ in range(rnd.randint(1, 4)):
            kind = rnd.choice(["A", "STRONG", "EM", "CODE"])
            start, end = rnd.randint(-2, len(text) + 1), rnd.randint(-2, len(text) + 2)
            href = "https://x.test/a (b)" if kind == "A" else None
            markups.append(Markup(kind, start, end, href))
        assert fields(_one_span(text, markups[0])) == fields(_spans(text, markups[:1]))
        spans = sorted(_spans(text, markups), key=lambda m: (m.start, -m.end))
        if spans:
            tokens = _tokens(text, spans)
            full = _serialize(_cancel(_blanks_outside(tokens)))
            if not _blanks_at_inner_edges(tokens):
                assert _serialize(tokens) == full, (text, markups)


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
