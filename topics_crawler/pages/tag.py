"""Tag pages: ``medium.com/tag/<slug>`` today and ``medium.com/topic/<slug>`` (2019).

Output, in order: one :class:`TagPage`, the listing-card stories (one per
story id, merged across sections: the first card fills, later cards only
fill gaps), then the authors and publications of those stories found in the
Apollo state. Links: every story, author, publication and tag link on the
page (by URL pattern), plus the URLs of the stories only the state lists.

Layers, best first: Apollo state (``tagFromSlug`` → ``Tag``, 2019
``topic`` → ``Topic``), JSON-LD ``BreadcrumbList``, meta tags (title and the
"Read stories about …" description), DOM hooks (``h1``, breadcrumb ``nav``,
``section`` headings, ``data-testid`` blocks).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from topics_crawler.items import Author, Item, Publication, Story, TagPage, fill_missing
from topics_crawler.layers import pick_paired
from topics_crawler.normalize import clean_text, parse_count, tag_slug, unique
from topics_crawler.pages._cards import (
    Card,
    find_entity,
    parse_cards,
    posts_in,
    story_from_post,
)
from topics_crawler.pages._document import Document
from topics_crawler.pages._entities import author_from_apollo, lower_id, publication_from_apollo
from topics_crawler.pages._result import PageResult, unique_links
from topics_crawler.pages._state import ApolloState
from topics_crawler.urls import MediumLink, classify_url, is_medium_domain, tag_url

#: Section headings whose key differs from the lowercased heading.
SECTION_ALIASES = {"recommended_stories": "recommended"}
#: 2019 ``Topic`` connections → section keys, in page order.
TOPIC_CONNECTIONS = (
    ("featured", "featuredPosts"),
    ("latest", "latestPosts"),
    ("popular", "popularPosts"),
)
WHO_TO_FOLLOW = "who_to_follow"

_TITLE_RE = re.compile(r"^(?:The most insightful stories about\s+)?(?P<name>.+?)\s+[-–—]\s+Medium$")
_BOILERPLATE_RE = re.compile(
    r"^Read stories about (?P<name>.+?) on Medium\.\s+Discover smart, unique perspectives on .+?"
    r"(?: like (?P<related>.+?))?\.?$",
    re.DOTALL,
)
_RELATED_SPLIT_RE = re.compile(r",\s*(?:and\s+)?|\s+and\s+")
_COUNT_LINE_RE = re.compile(r"^(?P<count>\d[\d.,]*\s*[KMB]?)\s+(?P<what>followers?|stories)$", re.I)
_COUNT_FIELDS = {"follower": "followers", "followers": "followers", "stories": "story_count"}
_TOPIC_PATH_RE = re.compile(r"^/topics?/(?P<slug>[a-z0-9][a-z0-9\-_]*)", re.I)


def parse_tag(doc: Document) -> PageResult:
    """Parse a tag (topic) page. Never raises; problems go to ``errors``."""
    result = PageResult(kind="tag", url=doc.url)
    if doc.tree is None or not _is_medium_page(doc):
        doc.error("not a Medium page" if doc.tree is not None else "no HTML to parse")
        result.missing = ["name", "sections"]
        return result
    state = doc.apollo
    domains = sorted(doc.medium_domains)
    entity = _tag_entity(state, _slug_from_urls(doc))
    slug = _slug_from_urls(doc) or _entity_slug(entity)
    fields = pick_paired(
        _state_fields(state, entity) if state is not None and entity else {},
        _json_ld_fields(doc, slug),
        _meta_fields(doc),
        _dom_fields(doc),
    )
    cards = parse_cards(doc, domains=domains)
    sections = _state_sections(state, entity) or _html_sections(doc, cards, fields.get("name"))
    stories = _merge_stories(cards, sections, state, doc.scraped_at)
    who = _who_to_follow(doc, state, domains)
    page = TagPage(
        **{k: v for k, v in fields.items() if k != "tag"},
        tag=slug,
        url=tag_url(slug) if slug else None,
        sections=sections,
        who_to_follow=who,
        scraped_at=doc.scraped_at,
    )
    if not slug:
        doc.error("tag slug not found in URL, canonical link or state")
    related = _state_entities(state, stories, who, doc.scraped_at) if state is not None else []
    result.items = [page, *stories, *related]
    result.links = _page_links(doc, domains, slug, [*stories, *related])
    result.missing = [name for name in ("name", "sections") if not getattr(page, name)]
    return result


# --- identity ---------------------------------------------------------------


def _is_medium_page(doc: Document) -> bool:
    if doc.meta.get("og:site_name", "").strip().lower() == "medium" or doc.apollo is not None:
        return True
    canonical = doc.canonical_link or doc.meta.get("og:url") or ""
    return is_medium_domain(urlsplit(canonical).hostname or "")


def _slug_from_urls(doc: Document) -> str | None:
    """Tag slug from ``/tag/<slug>`` or ``/topic/<slug>`` in the URL, canonical or og:url."""
    for url in (doc.url, doc.canonical_link, doc.meta.get("og:url")):
        if not url:
            continue
        link = classify_url(url)
        if link is not None and link.kind == "tag":
            return link.key
        topic = _TOPIC_PATH_RE.match(urlsplit(url).path)
        if topic:
            return topic.group("slug").lower()
    return None


def _tag_entity(state: ApolloState | None, slug: str | None) -> dict[str, Any] | None:
    """``tagFromSlug(…)`` → ``Tag`` (today), ``topic(…)`` → ``Topic`` (2019) or ``Tag:<slug>``."""
    if state is None:
        return None
    for call, argument in (("tagFromSlug", "tagSlug"), ("topic", "slug")):
        for args, value in state.root_calls(call):
            if isinstance(value, dict) and (slug is None or args.get(argument) == slug):
                return value
    return state.get(f"Tag:{slug}") if slug else None


def _entity_slug(entity: dict[str, Any] | None) -> str | None:
    if not entity:
        return None
    return tag_slug(entity.get("normalizedTagSlug") or entity.get("slug") or entity.get("id"))


# --- layers -----------------------------------------------------------------


def _state_fields(state: ApolloState, entity: dict[str, Any]) -> dict[str, Any]:
    followers, followers_raw = parse_count(entity.get("followerCount"))
    story_count, story_count_raw = parse_count(entity.get("postCount"))
    related = state.field(entity, "relatedTags") or state.field(entity, "relatedTopics") or []
    related_slugs = [_entity_slug(tag) for tag in related if isinstance(tag, dict)]
    return {
        "name": clean_text(entity.get("displayTitle") or entity.get("name")),
        "description": clean_text(entity.get("description")),
        "related_tags": unique([s for s in related_slugs if s]),
        "followers": followers,
        "followers_raw": followers_raw,
        "story_count": story_count,
        "story_count_raw": story_count_raw,
    }


def _json_ld_fields(doc: Document, slug: str | None) -> dict[str, Any]:
    """Name and parent topics from a ``BreadcrumbList`` (the last crumb is the tag)."""
    crumbs = doc.json_ld_of("BreadcrumbList")
    elements = crumbs.get("itemListElement") if crumbs else None
    if not isinstance(elements, list):
        return {}
    entries = sorted((e for e in elements if isinstance(e, dict)), key=_crumb_position)
    named = [(_crumb_name(e), _crumb_url(e)) for e in entries]
    named = [(name, url) for name, url in named if name]
    if not named:
        return {}
    last_name, last_url = named[-1]
    last_link = classify_url(last_url) if last_url else None
    if last_link is not None and last_link.key != slug:
        return {"parent_topics": [name for name, _ in named]}
    return {"name": last_name, "parent_topics": [name for name, _ in named[:-1]]}


def _crumb_position(entry: dict[str, Any]) -> int:
    position = entry.get("position")
    return position if isinstance(position, int) else 0


def _crumb_name(entry: dict[str, Any]) -> str | None:
    item = entry.get("item")
    return clean_text(entry.get("name") or (item.get("name") if isinstance(item, dict) else None))


def _crumb_url(entry: dict[str, Any]) -> str | None:
    item = entry.get("item")
    url = item.get("@id") or item.get("url") if isinstance(item, dict) else item
    return url if isinstance(url, str) else None


def _meta_fields(doc: Document) -> dict[str, Any]:
    """Name from the title; description, or related tags from Medium's boilerplate."""
    fields: dict[str, Any] = {}
    titles = [*(str(t) for t in doc.xpath("//title/text()")), doc.meta.get("og:title", "")]
    for title in titles:
        match = _TITLE_RE.match(clean_text(title) or "")
        if match:
            fields["name"] = clean_text(match.group("name"))
            break
    text = clean_text(doc.meta.get("description") or doc.meta.get("og:description"))
    if not text:
        return fields
    boilerplate = _BOILERPLATE_RE.match(text)
    if boilerplate:
        fields["related_tags"] = _related_from_boilerplate(boilerplate.group("related") or "")
    elif fields.get("name"):
        fields["description"] = clean_text(text.removeprefix(f"{fields['name']} on Medium:"))
    return fields


