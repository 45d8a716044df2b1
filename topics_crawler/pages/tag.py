"""Tag pages: ``medium.com/tag/<slug>`` (2020 on) and ``medium.com/topic/<slug>`` (2019).

Output, in order: one :class:`TagPage`, the listed stories (one per story id, merged
across sections: the first card fills, later cards only fill gaps; stories only the
state lists come after the cards), then the authors and publications of those stories,
of "Who to follow" and of the top writers, as the state describes them. Links: every
story, author, publication and tag link on the page (by URL pattern), then the URLs of
what only the state lists.

Layers, best first, per field: the state (:mod:`._tag_state`: 2019 ``Topic``, 2022
``tagFromSlug`` / ``tagFeaturesFromSlug`` / ``relatedTags`` / ``tagTopWriters`` /
``tagFeed``, today's ``Tag``), JSON-LD ``BreadcrumbList``, meta tags (title and the
"Read stories about …" description), and the page as a reader sees it
(:mod:`._tag_dom`: title, counts line, breadcrumb, headed sections, sub-topic clusters,
"Who to follow", related topics). Sections are the page's headed sections when it has
any; state listings the page shows no cards of are added after them.

Core fields (:data:`CORE_FIELDS`, absent ones in ``PageResult.missing``): ``name`` and
``stories`` (the page listed at least one story).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from topics_crawler.items import Author, Item, Publication, Story, TagPage, fill_missing
from topics_crawler.items.layers import join_sources, pick_named
from topics_crawler.items.values import clean_text, tag_slug, unique
from topics_crawler.pages._cards import Card, PageLinks, parse_cards
from topics_crawler.pages._document import Document
from topics_crawler.pages._entities import (
    author_from_user,
    lower_id,
    publication_from_collection,
)
from topics_crawler.pages._postings import read_postings
from topics_crawler.pages._posts import listing_story
from topics_crawler.pages._result import PageResult, unique_links
from topics_crawler.pages._tag_dom import (
    RELATED_KEYS,
    WHO_TO_FOLLOW,
    Block,
    TagOutline,
    clusters_of,
    read_outline,
    section_key,
)
from topics_crawler.pages._tag_state import TagState, read_tag_state, top_writer_records
from topics_crawler.pages.state import Node, State
from topics_crawler.urls import MediumLink, classify_url, is_medium_domain, post_url, tag_url

__all__ = ["CORE_FIELDS", "parse_tag", "section_key"]

#: What every tag page should give; the drift alarm counts pages without them.
CORE_FIELDS = ("name", "stories")
#: Section of the stories the page's JSON-LD ``CollectionPage`` lists (:mod:`._postings`).
POSTINGS_SECTION = "postings"
_TITLE_RE = re.compile(r"^(?:The most insightful stories about\s+)?(?P<name>.+?)\s+[-–—]\s+Medium$")
_BOILERPLATE_RE = re.compile(
    r"^Read stories about (?P<name>.+?) on Medium\.\s+Discover smart, unique perspectives on .+?"
    r"(?: like (?P<related>.+?))?\.?$",
    re.DOTALL,
)
_RELATED_SPLIT_RE = re.compile(r",\s*(?:and\s+)?|\s+and\s+")
#: Longest title / description the patterns look at (their lazy groups backtrack).
MAX_META_TEXT = 1_000
_TOPIC_PATH_RE = re.compile(r"^/topics?/(?P<slug>[a-z0-9][a-z0-9\-_]*)", re.I)
_COLLECTIONS = ("Collection", "Publication")


def parse_tag(doc: Document) -> PageResult:
    """Parse a tag (topic) page. Never raises; problems go to ``errors``."""
    result = PageResult(kind="tag", url=doc.url)
    if doc.tree is None or not _is_medium_page(doc):
        doc.error("not a Medium page" if doc.tree is not None else "no HTML to parse")
        result.missing = list(CORE_FIELDS)
        return result
    state = doc.state
    links = PageLinks(doc.url, sorted(doc.medium_domains))
    url_slug, is_topic = _slug_from_urls(doc)
    tag_state = read_tag_state(state, url_slug)
    slug = url_slug or (tag_state.slug if tag_state else None)
    cards = parse_cards(doc, links=links)
    outline = read_outline(doc.tree, cards, links)
    fields = pick_named(
        ("state", tag_state.fields if tag_state else {}),
        ("jsonld", _json_ld_fields(doc, slug)),
        ("meta", _meta_fields(doc)),
        ("dom", _dom_fields(outline)),
    )
    dom_sections, subtopics = _dom_sections(outline)
    postings = read_postings(doc, tag_state.json_ld if tag_state else None)
    state_sections = dict(tag_state.sections) if tag_state else {}
    if postings.ids:
        state_sections.setdefault(POSTINGS_SECTION, postings.ids)
    sections = _merge_sections(dom_sections, state_sections)
    stories = _merge_stories(cards, sections, tag_state, doc.scraped_at, postings.stories)
    who = _who_to_follow(outline, state)
    writers = tag_state.writers if tag_state else []
    fields["data_source"] = join_sources(
        fields.get("data_source"),
        "dom" if dom_sections or subtopics or who else None,
        "state" if tag_state and (tag_state.sections or writers) else None,
    )
    page = TagPage(
        **{k: v for k, v in fields.items() if k not in ("tag", "url")},
        tag=slug,
        url=_page_url(slug, is_topic or bool(tag_state and tag_state.is_topic)),
        subtopics=subtopics,
        sections=sections,
        who_to_follow=who,
        top_writers=top_writer_records(writers),
        scraped_at=doc.scraped_at,
    )
    if not slug:
        doc.error("tag slug not found in URL, canonical link or state")
    entities = _state_entities(state, stories, who, writers, doc.scraped_at)
    result.items = [page, *stories, *entities]
    result.links = _page_links(
        outline, links, slug, page, [*stories, *entities], postings=postings.links
    )
    result.missing = [name for name in CORE_FIELDS if not _has(page, stories, name)]
    return result


def _has(page: TagPage, stories: list[Story], name: str) -> bool:
    return bool(stories) if name == "stories" else bool(getattr(page, name))


# --- identity ---------------------------------------------------------------


def _is_medium_page(doc: Document) -> bool:
    if doc.meta.get("og:site_name", "").strip().lower() == "medium" or doc.state is not None:
        return True
    canonical = doc.canonical_link or doc.meta.get("og:url") or ""
    return is_medium_domain(urlsplit(canonical).hostname or "")


def _slug_from_urls(doc: Document) -> tuple[str | None, bool]:
    """Tag slug from ``/tag/<slug>`` or ``/topic/<slug>`` in the URL, canonical or og:url,
    and whether it is a 2019 topic URL."""
    for url in (doc.url, doc.canonical_link, doc.meta.get("og:url")):
        if not url:
            continue
        link = classify_url(url)
        if link is not None and link.kind == "tag":
            return link.key, False
        topic = _TOPIC_PATH_RE.match(urlsplit(url).path)
        if topic:
            return topic.group("slug").lower(), True
    return None, False


def _page_url(slug: str | None, is_topic: bool) -> str | None:
    if not slug:
        return None
    return f"https://medium.com/topic/{slug}" if is_topic else tag_url(slug)


# --- layers -----------------------------------------------------------------


def _json_ld_fields(doc: Document, slug: str | None) -> dict[str, Any]:
    """Name and parent topics from a ``BreadcrumbList`` (the last crumb is the tag)."""
    crumbs = doc.json_ld_of("BreadcrumbList")
    entries = sorted(crumbs.nodes("itemListElement"), key=_crumb_position) if crumbs else []
    named = [(_crumb_name(e), _crumb_url(e)) for e in entries]
    named = [(name, url) for name, url in named if name]
    if not named:
        return {}
    last_name, last_url = named[-1]
    last_link = classify_url(last_url) if last_url else None
    if last_link is not None and last_link.key != slug:
        return {"parent_topics": [name for name, _ in named]}
    return {"name": last_name, "parent_topics": [name for name, _ in named[:-1]]}


def _crumb_position(entry: Node) -> int:
    return entry.int("position") or 0


def _crumb_name(entry: Node) -> str | None:
    """A crumb's ``name``, else its ``item``'s (``item`` is an object or a URL)."""
    item = entry.node("item") if isinstance(entry.value("item"), dict) else None
    return clean_text(entry.str("name") or (item.str("name") if item is not None else None))


def _crumb_url(entry: Node) -> str | None:
    if not isinstance(entry.value("item"), dict):
        return entry.str("item")
    item = entry.node("item")
    return (item.str("@id") or item.str("url")) if item is not None else None


def _meta_fields(doc: Document) -> dict[str, Any]:
    """Name from the title; description, or related tags from Medium's boilerplate."""
    fields: dict[str, Any] = {}
    titles = [*(str(t) for t in doc.xpath("//title/text()")), doc.meta.get("og:title", "")]
    for title in titles:
        match = _TITLE_RE.match(clean_text(title[:MAX_META_TEXT]) or "")
        if match:
            fields["name"] = clean_text(match.group("name"))
            break
    text = clean_text(doc.meta.get("description") or doc.meta.get("og:description"))
    if not text or len(text) > MAX_META_TEXT:  # Medium's boilerplate is a sentence or two
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


