"""Listing cards: the story previews of tag, home and profile pages.

Two layers describe the same card:

* HTML: a card is any ``<article>`` (or ``div[role=link][data-href]``) that
  holds a story link. Links are recognised by URL pattern only, so a card
  survives any change of Medium's CSS classes. The HTML gives what the reader
  sees: title, subtitle, names, relative date, clap and response counts.
* State: the Apollo ``Post`` entities (Apollo-2 and Apollo-3) give ids, exact
  timestamps and counts. :func:`story_from_post` reads one entity.

:func:`parse_cards` combines them per field with :func:`~topics_crawler.layers.pick_paired`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import lxml.html

from topics_crawler.items import Story
from topics_crawler.layers import pick_paired
from topics_crawler.normalize import clean_text, parse_count, parse_timestamp, tag_slug, unique
from topics_crawler.pages._document import Document
from topics_crawler.pages._entities import lower_id
from topics_crawler.pages._result import unique_links
from topics_crawler.pages._state import ApolloState
from topics_crawler.urls import MEDIUM_HOST, MediumLink, canonical_url, classify_url

PREVIEW_IMAGE_URL = "https://miro.medium.com/v2/resize:fit:1400/{image_id}"
MEMBER_ONLY_LABEL = "member-only story"
#: Fields where the reader-visible HTML wins over the state.
HTML_FIRST = ("title", "subtitle", "author_name", "publication_name", "image_url")
#: Members through which listing containers reach their posts.
LISTING_KEYS = ("post", "node", "postPreviews", "items", "posts", "edges")

_CARD_XPATH = "descendant-or-self::article | descendant-or-self::div[@role='link'][@data-href]"
_HEADINGS = "self::h1 or self::h2 or self::h3 or self::h4"
_LOOSE_TEXT_XPATH = f".//text()[not(ancestor::*[{_HEADINGS}])]"
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


def find_entity(
    state: ApolloState | None, typenames: tuple[str, ...], key: str, value: str
) -> dict[str, Any] | None:
    """First ``typenames`` entity whose ``key`` equals ``value`` (case-insensitive)."""
    if state is None:
        return None
    for typename in typenames:
        for _, entity in state.entities(typename):
            found = entity.get(key)
            if isinstance(found, str) and found.lower() == value.lower():
                return entity
    return None


def parse_cards(
    doc: Document, root: lxml.html.HtmlElement | None = None, domains: Iterable[str] = ()
) -> list[Card]:
    """Every listing card under ``root`` (default: the whole page) in page order,
    HTML values completed from the page's Apollo ``Post`` entities."""
    scope = root if root is not None else doc.tree
    if scope is None:
        return []
    state = doc.apollo
    known_domains = unique([*domains, *sorted(doc.medium_domains)])
    cards = []
    for element, story_link in _card_elements(scope, doc.url, known_domains):
        html_layer = _html_fields(element, story_link, doc, known_domains)
        post = state.get(f"Post:{story_link.key}") if state is not None else None
        state_layer = _post_fields(state, post) if state is not None and post else {}
        story = Story(**combine_layers(html_layer, state_layer), scraped_at=doc.scraped_at)
        links = unique_links(_element_links(element, doc.url, known_domains))
        cards.append(Card(story=story, links=links, element=element))
    return cards


def combine_layers(html_layer: dict[str, Any], state_layer: dict[str, Any]) -> dict[str, Any]:
    """HTML first for what the reader sees, state first for ids, exact times and counts."""
    seen = {k: v for k, v in html_layer.items() if k in HTML_FIRST}
    return pick_paired(seen, state_layer, html_layer)


def story_from_post(state: ApolloState, post: dict[str, Any], scraped_at: str) -> Story:
    """A Story from one Apollo ``Post`` entity (listing or full page)."""
    return Story(**_post_fields(state, post), scraped_at=scraped_at)


def posts_in(state: ApolloState, value: Any) -> list[dict[str, Any]]:
    """``Post`` entities of a listing value, in order: a ``PostPreviewConnection``
    (2019 topic), ``HomeFeedResult`` / ranked module (2020 home), GraphQL edges,
    or a plain list of references."""
    value = state.resolve(value)
    if isinstance(value, list):
        return [post for member in value for post in posts_in(state, member)]
    if not isinstance(value, dict):
        return []
    if value.get("__typename") == "Post":
        return [value]
    for key in LISTING_KEYS:
        if key in value:
            return posts_in(state, state.field(value, key))
    return []