def _related_from_boilerplate(listing: str) -> list[str]:
    """``"Deep Learning, Pytorch, and more"`` → ``["deep-learning", "pytorch"]``."""
    names = [clean_text(part) for part in _RELATED_SPLIT_RE.split(listing)]
    slugs = [tag_slug(name) for name in names if name and name.lower() != "more"]
    return unique([s for s in slugs if s])


def _dom_fields(doc: Document) -> dict[str, Any]:
    breadcrumb = _tag_anchors(doc, "//nav[@aria-label='Breadcrumb']//a[@href]")
    related = _tag_anchors(doc, "//*[@data-testid='related-tags']//a[@href]")
    return {
        "name": next((clean_text(h.text_content()) for h in doc.xpath("//h1")), None),
        "parent_topics": unique([text for text, _ in breadcrumb]),
        "subtopics": _subtopics(doc),
        "related_tags": unique([link.key for _, link in related]),
        **_count_line_fields(doc),
    }


def _tag_anchors(doc: Document, query: str) -> list[tuple[str, MediumLink]]:
    """``(text, link)`` of the tag links matched by ``query``."""
    pairs = []
    for anchor in doc.xpath(query):
        link = classify_url(anchor.get("href"), doc.url)
        if link is not None and link.kind == "tag":
            pairs.append((clean_text(anchor.text_content()) or "", link))
    return pairs