def _dom_fields(outline: TagOutline) -> dict[str, Any]:
    crumbs = outline.breadcrumb or outline.above_title
    related = list(outline.marked_related)
    for block in outline.blocks:
        if block.key in RELATED_KEYS:
            related += block.all_links("tag")
    return {
        "name": outline.name,
        "parent_topics": unique([text for text, _ in crumbs if text]),
        "related_tags": unique([link.key for _, link in related]),
        **outline.counts,
    }


# --- sections and stories ---------------------------------------------------


def _dom_sections(outline: TagOutline) -> tuple[dict[str, list[str]], list[dict[str, str | None]]]:
    """Headed sections (each block holding cards, keyed by its heading) and the sub-topic
    clusters with the key of their stories."""
    sections: dict[str, list[str]] = {}
    for block in outline.blocks:
        ids = unique([sid for card in block.cards if (sid := card.story.story_id)])
        if ids and block.heading:
            known = sections.setdefault(block.key, [])
            known += [sid for sid in ids if sid not in known]
    subtopics = [_cluster(block, sections) for block in clusters_of(outline) if block.heading]
    return sections, subtopics


def _cluster(block: Block, sections: dict[str, list[str]]) -> dict[str, str | None]:
    return {
        "name": block.heading,
        "description": block.paragraphs[0] if block.paragraphs else None,
        "section": block.key if block.key in sections else None,
    }


