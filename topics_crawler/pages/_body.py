"""Story body as Markdown-flavoured plain text.

The body comes from the embedded ``bodyModel`` paragraphs when the page has
them (integer types in 2015–2018 JSON, string types in the Apollo cache), else
from the blocks the DOM body reader finds (:mod:`topics_crawler.pages._markdown_dom`,
the same blocks the Markdown is rendered from). Both are reduced to ``(type, text)``
pairs and rendered the same way: ``### `` headings, ``- `` list items, fenced code,
``> `` quotes, paragraphs separated by blank lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import filterfalse

from topics_crawler.items.values import clean_text

Paragraph = tuple[str, str]

_HEADING_PREFIX = {"H1": "# ", "H2": "## ", "H3": "### ", "H4": "#### "}
_QUOTES = frozenset({"BQ", "PQ"})
_SKIPPED = frozenset({"IFRAME"})
#: Longest text whose words are counted from a list of them (faster); longer ones one by one.
_FINDALL_LIMIT = 1_000_000
_WORD_RE = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*", re.UNICODE)


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