def _count_line_fields(doc: Document) -> dict[str, Any]:
    """``<span>1.9K followers</span> · <span>2.4K stories</span>`` under the name."""
    fields: dict[str, Any] = {}
    for text in doc.xpath("//body//text()[not(ancestor::script)]"):
        match = _COUNT_LINE_RE.match(clean_text(text) or "")
        name = _COUNT_FIELDS[match.group("what").lower()] if match else None
        if match and name and name not in fields:
            fields[name], fields[f"{name}_raw"] = parse_count(match.group("count"))
    return fields


def _subtopics(doc: Document) -> list[dict[str, str | None]]:
    """Sub-topic clusters: ``h3`` name and the ``p`` that follows it."""
    clusters: list[dict[str, str | None]] = []
    for heading in doc.xpath("//*[@data-testid='subtopics']//h3"):
        name = clean_text(heading.text_content())
        paragraph = next(iter(heading.xpath("following-sibling::p[1]")), None)
        description = clean_text(paragraph.text_content()) if paragraph is not None else None
        if name:
            clusters.append({"name": name, "description": description})
    return clusters


# --- sections and stories ---------------------------------------------------


def section_key(heading: str) -> str:
    """Section key of a heading: ``"Popular this week"`` → ``popular_this_week``."""
    key = re.sub(r"[^a-z0-9]+", "_", heading.lower()).strip("_")
    return SECTION_ALIASES.get(key, key)


def _state_sections(
    state: ApolloState | None, entity: dict[str, Any] | None
) -> dict[str, list[str]]:
    """2019 ``Topic`` connections (``featuredPosts`` …) as sections; empty ones left out."""
    if state is None or not entity:
        return {}
    sections: dict[str, list[str]] = {}
    for key, connection in TOPIC_CONNECTIONS:
        ids = unique(
            [
                lower_id(post.get("id")) or ""
                for post in posts_in(state, state.field(entity, connection))
            ]
        )
        if ids:
            sections[key] = ids
    return sections


def _html_sections(doc: Document, cards: list[Card], tag_name: str | None) -> dict[str, list[str]]:
    """Cards grouped under the nearest preceding ``h2`` (document order)."""
    tree = doc.tree
    if tree is None or not cards:
        return {}
    order = {element: index for index, element in enumerate(tree.iter())}
    card_elements = {card.element for card in cards}
    headings = []
    for heading in doc.xpath("//h2"):
        text = clean_text(heading.text_content())
        inside_card = any(parent in card_elements for parent in heading.iterancestors())
        if text and text != tag_name and not inside_card:
            headings.append((order[heading], section_key(text)))
    sections: dict[str, list[str]] = {}
    for card in cards:
        position = order.get(card.element, -1)
        keys = [key for start, key in headings if start < position]
        story_id = card.story.story_id
        if keys and story_id and story_id not in sections.setdefault(keys[-1], []):
            sections[keys[-1]].append(story_id)
    return {key: ids for key, ids in sections.items() if ids}


