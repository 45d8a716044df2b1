"""A saved GraphQL response body (one operation, or a batch array) → items.

Read through :meth:`State.from_response <topics_crawler.pages.state.State.from_response>`,
so any operation's body works, not only the ones seen: every ``Post`` in it becomes
a Story (listing order), every ``User`` with a username an Author, every
``Collection``/``Publication`` a Publication. A ``Topic`` (2019 ``TopicHandler``) or
``Tag`` (``tagFromSlug``, e.g. ``TagArchiveFeedQuery``) at the top of a result
becomes a :class:`~topics_crawler.items.TagPage`, read as the tag parser reads a
``Tag``/``Topic`` entity (fields, 2019 sections ``featured``/``latest``/``popular``,
``featuredTopicWriters`` → ``top_writers``); its other post listings are sections
too, keyed by the field (or alias) name without its ``Posts``/``Feed`` suffix, snake
case: ``sortedFeed`` → ``sorted``, ``mostReadFeed`` → ``most_read``. A listing's paging
(``pagingInfo.next`` or ``pageInfo{endCursor, hasNextPage}``) becomes a
:class:`~topics_crawler.pages.ListingCursor` named ``<tag>:<section>``. GraphQL
``errors`` are recorded, one line each (at most three).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from topics_crawler.items import Item, Story, TagPage
from topics_crawler.items.values import clean_text, tag_slug, unique
from topics_crawler.pages._document import Document
from topics_crawler.pages._entities import author_from_user, publication_from_collection
from topics_crawler.pages._posts import is_stub, listed_posts, listing_story
from topics_crawler.pages._result import ListingCursor, PageResult, unique_links
from topics_crawler.pages._tag_state import (
    TOPIC_LISTINGS,
    TagState,
    entity_slug,
    read_tag_entity,
    top_writer_records,
)
from topics_crawler.pages.state import Node, State, StateError, parse_json_payload, split_field_key
from topics_crawler.urls import MediumLink, classify_url, tag_url

TAG_TYPES = ("Topic", "Tag")
#: 2019 ``Topic`` listings keep the tag parser's section keys.
_TOPIC_SECTIONS = {listing: key for key, listing in TOPIC_LISTINGS}
_MAX_ERRORS = 3
_SUFFIX_RE = re.compile(r"(Posts|Feed|Connection)$")
_CAMEL_RE = re.compile(r"(?<!^)(?=[A-Z])")


def parse_graphql(doc: Document) -> PageResult:
    """Items of a GraphQL response body; never raises, problems go to ``errors``."""
    try:
        body = parse_json_payload(doc.text)
    except StateError as exc:
        return PageResult(kind="graphql", url=doc.url, errors=[f"broken GraphQL body: {exc}"])
    return parse_graphql_body(doc, body)


def is_graphql_body(body: Any) -> bool:
    """``{"data": …}`` / ``{"errors": …}`` or a non-empty batch array of those."""
    results = body if isinstance(body, list) else [body]
    return bool(results) and all(
        isinstance(r, dict) and ("data" in r or "errors" in r) for r in results
    )


def parse_graphql_body(doc: Document, body: Any) -> PageResult:
    """Items of an already decoded GraphQL body."""
    result = PageResult(kind="graphql", url=doc.url)
    if not is_graphql_body(body):
        result.errors.append("not a GraphQL response (no data or errors)")
        return result
    envelope = State(roots=body if isinstance(body, list) else [body], references={})
    for batch_result in envelope.roots:
        _record_errors(batch_result, doc)
    state = State.from_response(body, notes=doc.note)
    top_tags = _top_tags(state)
    tags = [_tag_page(tag, doc.scraped_at) for tag in top_tags]
    stories = _stories(state, doc.scraped_at)
    for tag in top_tags:
        _credit_writers(tag, stories, doc.scraped_at)
    people: list[Item] = [
        author_from_user(user, doc.scraped_at)
        for user in state.entities("User")
        if user.str("username")
    ]
    publications: list[Item] = [
        publication_from_collection(entity, doc.scraped_at)
        for entity in state.entities("Collection", "Publication")
        if entity.str("slug") or entity.str("domain")
    ]
    result.items = [*(page for page, _ in tags), *stories, *people, *publications]
    result.cursors = [cursor for _, cursors in tags for cursor in cursors]
    result.links = unique_links(_links(result.items))
    if not result.items and not doc.errors:
        result.errors.append("GraphQL response without Medium data")
    return result


def _record_errors(batch_result: Node, doc: Document) -> None:
    errors = batch_result.list("errors")
    for error in errors[:_MAX_ERRORS]:
        message = (
            Node(batch_result.state, error).str("message") if isinstance(error, dict) else None
        )
        text = clean_text(message)
        doc.error(f"GraphQL error: {(text or repr(error))[:200]}")
    if len(errors) > _MAX_ERRORS:
        doc.error(f"GraphQL errors: {len(errors) - _MAX_ERRORS} more")


def _top_tags(state: State) -> list[Node]:
    """``Topic``/``Tag`` nodes that a result's ``data`` names directly."""
    found: list[Node] = []
    for root in state.roots:
        found.extend(node for _key, node in root.children() if node.typename in TAG_TYPES)
    return found