def _merge_sections(
    page: dict[str, list[str]], state: dict[str, list[str]]
) -> dict[str, list[str]]:
    """The page's sections, then the state's listings of which the page shows no story."""
    shown = {sid for ids in page.values() for sid in ids}
    merged = dict(page)
    for key, ids in state.items():
        if key not in merged and not shown.intersection(ids):
            merged[key] = ids
    return merged


def _merge_stories(
    cards: list[Card],
    sections: dict[str, list[str]],
    tag_state: TagState | None,
    scraped_at: str,
    postings: list[Story],
) -> list[Story]:
    """One story per id: cards in page order (later cards fill gaps), then the ids only the
    state describes, then the JSON-LD postings (filling gaps of a story already there). An
    id the page only names (a reference without an entity) gives no row: its link does."""
    stories: dict[str, Story] = {}

    def add(story: Story) -> None:
        story_id = story.story_id or ""
        known = stories.get(story_id)
        merged = fill_missing(known, story) if known else story
        if isinstance(merged, Story):
            stories[story_id] = merged

    for card in cards:
        add(card.story)
    posts = tag_state.posts if tag_state else {}
    for story_id in (sid for ids in sections.values() for sid in ids):
        if story_id not in stories and story_id in posts:
            stories[story_id] = listing_story(posts[story_id], scraped_at)
    for posting in postings:
        add(posting)
    return list(stories.values())