def _merge_stories(
    cards: list[Card], sections: dict[str, list[str]], state: ApolloState | None, scraped_at: str
) -> list[Story]:
    """One story per id: cards in page order (later cards fill gaps), then state-only ids."""
    stories: dict[str, Story] = {}
    for card in cards:
        story_id = card.story.story_id or ""
        known = stories.get(story_id)
        merged = fill_missing(known, card.story) if known else card.story
        if isinstance(merged, Story):
            stories[story_id] = merged
    for story_id in (sid for ids in sections.values() for sid in ids):
        post = state.get(f"Post:{story_id}") if state is not None else None
        if story_id not in stories and state is not None and post:
            stories[story_id] = story_from_post(state, post, scraped_at)
    return list(stories.values())


def _who_to_follow(
    doc: Document, state: ApolloState | None, domains: list[str]
) -> list[dict[str, str | None]]:
    """Accounts of the "Who to follow" section: ``{kind, id, username|slug, name}``."""
    heading = next(
        (h for h in doc.xpath("//h2") if section_key(h.text_content()) == WHO_TO_FOLLOW), None
    )
    if heading is None:
        return []
    block = next(iter(heading.xpath("ancestor::section[1]")), heading.getparent())
    entries: dict[tuple[str, str], dict[str, str | None]] = {}
    for anchor in block.xpath(".//a[@href]"):
        link = classify_url(anchor.get("href"), doc.url, domains)
        name = clean_text(anchor.text_content())
        if link is None or link.kind not in ("author", "publication") or not name:
            continue
        entries.setdefault((link.kind, link.key), _follow_entry(state, link, name))
    return list(entries.values())


def _follow_entry(state: ApolloState | None, link: MediumLink, name: str) -> dict[str, str | None]:
    if link.kind == "author":
        username = link.url.rsplit("/@", 1)[-1]
        user = find_entity(state, ("User",), "username", username)
        user_id = lower_id(user.get("id")) if user else None
        return {"kind": "author", "id": user_id, "username": username, "name": name}
    # A publication on its own domain is linked (and keyed) by that domain.
    collections = ("Collection", "Publication")
    by_domain = "." in link.key
    collection = find_entity(state, collections, "domain" if by_domain else "slug", link.key)
    collection_id = lower_id(collection.get("id")) if collection else None
    slug = (
        collection.get("slug") if collection and isinstance(collection.get("slug"), str) else None
    )
    return {
        "kind": "publication",
        "id": collection_id,
        "slug": slug if isinstance(slug, str) and slug else (None if by_domain else link.key),
        "name": name,
    }


def _state_entities(
    state: ApolloState, stories: list[Story], who: list[dict[str, str | None]], scraped_at: str
) -> list[Item]:
    """Authors and publications of the stories, then of "Who to follow", from the state."""
    keys: list[str] = []
    for story in stories:
        keys.append(f"User:{story.author_id}")
        keys += [f"{name}:{story.publication_id}" for name in ("Collection", "Publication")]
    for entry in who:
        typenames = ("User",) if entry["kind"] == "author" else ("Collection", "Publication")
        keys += [f"{typename}:{entry['id']}" for typename in typenames]
    items: list[Item] = []
    for key in unique(keys):
        entity = state.get(key)
        if entity is None:
            continue
        if key.startswith("User:"):
            items.append(author_from_apollo(state, entity, scraped_at))
        else:
            items.append(publication_from_apollo(state, entity, scraped_at))
    return items


def _page_links(
    doc: Document, domains: list[str], slug: str | None, items: list[Item]
) -> list[MediumLink]:
    """Every entity link of the page in page order, then the state-only item URLs."""
    hrefs = [str(h) for h in doc.xpath("//a/@href | //*[@data-href]/@data-href")]
    hrefs += [
        item.url for item in items if isinstance(item, Story | Author | Publication) and item.url
    ]
    links = unique_links(classify_url(href, doc.url, domains) for href in hrefs)
    return [link for link in links if not (link.kind == "tag" and link.key == slug)]