def section_key(field_name: str) -> str:
    """``latestPosts`` → ``latest``, ``mostReadFeed`` → ``most_read``."""
    stem = _SUFFIX_RE.sub("", field_name) or field_name
    return _CAMEL_RE.sub("_", stem).lower()


def _tag_page(tag: Node, scraped_at: str) -> tuple[TagPage, list[ListingCursor]]:
    """The tag as the tag parser reads a ``Tag``/``Topic`` entity
    (:func:`~topics_crawler.pages._tag_state.read_tag_entity`), plus every other post
    listing of it as a section and the listings' paging as cursors."""
    found = TagState(entity_slug(tag) or tag_slug(tag.id))
    read_tag_entity(tag, found)
    slug = found.slug
    sections = dict(found.sections)
    cursors = []
    for key, listing in tag.children():
        posts = listed_posts(listing)
        if not posts:
            continue
        section = _TOPIC_SECTIONS.get(_field_name(key)) or section_key(_field_name(key))
        sections.setdefault(section, unique([p.id.lower() for p in posts if p.id]))
        cursor = _listing_cursor(listing)
        if cursor:
            cursors.append(ListingCursor(f"{slug}:{section}", slug, cursor))
    page = TagPage(
        tag=slug,
        url=tag_url(slug) if slug else None,
        **found.fields,
        sections=sections,
        top_writers=top_writer_records(found.writers),
        scraped_at=scraped_at,
    )
    return page, cursors


def _field_name(key: str) -> str:
    return split_field_key(key)[0]


def _listing_cursor(listing: Node) -> dict[str, Any]:
    following = listing.dig("pagingInfo", "next")
    if following is not None:
        return following.scalars()
    info = listing.node("pageInfo")
    if info is not None and info.str("endCursor"):
        return {"after": info.str("endCursor"), "hasNextPage": info.bool("hasNextPage")}
    return {}


def _stories(state: State, scraped_at: str) -> list[Story]:
    stories: dict[str, Story] = {}
    for post in state.entities("Post"):
        if is_stub(post):
            continue  # names a story, describes none: no id-only row
        story = listing_story(post, scraped_at)
        if story.story_id and story.story_id not in stories:
            stories[story.story_id] = story
    return list(stories.values())


def _credit_writers(tag: Node, stories: list[Story], scraped_at: str) -> None:
    """A featured writer's ``posts`` select no ``creator``: they are that writer's."""
    by_id = {story.story_id: story for story in stories}
    for entry in tag.nodes("featuredTopicWriters"):
        user = entry.node("user")
        if user is None:
            continue
        author = author_from_user(user, scraped_at)
        for post in listed_posts(entry.node("posts")):
            story = by_id.get(post.id.lower() if post.id else None)
            if story is not None and story.author_id is None:
                story.author_id = author.author_id
                story.author_username = author.username
                story.author_name = author.name


def _links(items: list[Item]) -> list[MediumLink | None]:
    links: list[MediumLink | None] = []
    for item in items:
        if isinstance(item, TagPage):
            links.append(classify_url(item.url) if item.url else None)
        elif item.url:
            custom = [urlsplit(item.url).netloc] if isinstance(item, Story) else []
            links.append(classify_url(item.url, custom_domains=custom))
    return links