# --- HTML layer -------------------------------------------------------------


def _card_elements(
    scope: lxml.html.HtmlElement, base: str, domains: list[str]
) -> list[tuple[lxml.html.HtmlElement, MediumLink]]:
    """Outermost card elements holding a story link, with that link."""
    found: list[tuple[lxml.html.HtmlElement, MediumLink]] = []
    taken: set[lxml.html.HtmlElement] = set()
    for element in scope.xpath(_CARD_XPATH):
        if any(ancestor in taken for ancestor in element.iterancestors()):
            continue
        link = _story_link_of(element, base, domains)
        if link is not None:
            taken.add(element)
            found.append((element, link))
    return found


def _story_link_of(
    element: lxml.html.HtmlElement, base: str, domains: list[str]
) -> MediumLink | None:
    hrefs = [element.get("data-href") or ""]
    hrefs += [str(h) for h in element.xpath(".//@data-href | .//a/@href")]
    for href in hrefs:
        link = classify_url(href, base, domains) if href else None
        if link is not None and link.kind == "story":
            return link
    return None


def _element_links(
    element: lxml.html.HtmlElement, base: str, domains: list[str]
) -> list[MediumLink | None]:
    hrefs = [str(h) for h in element.xpath("descendant-or-self::*/@data-href | .//a/@href")]
    return [classify_url(href, base, domains) for href in hrefs]


def _anchors_of_kind(
    element: lxml.html.HtmlElement, kind: str, base: str, domains: list[str]
) -> list[tuple[lxml.html.HtmlElement, MediumLink]]:
    out = []
    for anchor in element.xpath(".//a[@href]"):
        link = classify_url(anchor.get("href"), base, domains)
        if link is not None and link.kind == kind:
            out.append((anchor, link))
    return out


def _html_fields(
    element: lxml.html.HtmlElement, story_link: MediumLink, doc: Document, domains: list[str]
) -> dict[str, Any]:
    fields: dict[str, Any] = {"story_id": story_link.key, "url": story_link.url}
    fields.update(_title_fields(element, story_link, doc.url, domains))
    fields.update(_author_fields(element, doc.url, domains))
    fields.update(_publication_fields(element, doc.url, domains))
    loose = [t for t in (clean_text(s) for s in element.xpath(_LOOSE_TEXT_XPATH)) if t]
    date_text = next((t for t in loose if _DATE_TEXT_RE.match(t)), None)
    if date_text:
        fields["published_at"], fields["published_at_raw"] = parse_timestamp(date_text, doc.now)
    fields.update(_count_fields(loose))
    fields["is_member_only"] = _has_member_only_badge(element)
    fields["image_url"] = _preview_image(element, doc.url, domains)
    return fields


def _title_fields(
    element: lxml.html.HtmlElement, story_link: MediumLink, base: str, domains: list[str]
) -> dict[str, Any]:
    texts: list[str] = []
    for anchor, link in _anchors_of_kind(element, "story", base, domains):
        if link.key != story_link.key:
            continue
        for heading in anchor.xpath(f".//*[{_HEADINGS}]"):
            text = clean_text(heading.text_content())
            if text:
                texts.append(text)
    texts = unique(texts)
    return {"title": texts[0] if texts else None, "subtitle": texts[1] if len(texts) > 1 else None}


def _author_fields(element: lxml.html.HtmlElement, base: str, domains: list[str]) -> dict[str, Any]:
    anchors = _anchors_of_kind(element, "author", base, domains)
    if not anchors:
        return {}
    username = anchors[0][1].url.rsplit("/@", 1)[-1]
    names = [clean_text(anchor.text_content()) for anchor, _ in anchors]
    return {"author_username": username, "author_name": next((n for n in names if n), None)}


def _publication_fields(
    element: lxml.html.HtmlElement, base: str, domains: list[str]
) -> dict[str, Any]:
    anchors = _anchors_of_kind(element, "publication", base, domains)
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
        fields[name], fields[f"{name}_raw"] = parse_count(text)
    return fields


