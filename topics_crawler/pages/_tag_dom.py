"""Today's tag page read the way a reader sees it: headings, and what follows each heading.

One walk over the page (listing cards are skipped as whole subtrees: :mod:`._cards` reads
them) builds an *outline*: every heading outside a card opens a :class:`Block`, and the
cards, links and sentences after it, up to the next heading of the same or a higher level,
belong to that block (a deeper heading opens a child block). What the tag parser needs is
then asked of the outline by what the page says:

* the title: the first ``h1``; the line "12K followers · 1.2K stories" near it;
* the breadcrumb: tag links inside an element whose ``aria-label`` (or ``data-testid``)
  says "breadcrumb", in any case; else the tag links shown above the title;
* sections: every block that holds cards, keyed by its heading (:func:`section_key`);
* sub-topic clusters: the child blocks of "Explore recommended reads…" (or of a block
  marked ``data-testid="subtopics"``, any case): name, sentence, topic links, cards;
* "Who to follow": the author and publication links of that block (a heading inside a link —
  Medium marks each account's name ``<a><h2>Name</h2></a>`` — is that link's text, not a
  heading of the page);
* related topics: the tag links of a "Related topics"/"Related tags" block or of an element
  marked ``related-tags``.

Attribute values are compared lowercased; CSS classes are never read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import lxml.html
from lxml import etree

from topics_crawler.items.values import clean_text, parse_count
from topics_crawler.pages._cards import Card, PageLinks
from topics_crawler.urls import MediumLink

#: Section headings whose key differs from the lowercased heading.
SECTION_ALIASES = {
    "recommended_stories": "recommended",
    "explore_recommended_reads_summarized_by_ai": "recommended_reads",
    "explore_recommended_reads": "recommended_reads",
}
WHO_TO_FOLLOW = "who_to_follow"
RELATED_KEYS = frozenset({"related_topics", "related_tags", "recommended_topics"})
CLUSTER_PARENT_KEYS = frozenset({"recommended_reads"})
#: Markers (``data-testid`` / ``aria-label`` values, lowercased) and what they stand for.
_MARKERS = {"breadcrumb": "breadcrumb", "subtopic": "subtopics", "related-tag": "related"}
_HEADING_LEVELS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_COUNT_LINE_RE = re.compile(
    r"(?<![\d.,])(?P<count>\d[\d.,]{0,15}\s?[KMB]?)\s{1,3}(?P<what>followers?|stories)\b", re.I
)
#: A counts line is short; longer text (a script the markup lost, a bio) is not one.
MAX_COUNT_TEXT = 200
_COUNT_FIELDS = {"follower": "followers", "followers": "followers", "stories": "story_count"}


def section_key(heading: str) -> str:
    """Section key of a heading: ``"Popular this week"`` → ``popular_this_week``."""
    key = re.sub(r"[^a-z0-9]+", "_", heading.lower()).strip("_")
    return SECTION_ALIASES.get(key, key)


@dataclass(eq=False)
class Block:
    """A heading and what the page shows under it, up to the next heading of its level."""

    heading: str
    level: int
    markers: frozenset[str] = frozenset()
    cards: list[Card] = field(default_factory=list)
    links: list[tuple[str, MediumLink]] = field(default_factory=list)
    paragraphs: list[str] = field(default_factory=list)
    children: list[Block] = field(default_factory=list)
    parent_markers: frozenset[str] | None = None
    """The enclosing block's markers; None at the top. (Not the block itself: a child
    pointing back at its parent would make every outline a reference cycle.)"""

    @property
    def key(self) -> str:
        return section_key(self.heading)

    def all_cards(self) -> list[Card]:
        return [*self.cards, *(card for child in self.children for card in child.all_cards())]

    def all_links(self, *kinds: str) -> list[tuple[str, MediumLink]]:
        """``(text, link)`` of the links of ``kinds`` in this block and its children."""
        own = [(text, link) for text, link in self.links if link.kind in kinds]
        return own + [pair for child in self.children for pair in child.all_links(*kinds)]


@dataclass
class TagOutline:
    """What the walk saw: the title, the breadcrumb, the blocks in page order, counts."""

    name: str | None = None
    breadcrumb: list[tuple[str, MediumLink]] = field(default_factory=list)
    above_title: list[tuple[str, MediumLink]] = field(default_factory=list)
    marked_related: list[tuple[str, MediumLink]] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    counts: dict[str, object] = field(default_factory=dict)
    hrefs: list[str] = field(default_factory=list)

    def block(self, key: str) -> Block | None:
        return next((block for block in self.blocks if block.key == key), None)


def read_outline(root: lxml.html.HtmlElement, cards: list[Card], links: PageLinks) -> TagOutline:
    """Walk the page once (cards skipped whole) into a :class:`TagOutline`."""
    outline = TagOutline()
    by_element = {card.element: card for card in cards if card.element is not None}
    walk = _Walk(outline, by_element, links)
    walker = etree.iterwalk(root, events=("start", "end"))
    for event, element in walker:
        if not isinstance(element.tag, str):
            continue
        if event == "end":
            walk.end(element)
        elif walk.start(element):
            walker.skip_subtree()
    return outline


class _Walk:
    """State of one outline walk: the open blocks and the open marked containers."""

    def __init__(self, outline: TagOutline, cards: dict[object, Card], links: PageLinks) -> None:
        self.outline = outline
        self.cards = cards
        self.links = links
        self.open_blocks: list[Block] = []
        self.markers: list[tuple[object, str]] = []
        self.in_heading: object | None = None
        self.in_link: object | None = None

    def start(self, element: lxml.html.HtmlElement) -> bool:
        """Handle an opening tag; True when its subtree is to be skipped."""
        card = self.cards.get(element)
        if card is not None:
            if self.open_blocks:
                self.open_blocks[-1].cards.append(card)
            self.outline.hrefs.extend(str(link.url) for link in card.links)
            self._text(element.tail)
            return True
        tag = element.tag
        if tag in ("script", "style", "noscript", "template"):
            return True
        marker = _marker_of(element)
        if marker is not None:
            self.markers.append((element, marker))
        href = element.get("data-href")
        if href:
            self.outline.hrefs.append(href)
        if tag in _HEADING_LEVELS and self.in_heading is None and self.in_link is None:
            self._heading(element, _HEADING_LEVELS[tag])
            return False
        if tag == "a" and element.get("href"):
            self.outline.hrefs.append(element.get("href"))
            self._link(element)
            self.in_link = self.in_link if self.in_link is not None else element
        elif tag == "p" and self.open_blocks and self.in_heading is None:
            text = clean_text(element.text_content())
            if text:
                self.open_blocks[-1].paragraphs.append(text)
        self._text(element.text)
        return False

    def end(self, element: lxml.html.HtmlElement) -> None:
        if self.markers and self.markers[-1][0] is element:
            self.markers.pop()
        if self.in_heading is element:
            self.in_heading = None
        if self.in_link is element:
            self.in_link = None
        if element not in self.cards:
            self._text(element.tail)

    def _heading(self, element: lxml.html.HtmlElement, level: int) -> None:
        self.in_heading = element
        text = clean_text(element.text_content()) or ""
        if level == 1 and self.outline.name is None:
            self.outline.name = text or None
        while self.open_blocks and self.open_blocks[-1].level >= level:
            self.open_blocks.pop()
        parent = self.open_blocks[-1] if self.open_blocks else None
        markers = frozenset(m for _, m in self.markers)
        block = Block(text, level, markers, parent_markers=parent.markers if parent else None)
        if parent is not None:
            parent.children.append(block)
        self.open_blocks.append(block)
        self.outline.blocks.append(block)

    def _link(self, anchor: lxml.html.HtmlElement) -> None:
        link = self.links(anchor.get("href"))
        if link is None:
            return
        pair = (clean_text(anchor.text_content()) or "", link)
        active = {m for _, m in self.markers}
        if link.kind == "tag":
            if "breadcrumb" in active:
                self.outline.breadcrumb.append(pair)
            elif self.outline.name is None:
                self.outline.above_title.append(pair)
            if "related" in active:
                self.outline.marked_related.append(pair)
        if self.open_blocks:
            self.open_blocks[-1].links.append(pair)

    def _text(self, text: str | None) -> None:
        """Counts by the title ("1.9K followers · 2.4K stories"): outside cards, before the
        first section (a "Who to follow" entry's "12K followers" is someone else's)."""
        if not text or len(text) > MAX_COUNT_TEXT or self.in_heading is not None:
            return
        if not any(c.isdigit() for c in text):
            return
        if self.open_blocks and self.open_blocks[-1].level > 1:
            return
        for match in _COUNT_LINE_RE.finditer(text):
            name = _COUNT_FIELDS[match.group("what").lower()]
            if name not in self.outline.counts:
                value, raw = parse_count(match.group("count"))
                self.outline.counts[name], self.outline.counts[f"{name}_raw"] = value, raw


def _marker_of(element: lxml.html.HtmlElement) -> str | None:
    """What a ``data-testid`` / ``aria-label`` marks the element as (case-insensitive)."""
    for name in ("data-testid", "aria-label"):
        value = element.get(name)
        if not value:
            continue
        lowered = value.lower()
        for needle, marker in _MARKERS.items():
            if needle in lowered:
                return marker
    return None


def clusters_of(outline: TagOutline) -> list[Block]:
    """Sub-topic clusters: the child blocks of "Explore recommended reads…"; else of the one
    block marked as sub-topics, or the marked blocks themselves when none has children."""
    for block in outline.blocks:
        if block.key in CLUSTER_PARENT_KEYS and block.children:
            return block.children
    marked = [block for block in outline.blocks if "subtopics" in block.markers]
    tops = [b for b in marked if b.parent_markers is None or "subtopics" not in b.parent_markers]
    if len(tops) == 1 and tops[0].children:
        return tops[0].children
    return tops