# --- accounts ---------------------------------------------------------------


def _who_to_follow(outline: TagOutline, state: State | None) -> list[dict[str, str | None]]:
    """Accounts of the "Who to follow" section: ``{kind, id, username|slug, name}``."""
    block = outline.block(WHO_TO_FOLLOW)
    if block is None:
        return []
    accounts = _Accounts(state)
    entries: dict[tuple[str, str], dict[str, str | None]] = {}
    for name, link in block.all_links("author", "publication"):
        if name:
            entries.setdefault((link.kind, link.key), accounts.entry(link, name))
    return list(entries.values())


class _Accounts:
    """Users and collections of the state by username / slug / domain (built once)."""

    def __init__(self, state: State | None) -> None:
        self.users: dict[str, Node] = {}
        self.collections: dict[str, Node] = {}
        if state is None:
            return
        for user in state.entities("User"):
            username = user.str("username")
            if username:
                self.users.setdefault(username.lower().lstrip("@"), user)
        for collection in state.entities(*_COLLECTIONS):
            for key in (collection.str("slug"), collection.str("domain")):
                if key:
                    self.collections.setdefault(key.lower(), collection)

    def entry(self, link: MediumLink, name: str) -> dict[str, str | None]:
        if link.kind == "author":
            username = link.url.rsplit("/@", 1)[-1]
            user = self.users.get(username.lower())
            return {
                "kind": "author",
                "id": lower_id(user.id) if user is not None else None,
                "username": username,
                "name": name,
            }
        # A publication on its own domain is linked (and keyed) by that domain.
        collection = self.collections.get(link.key)
        slug = collection.str("slug") if collection is not None else None
        return {
            "kind": "publication",
            "id": lower_id(collection.id) if collection is not None else None,
            "slug": slug or (None if "." in link.key else link.key),
            "name": name,
        }


def _state_entities(
    state: State | None,
    stories: list[Story],
    who: list[dict[str, str | None]],
    writers: list[Node],
    scraped_at: str,
) -> list[Item]:
    """Authors and publications of the stories, of "Who to follow" and the top writers."""
    if state is None:
        return []
    wanted: dict[tuple[str, str], None] = {}  # (typename, id) in first-seen order
    pairs = [(t, i) for story in stories for t, i in _story_entities(story)]
    pairs += [("User" if e["kind"] == "author" else "Collection", e["id"]) for e in who]
    pairs += [("User", lower_id(user.id)) for user in writers]
    for typename, found_id in pairs:
        if found_id:
            wanted.setdefault((typename, found_id))
    items: list[Item] = []
    for typename, entity_id in wanted:
        if typename == "User":
            user = state.entity("User", entity_id)
            if user is not None:
                items.append(author_from_user(user, scraped_at))
            continue
        collection = state.entity("Collection", entity_id) or state.entity("Publication", entity_id)
        if collection is not None:
            items.append(publication_from_collection(collection, scraped_at))
    return items


def _story_entities(story: Story) -> list[tuple[str, str | None]]:
    return [("User", story.author_id), ("Collection", story.publication_id)]


def _page_links(
    outline: TagOutline,
    links: PageLinks,
    slug: str | None,
    page: TagPage,
    items: list[Item],
    *,
    postings: list[MediumLink],
) -> list[MediumLink]:
    """Every entity link of the page in page order, then what only the state and the
    JSON-LD list — a story the page names only by its id at ``medium.com/p/<id>``."""
    found = [links(href) for href in outline.hrefs]
    found += [links(tag_url(related)) for related in page.related_tags]
    found += [
        links(item.url)
        for item in items
        if isinstance(item, Story | Author | Publication) and item.url
    ]
    found += postings
    found += [links(post_url(sid)) for ids in page.sections.values() for sid in ids]
    return [link for link in unique_links(found) if not (link.kind == "tag" and link.key == slug)]
