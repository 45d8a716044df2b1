"""Publication home pages: ``medium.com/<slug>``, ``<name>.medium.com`` and custom domains.

The ``Collection`` is found through the ``collectionByDomainOrSlug`` root call
(any argument form, read through :mod:`topics_crawler.pages.state`), or by slug
/ domain among the cached collections; the HTML adds the ``<h1>`` name, the
``<p>`` description and the "N followers" text. The listing cards give the
publication's stories. Layers, best first: state, meta tags, DOM hooks.

The stories to follow are the page's story links, cards first. A 2026 home ships its
posts in the state as ``Post`` nodes of ``{__typename, id}``: they name stories and
describe none, so no story row comes of them (:func:`~._posts.is_stub`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from topics_crawler.items import Item, Publication, item_to_dict
from topics_crawler.items.layers import pick_named
from topics_crawler.items.values import clean_text
from topics_crawler.pages._cards import parse_cards
from topics_crawler.pages._document import Document
from topics_crawler.pages._entities import publication_from_collection
from topics_crawler.pages._follow import (
    FOLLOW_XPATH,
    follow_counts,
    strip_site_suffix,
)
from topics_crawler.pages._result import PageResult, unique_links
from topics_crawler.pages.state import Node, State
from topics_crawler.urls import (
    MEDIUM_HOST,
    RESERVED_SEGMENTS,
    MediumLink,
    canonical_url,
    publication_url,
)

#: Fields every publication home should give; absent ones go to ``PageResult.missing``.
EXPECTED_FIELDS = ("publication_id", "slug", "name")
_COLLECTION_QUERIES = ("collectionByDomainOrSlug", "collection")
_COLLECTION_TYPES = ("Collection", "Publication")
_COLLECTION_ARGS = ("domainOrSlug", "slug", "domain", "id")
_NAME_XPATH = "(//h1[not(ancestor::article)])[1]"


def parse_publication(doc: Document) -> PageResult:
    """Publication (first), then the stories of its listing cards."""
    result = PageResult(kind="publication", url=doc.url)
    home = page_home(doc)
    state = doc.apollo_state
    collection = find_collection(state, home) if state is not None else None
    state_layer = _state_layer(collection, doc.scraped_at) if collection is not None else {}
    fields = pick_named(
        ("state", state_layer),
        ("meta", _meta_layer(doc)),
        ("url", home.layer()),
        ("dom", _dom_layer(doc)),
    )
    if not fields.get("name") and not state_layer:
        doc.error("no publication data found")
        return result
    publication = Publication(**fields, scraped_at=doc.scraped_at)
    domains = [publication.domain] if publication.domain else []
    cards = parse_cards(doc, domains=domains)
    items: list[Item] = [publication, *(card.story for card in cards)]
    result.items = items
    found: list[MediumLink | None] = [link for card in cards for link in card.links]
    found += [doc.classify(href) for href in doc.hrefs]  # links outside cards too
    result.links = unique_links(link for link in found if link and link.kind == "story")
    result.missing = [name for name in EXPECTED_FIELDS if getattr(publication, name) is None]
    return result


@dataclass(frozen=True)
class PageHome:
    """Where a publication home page lives: a slug on medium.com or a (sub)domain."""

    slug: str | None
    domain: str | None

    @property
    def key(self) -> str | None:
        """The ``domainOrSlug`` Medium queries the collection by."""
        return self.domain or self.slug

    def layer(self) -> dict[str, Any]:
        """Fields the address alone gives."""
        if not self.key:
            return {}
        return {
            "slug": self.slug,
            "domain": self.domain,
            "url": publication_url(self.slug or "", self.domain),
        }


def page_home(doc: Document) -> PageHome:
    """Slug or domain of the publication, from the canonical link, else the page URL."""
    for candidate in (doc.canonical_link, doc.url):
        url = canonical_url(candidate) if candidate else None
        if url is None:
            continue
        parts = urlsplit(url)
        host = parts.netloc
        segments = [s for s in parts.path.split("/") if s]
        if host == MEDIUM_HOST:
            if len(segments) == 1 and _is_publication_slug(segments[0]):
                return PageHome(segments[0].lower(), None)
            continue
        if not segments:
            return PageHome(None, host)
    return PageHome(None, None)


def _is_publication_slug(segment: str) -> bool:
    return not segment.startswith("@") and segment.lower() not in RESERVED_SEGMENTS


def find_collection(state: State, home: PageHome) -> Node | None:
    """The page's collection: the root call for its slug or domain (any argument name),
    else the cached ``Collection`` whose slug or domain is the page's, else the only
    root call result."""
    wanted = {value.lower() for value in (home.slug, home.domain) if value}
    fallback = None
    for query in _COLLECTION_QUERIES:
        for call in state.root.calls(query):
            collection = call.node
            if collection is None or collection.typename not in (*_COLLECTION_TYPES, None):
                continue
            asked = next((call.args.get(k) for k in _COLLECTION_ARGS if call.args.get(k)), "")
            if isinstance(asked, str) and asked.lower() in wanted:
                return collection
            fallback = fallback or collection
    for entity in state.entities(*_COLLECTION_TYPES):
        if _entity_keys(entity) & wanted:
            return entity
    return fallback


def _entity_keys(entity: Node) -> set[str]:
    return {(entity.str(name) or "").lower() for name in ("slug", "domain")} - {""}


def _state_layer(collection: Node, scraped_at: str) -> dict[str, Any]:
    data = item_to_dict(publication_from_collection(collection, scraped_at))
    data.pop("item_type")
    data.pop("scraped_at")
    return data


def _meta_layer(doc: Document) -> dict[str, Any]:
    return {"name": strip_site_suffix(doc.meta.get("og:title"))}


def _dom_layer(doc: Document) -> dict[str, Any]:
    headings = doc.xpath(_NAME_XPATH)
    heading = headings[0] if headings else None
    description = heading.xpath("following-sibling::p[1]") if heading is not None else []
    counts = follow_counts(doc.xpath(FOLLOW_XPATH))
    return {
        "name": clean_text(heading.text_content()) if heading is not None else None,
        "description": clean_text(description[0].text_content()) if description else None,
        "followers": counts.get("followers"),
        "followers_raw": counts.get("followers_raw"),
    }
