"""Medium's paragraph objects (Apollo ``Paragraph`` entities, 2015–2018 ``bodyModel``
paragraphs) into :class:`~topics_crawler.pages._markdown_model.Block`, read through the
state reader's typed accessors: a wrong-typed value is a missing one, noted on the page."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from topics_crawler.pages._markdown_model import (
    BLOCK_KINDS,
    MARKUP_KINDS,
    Block,
    Markup,
    utf16_markups,
)
from topics_crawler.pages.state import Node

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
_LANGUAGE_RE = re.compile(r"[\w+#.-]{1,40}")


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


def _block(
    paragraph: Node, kind: str, text: str, markup_kind: Callable[[Any], str | None]
) -> Block:
    markups: tuple[Markup, ...] = ()
    raw_markups = paragraph.nodes("markups")
    if raw_markups:  # most paragraphs have none
        found = (_markup(m, markup_kind(m.scalar("type"))) for m in raw_markups)
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


@dataclass(frozen=True, slots=True)
class BodyModel:
    """A story body read once from the state, in the two views its renderers take:
    :attr:`blocks` for the Markdown, :attr:`paragraphs` ``(type, text)`` for the plain
    text (:func:`~topics_crawler.pages._body.render_paragraphs`)."""

    blocks: list[Block] = field(default_factory=list)
    """Markdown blocks, a ``HR`` where each section after the first starts."""
    paragraphs: list[tuple[str, str]] = field(default_factory=list)
    """Every paragraph's type as the text renderer reads it (a wrong-typed type is a
    plain paragraph; a legacy ``3.0`` is ``3``) and its text, one per paragraph."""


def apollo_body(body_model: Node | None) -> BodyModel:
    """An Apollo ``RichText`` body model (``paragraphs`` of ``Paragraph`` entities with
    string types; references are followed by the state reader): its paragraphs are
    resolved once for both views."""
    if body_model is None:
        return BodyModel()
    paragraphs = []
    blocks = []
    for paragraph in body_model.nodes("paragraphs"):  # each field read once for both views
        kind = paragraph.str("type") or "P"
        text = paragraph.str("text") or ""
        paragraphs.append((kind, text))
        blocks.append(_block(paragraph, kind if kind in BLOCK_KINDS else "P", text, _apollo_kind))
    return BodyModel(_with_sections(blocks, body_model), paragraphs)


def legacy_body(body_model: Node | None) -> BodyModel:
    """A 2015–2018 ``bodyModel`` (integer paragraph and markup types): its paragraphs
    are resolved once for both views."""
    if body_model is None:
        return BodyModel()
    paragraphs = []
    blocks = []
    for paragraph in body_model.nodes("paragraphs"):  # each field read once for both views
        number = paragraph.scalar("type")
        text = paragraph.str("text") or ""
        paragraphs.append((_legacy_text_kind(paragraph.int("type")), text))
        kind = "P"
        if isinstance(number, int) and not isinstance(number, bool):
            kind = LEGACY_PARAGRAPH_TYPES.get(number, "P")
        blocks.append(_block(paragraph, kind, text, _legacy_markup_kind))
    return BodyModel(_with_sections(blocks, body_model), paragraphs)


def _legacy_text_kind(number: int | None) -> str:
    """The text view's paragraph type of a legacy type int (3.0 counts as 3)."""
    return LEGACY_PARAGRAPH_TYPES.get(number, "P") if number is not None else "P"


def apollo_blocks(body_model: Node | None) -> list[Block]:
    """Blocks of an Apollo ``RichText`` body model (:func:`apollo_body`)."""
    return apollo_body(body_model).blocks


def legacy_blocks(body_model: Node | None) -> list[Block]:
    """Blocks of a 2015–2018 ``bodyModel`` (:func:`legacy_body`)."""
    return legacy_body(body_model).blocks
