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
"Who to follow", related topics); the fields of the three layers below the state are read
in :mod:`._tag_fields`. Sections are the page's headed sections when it has any; state
listings the page shows no cards of are added after them. The accounts ("Who to follow",
the authors and publications as items) are read in :mod:`._tag_accounts`.

Core fields (:data:`CORE_FIELDS`, absent ones in ``PageResult.missing``): ``name`` and
``stories`` (the page listed at least one story).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from topics_crawler.items import Author, Item, Publication, Story, TagPage, fill_missing
from topics_crawler.items.layers import join_sources, pick_named
from topics_crawler.items.values import unique
from topics_crawler.pages._cards import Card, PageLinks, parse_cards
from topics_crawler.pages._document import Document
from topics_crawler.pages._postings import read_postings
from topics_crawler.pages._posts import listing_story
from topics_crawler.pages._result import PageResult, unique_links
from topics_crawler.pages._tag_accounts import state_entities, who_to_follow
from topics_crawler.pages._tag_dom import (
    Block,
    TagOutline,
    clusters_of,
    read_outline,
    section_key,
)
from topics_crawler.pages._tag_fields import dom_fields, json_ld_fields, meta_fields
from topics_crawler.pages._tag_state import TagState, read_tag_state, top_writer_records
from topics_crawler.urls import MediumLink, classify_url, is_medium_domain, post_url, tag_url

__all__ = ["CORE_FIELDS", "parse_tag", "section_key"]

#: What every tag page should give; the drift alarm counts pages without them.
CORE_FIELDS = ("name", "stories")
#: Section of the stories the page's JSON-LD ``CollectionPage`` lists (:mod:`._postings`).
POSTINGS_SECTION = "postings"
_TOPIC_PATH_RE = re.compile(r"^/topics?/(?P<slug>[a-z0-9][a-z0-9\-_]*)", re.I)


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
        ("jsonld", json_ld_fields(doc, slug)),
        ("meta", meta_fields(doc)),
        ("dom", dom_fields(outline)),
    )
    dom_sections, subtopics = _dom_sections(outline)
    postings = read_postings(doc, tag_state.json_ld if tag_state else None)
    state_sections = dict(tag_state.sections) if tag_state else {}
    if postings.ids:
        state_sections.setdefault(POSTINGS_SECTION, postings.ids)
    sections = _merge_sections(dom_sections, state_sections)
    stories = _merge_stories(cards, sections, tag_state, doc.scraped_at, postings.stories)
    who = who_to_follow(outline, state)
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
    entities = state_entities(state, stories, who, writers, doc.scraped_at)
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


# --- links ------------------------------------------------------------------


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
