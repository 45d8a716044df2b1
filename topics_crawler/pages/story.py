"""Story pages of every Medium generation (2015–2025) → Story, Author, Publication.

Layers, best first, combined field by field with :func:`pick`:

1. embedded state — Apollo cache (2019–2025) or legacy ``GLOBALS``/``obvInit`` JSON;
2. JSON-LD ``NewsArticle`` / ``SocialMediaPosting``;
3. meta tags (Open Graph, ``article:*``, app deep links);
4. DOM hooks (``data-testid``, ``pw-*`` classes, ``graf`` blocks);
5. the story URL itself (post id, ``@user`` or publication slug).

Links to authors, publications and tags are recognised by URL pattern.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import fields
from typing import Any

from topics_crawler.items import Item, Publication, Story
from topics_crawler.items.layers import pick, pick_named
from topics_crawler.pages._document import Document
from topics_crawler.pages._result import PageResult, unique_links
from topics_crawler.pages._story_html import (
    HTML_LAYERS,
    app_link_post_id,
    dom_layer,
    json_ld_layer,
    page_anchor_links,
    url_layer,
)
from topics_crawler.pages._story_state import (
    StoryState,
    apollo_story,
    find_apollo_post,
    legacy_story,
)
from topics_crawler.urls import (
    MediumLink,
    canonical_url,
    classify_url,
    cross_post_url,
    post_id_from_url,
)

#: Story fields a story page is expected to give; absent ones are listed in ``missing``.
CORE_FIELDS = ("story_id", "url", "title", "author_name", "published_at")
NOT_A_STORY = "no Medium story found (no post id in state, URL or app links)"
LINK_KINDS = frozenset({"author", "publication", "tag"})
_STORY_FIELDS = frozenset(f.name for f in fields(Story) if f.init)
#: Fields the DOM may fill, and those it must not fill once the state gave a body.
_DOM_FIELDS = (
    "title",
    "subtitle",
    "author_name",
    "published_at",
    "reading_time_min",
    "claps",
    "responses",
    "tags",
    "is_member_only",
    "text",
    "markdown",
)
_BODY_FIELDS = ("text", "is_member_only", "markdown")


def parse_story(doc: Document) -> PageResult:
    """Parse a story page; never raises, problems go to ``errors``."""
    state = story_state(doc)
    named = [(state.source, state.fields), ("jsonld", json_ld_layer(doc))]
    for gives, name, layer in HTML_LAYERS:  # each only when it can fill a field still empty
        if not gives <= pick(*(fields for _, fields in named)).keys():
            named.append((name, layer(doc)))
    wanted = dom_fields_wanted(pick(*(fields for _, fields in named)), state)
    if wanted:
        named.append(("dom", dom_layer(doc, wanted)))
    named += [("url", url_layer(doc.canonical_link)), ("url", url_layer(doc.url))]
    merged = pick_named(*named)
    story = build_story(doc, merged, html_url_candidates(doc, state))
    if story.story_id is None:
        return PageResult(
            kind="story", url=doc.url, errors=[NOT_A_STORY], missing=list(CORE_FIELDS)
        )
    items: list[Item] = [story]
    items += [entity for entity in (state.author, state.publication) if entity is not None]
    result = PageResult(kind="story", url=doc.url, items=items)
    result.links = unique_links([*entity_links(items), *page_links(doc)])
    result.missing = [name for name in CORE_FIELDS if getattr(story, name) in (None, "")]
    if is_truncated(doc):
        result.errors.append("truncated page: no closing </html>")
    return result


def is_truncated(doc: Document) -> bool:
    """An HTML page that opens ``<html`` but never closes it was cut off in transit."""
    return "<html" in doc.head(2048).lower() and "</html>" not in doc.tail(4096).lower()


def story_state(doc: Document, scraped_at: str | None = None) -> StoryState:
    """The state layer of a page: Apollo first, then the legacy payload, else empty."""
    at = scraped_at or doc.scraped_at
    apollo = doc.apollo_state
    if apollo is not None:
        post = find_apollo_post(apollo, lambda: app_link_post_id(doc) or post_id_from_url(doc.url))
        if post is not None:
            return apollo_story(post, at)
    legacy = doc.legacy_state
    if legacy is not None:
        found = legacy_story(legacy, at)
        if found is not None:
            return found
    return StoryState()


def dom_fields_wanted(merged: dict[str, Any], state: StoryState) -> set[str]:
    """Story fields the DOM should try: those the better layers left empty. The body is
    not read from the DOM when the state had one (even an empty one is the state's word)."""
    wanted = {name for name in _DOM_FIELDS if name not in merged}
    if state.fields.get("text") is not None:
        wanted -= set(_BODY_FIELDS)
    return wanted


def build_story(doc: Document, merged: dict[str, Any], url_candidates: Iterable[Any]) -> Story:
    """The Story item from the merged layers (unknown keys dropped, URL chosen)."""
    values = {key: value for key, value in merged.items() if key in _STORY_FIELDS}
    values["url"] = story_url(url_candidates, merged.get("story_id"), doc.url)
    values["canonical_url"] = values.get("canonical_url") or cross_post_url(
        doc.canonical_link, merged.get("story_id"), doc.medium_domains
    )
    values["scraped_at"] = doc.scraped_at
    return Story(**values)


def html_url_candidates(doc: Document, state: StoryState) -> Iterator[Any]:
    """Where a story page names its own URL, most canonical first (each looked up only
    when the ones before it were not this story's URL)."""
    yield doc.canonical_link
    yield doc.meta.get("og:url")
    yield state.fields.get("state_url")
    yield doc.url


def story_url(candidates: Iterable[Any], story_id: str | None, base: str) -> str | None:
    """The first candidate that is a story URL of this post, canonical form (custom
    domains and subdomains kept); a canonical link to another site is skipped."""
    for candidate in candidates:
        if not isinstance(candidate, str) or not candidate:
            continue
        url = canonical_url(candidate, base=base)
        if url is None:
            continue
        post_id = post_id_from_url(url)
        if post_id and (story_id is None or post_id == story_id):
            return url
    return None


def entity_links(items: Iterable[Item]) -> Iterator[MediumLink | None]:
    """Links to the author, publication and tags the parsed items name."""
    for item in items:
        if isinstance(item, Story):
            for tag in item.tags:
                yield classify_url(f"https://medium.com/tag/{tag}")
        elif isinstance(item, Publication) and item.url:
            yield publication_link(item)
        elif item.url:
            yield classify_url(item.url)


def publication_link(publication: Publication) -> MediumLink | None:
    """Link to a publication home; a ``*.medium.com`` or custom domain is keyed by its host,
    as :func:`classify_url` keys custom domains."""
    if publication.url is None:
        return None
    if publication.domain:
        return MediumLink("publication", publication.domain, publication.url)
    return classify_url(publication.url)


def page_links(doc: Document) -> Iterator[MediumLink]:
    """Author, publication and tag links among the page's anchors, page order."""
    return (link for link in page_anchor_links(doc) if link.kind in LINK_KINDS)