def _has_member_only_badge(element: lxml.html.HtmlElement) -> bool:
    labels = element.xpath(".//*[@aria-label]/@aria-label")
    return any(str(label).strip().lower() == MEMBER_ONLY_LABEL for label in labels)


def _preview_image(element: lxml.html.HtmlElement, base: str, domains: list[str]) -> str | None:
    """Largest image of the card that is not an author or publication avatar."""
    best: tuple[int, str] | None = None
    for image in element.xpath(".//img[@src]"):
        anchor = next(image.iterancestors("a"), None)
        link = classify_url(anchor.get("href", ""), base, domains) if anchor is not None else None
        if link is not None and link.kind in ("author", "publication"):
            continue
        width = int(image.get("width")) if (image.get("width") or "").isdigit() else 0
        if best is None or width > best[0]:
            best = (width, str(image.get("src")))
    return best[1] if best else None


# --- State layer ------------------------------------------------------------


def _post_fields(state: ApolloState, post: dict[str, Any]) -> dict[str, Any]:
    preview = state.field(post, "previewContent") or state.field(post, "extendedPreviewContent")
    preview = preview if isinstance(preview, dict) else {}
    published_at, _ = parse_timestamp(post.get("firstPublishedAt"))
    updated_at, _ = parse_timestamp(post.get("updatedAt") or post.get("latestPublishedAt"))
    claps, claps_raw = parse_count(post.get("clapCount"))
    responses, responses_raw = parse_count(_responses_count(state, post))
    url = post.get("mediumUrl")
    return {
        "story_id": lower_id(post.get("id")),
        "url": canonical_url(url) if isinstance(url, str) else None,
        "title": clean_text(post.get("title")),
        "subtitle": clean_text(preview.get("subtitle")),
        **_creator_fields(state, post),
        **_collection_fields(state, post),
        "published_at": published_at,
        "updated_at": updated_at,
        "reading_time_min": _reading_time(post.get("readingTime")),
        "word_count": parse_count(post.get("wordCount"))[0],
        "claps": claps,
        "claps_raw": claps_raw,
        "responses": responses,
        "responses_raw": responses_raw,
        "tags": _tag_slugs(state, post),
        "is_member_only": post.get("isLocked") if isinstance(post.get("isLocked"), bool) else None,
        "language": clean_text(post.get("detectedLanguage")),
        "image_url": _state_image_url(state, post),
    }


def _creator_fields(state: ApolloState, post: dict[str, Any]) -> dict[str, Any]:
    user = state.field(post, "creator")
    if not isinstance(user, dict):
        return {}
    username = clean_text(user.get("username"))
    return {
        "author_id": lower_id(user.get("id")),
        "author_username": username.lstrip("@") if username else None,
        "author_name": clean_text(user.get("name")),
    }


def _collection_fields(state: ApolloState, post: dict[str, Any]) -> dict[str, Any]:
    collection = state.field(post, "collection")
    if not isinstance(collection, dict):
        return {}
    slug = clean_text(collection.get("slug"))
    return {
        "publication_id": lower_id(collection.get("id")),
        "publication_slug": slug.lower() if slug else None,
        "publication_name": clean_text(collection.get("name")),
    }


def _responses_count(state: ApolloState, post: dict[str, Any]) -> Any:
    responses = state.field(post, "postResponses")
    if isinstance(responses, dict):
        return responses.get("count")
    return post.get("responsesCount")


def _reading_time(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


def _tag_slugs(state: ApolloState, post: dict[str, Any]) -> list[str]:
    tags = state.field(post, "tags")
    slugs = []
    for tag in tags if isinstance(tags, list) else []:
        if isinstance(tag, dict):
            slugs.append(tag_slug(tag.get("normalizedTagSlug") or tag.get("id")) or "")
    return unique(slugs)


def _state_image_url(state: ApolloState, post: dict[str, Any]) -> str | None:
    raw = post.get("previewImage")
    image = state.resolve(raw)
    image_id = image.get("id") if isinstance(image, dict) else None
    if not image_id and isinstance(raw, dict):
        ref = raw.get("__ref") or raw.get("id")
        if isinstance(ref, str) and ref.startswith("ImageMetadata:"):
            image_id = ref.split(":", 1)[1]
    if not isinstance(image_id, str) or not image_id.strip():
        return None
    return PREVIEW_IMAGE_URL.format(image_id=image_id.strip())
