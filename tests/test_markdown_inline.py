"""The Markdown renderer's inline markups: bold, italic, code and links over a paragraph's
text, read back by a real parser, plus a property test over random texts and markups
(overlapping, nested, at emoji, at punctuation) and the inline renderer's shortcuts checked
against its general path. The blocks are in ``tests/test_markdown_blocks.py``.
"""

from __future__ import annotations

import random

import pytest

from tests.markdown_readback import md, node, read_back, styles_of
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
    Block,
    Markup,
    apollo_blocks,
    legacy_blocks,
    render_markdown,
    utf16_markups,
)

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
