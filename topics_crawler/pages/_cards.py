"""Listing cards: the story previews of tag, home and profile pages.

Two layers describe the same card:

* HTML: a card is any ``<article>`` (or ``div[role=link][data-href]``) that
  holds a story link. Links are recognised by URL pattern only, so a card
  survives any change of Medium's CSS classes. The HTML gives what the reader
  sees: title, subtitle, names, relative date, clap and response counts.
* State: the page's ``Post`` entities (Apollo-2 and Apollo-3, read through
  :mod:`topics_crawler.pages.state`; :func:`~topics_crawler.pages._posts.listing_story`)
  give ids, exact timestamps and counts.

:func:`parse_cards` combines them per field with :func:`~topics_crawler.items.layers.pick_named`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any
from urllib.parse import urlsplit

import lxml.html
from lxml import etree

from topics_crawler.items import Story
from topics_crawler.items.layers import pick_named
from topics_crawler.items.values import clean_text, read_count, shown_time, unique
from topics_crawler.pages._document import Document
from topics_crawler.pages._posts import is_stub, listing_story
from topics_crawler.pages._result import unique_links
from topics_crawler.urls import MEDIUM_HOST, MediumLink, classify_url, post_id_from_url

MEMBER_ONLY_LABEL = "member-only story"
#: Fields where the reader-visible HTML wins over the state.
HTML_FIRST = ("title", "subtitle", "author_name", "publication_name", "image_url")

#: One location path, not a union: libxml2 merges union results in time quadratic in their size.
_CARD_XPATH = "descendant-or-self::*[self::article or (self::div and @role='link' and @data-href)]"
_HREFS_XPATH = "descendant-or-self::*[@data-href or self::a[@href]]"
_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4"})
_DATE_TEXT_RE = re.compile(
    r"^(?:(?:\d+|an?|one)\s*[a-z]+\s+ago|just now|yesterday|"
    r"[A-Z][a-z]{2,8}\.? \d{1,2}(?:, \d{4})?)$",
    re.IGNORECASE,
)
_COUNT_TEXT_RE = re.compile(r"^\d[\d,.]*\s*[KMB]?$", re.IGNORECASE)


@dataclass
class Card:
    """One listing card: a partial story plus the Medium links it contained."""

    story: Story
    links: list[MediumLink] = field(default_factory=list)
    element: lxml.html.HtmlElement | None = field(default=None, repr=False, compare=False)


class PageLinks:
    """Links of one page, each distinct ``href`` classified once (a per-page memo: cards repeat
    their story, author and publication links several times)."""

    def __init__(self, base: str, domains: Iterable[str] = ()) -> None:
        self.base = base
        self.domains = list(domains)
        self._known: dict[str, MediumLink | None] = {}

    def add_domain(self, host: str) -> None:
        """Count ``host`` as a Medium custom domain from now on."""
        if host not in self.domains:
            self.domains.append(host)
            self._known.clear()

    def __call__(self, href: str | None) -> MediumLink | None:
        if not href:
            return None
        try:
            return self._known[href]
        except KeyError:
            link = self._known[href] = classify_url(href, self.base, self.domains)
            return link


def element_hrefs(element: lxml.html.HtmlElement) -> list[str]:
    """``data-href`` and ``a/@href`` values under ``element`` (itself included), page order."""
    hrefs: list[str] = []
    for node in element.xpath(_HREFS_XPATH):
        for name in ("data-href", "href") if node.tag == "a" else ("data-href",):
            value = node.get(name)
            if value:
                hrefs.append(value)
    return hrefs


def parse_cards(
    doc: Document,
    root: lxml.html.HtmlElement | None = None,
    domains: Iterable[str] = (),
    links: PageLinks | None = None,
) -> list[Card]:
    """Every listing card under ``root`` (default: the whole page) in page order,
    HTML values completed from the page's Apollo ``Post`` entities. Linear in the page:
    one pass finds the cards, each card is read once, each distinct link classified once."""
    scope = root if root is not None else doc.tree
    if scope is None:
        return []
    state = doc.state
    if links is None:
        links = PageLinks(doc.url, unique([*domains, *sorted(doc.medium_domains)]))
    cards = []
    for element, story_link in _card_elements(scope, links):
        html_layer, hrefs = _html_fields(element, story_link, doc, links)
        post = state.entity("Post", story_link.key) if state is not None else None
        state_layer = (
            story_layer(listing_story(post, doc.scraped_at)) if post and not is_stub(post) else {}
        )
        story = Story(**combine_layers(html_layer, state_layer), scraped_at=doc.scraped_at)
        card_links = unique_links(links(href) for href in hrefs)
        cards.append(Card(story=story, links=card_links, element=element))
    return cards


def story_layer(story: Story) -> dict[str, Any]:
    """The filled fields of a (state) Story, as a layer for :func:`combine_layers`."""
    skipped = ("item_type", "scraped_at", "data_source")
    values = {f.name: getattr(story, f.name) for f in fields(story) if f.name not in skipped}
    return {name: value for name, value in values.items() if value not in (None, "", [])}


def combine_layers(html_layer: dict[str, Any], state_layer: dict[str, Any]) -> dict[str, Any]:
    """HTML first for what the reader sees, state first for ids, exact times and counts."""
    seen = {k: v for k, v in html_layer.items() if k in HTML_FIRST}
    return pick_named(("card", seen), ("state", state_layer), ("card", html_layer))


def _card_elements(
    scope: lxml.html.HtmlElement, links: PageLinks
) -> list[tuple[lxml.html.HtmlElement, MediumLink]]:
    """Outermost card elements holding a story link, with that link."""
    found: list[tuple[lxml.html.HtmlElement, MediumLink]] = []
    taken: set[lxml.html.HtmlElement] = set()
    for element in scope.xpath(_CARD_XPATH):
        if taken and any(ancestor in taken for ancestor in element.iterancestors()):
            continue
        link = _story_link_of(element, links)
        if link is None and _adopt_story_host(element, links):
            link = _story_link_of(element, links)
        if link is not None:
            taken.add(element)
            found.append((element, link))
    return found


def _story_link_of(element: lxml.html.HtmlElement, links: PageLinks) -> MediumLink | None:
    for href in element_hrefs(element):
        link = links(href)
        if link is not None and link.kind == "story":
            return link
    return None


def _adopt_story_host(element: lxml.html.HtmlElement, links: PageLinks) -> bool:
    """A card a reader recognises — a Medium author link beside a story-shaped link
    (``https://<host>/<slug>-<post id>``) — names its publication's custom domain even when
    the page's state does not; adopt that host. True when one was adopted."""
    hrefs = element_hrefs(element)
    if not any((link := links(href)) is not None and link.kind == "author" for href in hrefs):
        return False
    for href in hrefs:
        try:
            parts = urlsplit(href)
            host = (parts.hostname or "").lower()
            post_id = post_id_from_url(href)
        except ValueError:  # "Invalid IPv6 URL" and the like: not a link anyone follows
            continue
        segments = [s for s in parts.path.split("/") if s]
        story_shaped = parts.scheme in ("http", "https") and host and len(segments) == 1
        if story_shaped and post_id and links(href) is None:
            links.add_domain(host)
            return True
    return False


class _CardScan:
    """One walk over a card's subtree: its links (hrefs, anchors by kind), the headings of
    the story's own links, the loose text outside headings, ARIA labels and images."""

    def __init__(self, element: lxml.html.HtmlElement, story_key: str, links: PageLinks) -> None:
        self.hrefs: list[str] = []
        self.anchors: list[tuple[lxml.html.HtmlElement, MediumLink]] = []
        self.headings: list[str] = []
        self.loose: list[str] = []
        self.labels: list[str] = []
        self.images: list[tuple[lxml.html.HtmlElement, MediumLink | None]] = []
        open_anchors: list[MediumLink | None] = []
        in_heading = 0
        for event, node in etree.iterwalk(element, events=("start", "end")):
            tag = node.tag
            if not isinstance(tag, str):  # a comment: only its tail is page text
                if event == "end" and not in_heading:
                    self._text(node.tail)
                continue
            if event == "end":
                if tag in _HEADING_TAGS:
                    in_heading -= 1
                elif tag == "a":
                    open_anchors.pop()
                if node is not element and not in_heading:
                    self._text(node.tail)
                continue
            data_href = node.get("data-href")
            if data_href:
                self.hrefs.append(data_href)
            if node is not element and node.get("aria-label") is not None:
                self.labels.append(node.get("aria-label"))
            if tag == "a":
                href = node.get("href")
                link = links(href) if href else None
                if href:
                    self.hrefs.append(href)
                if link is not None:
                    self.anchors.append((node, link))
                open_anchors.append(link)
            elif tag in _HEADING_TAGS:
                in_heading += 1
                inside = next((ln for ln in reversed(open_anchors) if ln is not None), None)
                own = inside is not None and inside.kind == "story" and inside.key == story_key
                if in_heading == 1 and own:
                    self.headings.append(clean_text(node.text_content()) or "")
            elif tag == "img" and node.get("src"):
                self.images.append((node, open_anchors[-1] if open_anchors else None))
            if not in_heading:
                self._text(node.text)

    def _text(self, text: str | None) -> None:
        cleaned = clean_text(text) if text else None
        if cleaned:
            self.loose.append(cleaned)

    def of_kind(self, kind: str) -> list[tuple[lxml.html.HtmlElement, MediumLink]]:
        return [(anchor, link) for anchor, link in self.anchors if link.kind == kind]


def _html_fields(
    element: lxml.html.HtmlElement, story_link: MediumLink, doc: Document, links: PageLinks
) -> tuple[dict[str, Any], list[str]]:
    """The card's fields as the reader sees them, and its hrefs in page order."""
    scan = _CardScan(element, story_link.key, links)
    fields: dict[str, Any] = {"story_id": story_link.key, "url": story_link.url}
    titles = unique([text for text in scan.headings if text])
    fields["title"] = titles[0] if titles else None
    fields["subtitle"] = titles[1] if len(titles) > 1 else None
    fields.update(_author_fields(scan.of_kind("author")))
    fields.update(_publication_fields(scan.of_kind("publication")))
    date_text = next((t for t in scan.loose if _DATE_TEXT_RE.match(t)), None)
    if date_text:
        fields["published_at"], fields["published_at_raw"] = shown_time(date_text, doc.now)
    fields.update(_count_fields(scan.loose))
    labels = (label.strip().lower() for label in scan.labels)
    fields["is_member_only"] = any(label == MEMBER_ONLY_LABEL for label in labels)
    fields["image_url"] = _preview_image(scan.images)
    return fields, scan.hrefs


def _author_fields(anchors: list[tuple[lxml.html.HtmlElement, MediumLink]]) -> dict[str, Any]:
    if not anchors:
        return {}
    username = anchors[0][1].url.rsplit("/@", 1)[-1]
    names = [clean_text(anchor.text_content()) for anchor, _ in anchors]
    return {"author_username": username, "author_name": next((n for n in names if n), None)}


def _publication_fields(
    anchors: list[tuple[lxml.html.HtmlElement, MediumLink]],
) -> dict[str, Any]:
    if not anchors:
        return {}
    link = anchors[0][1]
    on_medium = urlsplit(link.url).netloc == MEDIUM_HOST
    names = [clean_text(anchor.text_content()) for anchor, _ in anchors]
    return {
        "publication_slug": link.key if on_medium else None,
        "publication_name": next((n for n in names if n), None),
    }


def _count_fields(loose_texts: list[str]) -> dict[str, Any]:
    """Claps and responses: the number after the clap / response icon label,
    else bare numbers in order (claps first) as the listing-card contract says."""
    found: dict[str, str] = {}
    pending: str | None = None
    for text in loose_texts:
        lowered = text.lower()
        if "clap" in lowered or "response" in lowered:
            pending = "claps" if "clap" in lowered else "responses"
            continue
        if pending and _COUNT_TEXT_RE.match(text):
            found.setdefault(pending, text)
        pending = None
    if not found:
        bare = [t for t in loose_texts if _COUNT_TEXT_RE.match(t)]
        found = dict(zip(("claps", "responses"), bare, strict=False))
    fields: dict[str, Any] = {}
    for name, text in found.items():
        fields[name], fields[f"{name}_raw"] = read_count(text)
    return fields


def _preview_image(images: list[tuple[lxml.html.HtmlElement, MediumLink | None]]) -> str | None:
    """Largest image of the card that is not an author or publication avatar."""
    best: tuple[int, str] | None = None
    for image, link in images:
        if link is not None and link.kind in ("author", "publication"):
            continue
        width = int(image.get("width")) if (image.get("width") or "").isdigit() else 0
        if best is None or width > best[0]:
            best = (width, str(image.get("src")))
    return best[1] if best else None
