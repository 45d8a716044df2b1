"""``Post`` nodes of any state (Apollo cache, GraphQL response) → Story fields and items.

:func:`post_fields` is what every ``Post`` gives, full page or listing;
:func:`listing_story` makes the partial Story of a listed post; :func:`listed_posts`
finds the posts of a listing value whatever its shape (``posts``, GraphQL
``edges[].node``, feed ``items[].post``, 2019 ``postPreviews[].post``).
"""

from __future__ import annotations

import re
from typing import Any

from topics_crawler.items import Author, Publication, Story
from topics_crawler.items.values import clean_text, parse_timestamp, read_count, tag_slug, unique
from topics_crawler.pages._entities import (
    author_from_user,
    lower_id,
    publication_from_collection,
)
from topics_crawler.pages.state import Node
from topics_crawler.urls import canonical_url, cross_post_url

_PLAIN_NAME_RE = re.compile(r"[^\W_]+(?:[ -][^\W_]+)*")
PREVIEW_IMAGE_URL = "https://miro.medium.com/v2/resize:fit:1400/{image_id}"
#: Members of a listing value that hold its posts, most common first.
LISTING_MEMBERS = ("posts", "edges", "items", "postPreviews")
#: Members of one listing entry that hold the post itself.
ENTRY_MEMBERS = ("post", "node")
#: How deep a listing may wrap its posts (``items[].post``, ``edges[].node``…).
MAX_LISTING_DEPTH = 4


def one_line(value: str | None) -> str | None:
    """Clean text with line breaks folded (2015 titles keep the editor's manual breaks)."""
    text = clean_text(value)
    return " ".join(text.split("\n")) if text else None


def minutes(value: float | None) -> float | None:
    """A reading time in minutes; negative values are not times."""
    return value if value is not None and value >= 0 else None


def is_post(node: Node) -> bool:
    """A ``Post`` node (typename, or the cache key's typename) with an id."""
    return node.typename in ("Post", None) and node.id is not None and node.has("title")


def is_stub(node: Node) -> bool:
    """A ``Post`` holding nothing but its typename and id (2026 publication homes ship their
    posts so): it names a story, it describes none — no story row comes of it."""
    return node.raw.keys() <= {"__typename", "id"}


def preview(post: Node) -> Node | None:
    """``previewContent`` (2019–2021) or ``extendedPreviewContent(…)`` (2022+, any args)."""
    return post.node("previewContent") or post.node("extendedPreviewContent")


def post_tags(post: Node) -> list[str]:
    """Tag slugs of a post, in order: ``normalizedTagSlug``, else the tag's id or slug, else
    (2019 GraphQL bodies, which select only ``displayTitle``) the slug of its display name;
    a ``Tag:<slug>`` reference without an entity, by the slug it names."""
    slugs = []
    for key, tag in post.listed("tags"):
        if tag is None:
            slug = ref_tag_slug(key)
        else:
            slug = tag_slug(
                tag.str("normalizedTagSlug") or tag.str("id") or tag.str("slug") or _plain_name(tag)
            )
        if slug:
            slugs.append(slug)
    return unique(slugs)


def ref_tag_slug(key: str | None) -> str | None:
    """The slug a ``Tag:<slug>`` reference names when the state holds no entity for it
    (a ``Topic`` id is no slug)."""
    typename, _, entity_id = (key or "").partition(":")
    return tag_slug(entity_id) if typename == "Tag" and entity_id else None


def _plain_name(tag: Node) -> str | None:
    """A display name made only of letters, digits, spaces and hyphens, whose slug is
    plain (``Data Science`` → ``data-science``; ``C++`` is not guessed)."""
    name = tag.str("displayTitle")
    return name if name and _PLAIN_NAME_RE.fullmatch(name) else None


def post_locked(post: Node) -> bool | None:
    """Member-only: ``isLocked``, or ``visibility == "LOCKED"``."""
    locked = post.bool("isLocked")
    visibility = post.str("visibility")
    if locked is not None:
        return locked or visibility == "LOCKED"
    return visibility == "LOCKED" if visibility is not None else None


def post_responses(post: Node) -> tuple[int | None, str | None]:
    """``postResponses{count}`` (2020+) or ``responsesCount`` (2019)."""
    responses = post.node("postResponses")
    if responses is not None and responses.has("count"):
        return read_count(responses.scalar("count"))
    return read_count(post.scalar("responsesCount"))


def post_image_url(post: Node) -> str | None:
    """Preview image URL from ``previewImage`` (an ``ImageMetadata`` node or reference)."""
    image = post.node("previewImage")
    image_id = image.id if image is not None else None
    ref = post.ref("previewImage")
    if not image_id and ref and ref.startswith("ImageMetadata:"):
        image_id = ref.split(":", 1)[1]
    if not image_id or not image_id.strip():
        return None
    return PREVIEW_IMAGE_URL.format(image_id=image_id.strip())


def post_author(post: Node, scraped_at: str) -> Author | None:
    """The post's ``creator`` as an Author, when the state has the user."""
    creator = post.node("creator")
    return author_from_user(creator, scraped_at) if creator is not None else None


def post_publication(post: Node, scraped_at: str) -> Publication | None:
    """The post's ``collection`` as a Publication, when it has one."""
    collection = post.node("collection")
    if collection is None or collection.id is None:
        return None
    return publication_from_collection(collection, scraped_at)


def author_fields(author: Author | None) -> dict[str, Any]:
    """The Story fields naming its author."""
    if author is None:
        return {}
    return {
        "author_id": author.author_id,
        "author_username": author.username,
        "author_name": author.name,
    }


def publication_fields(publication: Publication | None) -> dict[str, Any]:
    """The Story fields naming its publication."""
    if publication is None:
        return {}
    return {
        "publication_id": publication.publication_id,
        "publication_slug": publication.slug,
        "publication_name": publication.name,
    }


def post_fields(post: Node, scraped_at: str) -> dict[str, Any]:
    """Story fields every ``Post`` node gives (``state_url`` is its ``mediumUrl`` as stored;
    a count it cannot read, or that does not fit, leaves its text in ``*_raw``)."""
    content = preview(post)
    story_id = lower_id(post.str("id"))
    claps, claps_raw = read_count(post.scalar("clapCount"))
    responses, responses_raw = post_responses(post)
    return {
        "story_id": story_id,
        "state_url": post.str("mediumUrl"),
        "canonical_url": cross_post_url(post.str("canonicalUrl"), story_id),
        "title": one_line(post.str("title")),
        "subtitle": clean_text(content.str("subtitle")) if content is not None else None,
        **author_fields(post_author(post, scraped_at)),
        **publication_fields(post_publication(post, scraped_at)),
        "published_at": parse_timestamp(post.scalar("firstPublishedAt"))[0],
        "updated_at": parse_timestamp(post.scalar("updatedAt") or post.scalar("latestPublishedAt"))[
            0
        ],
        "reading_time_min": minutes(post.float("readingTime")),
        "claps": claps,
        "claps_raw": claps_raw,
        "responses": responses,
        "responses_raw": responses_raw,
        "tags": post_tags(post),
        "is_member_only": post_locked(post),
        "language": clean_text(post.str("detectedLanguage")),
        "in_response_to": post_answered(post),
    }


def post_answered(post: Node) -> str | None:
    """Id of the post a response answers (``inResponseToPostResult``: a ``Post`` node, or a
    reference to one the cache does not hold), unless ``inResponseToEntityType`` names
    another kind of thing than a post."""
    kind = post.str("inResponseToEntityType")
    if kind is not None and kind != "POST":
        return None
    answered = post.node("inResponseToPostResult")
    if answered is not None and answered.typename in ("Post", None) and answered.id:
        return lower_id(answered.id)
    ref = post.ref("inResponseToPostResult")
    return lower_id(ref.removeprefix("Post:")) if ref and ref.startswith("Post:") else None


def listing_story(post: Node, scraped_at: str) -> Story:
    """The partial Story of a listed post (no body): state fields, URL, raw counts, image."""
    fields = post_fields(post, scraped_at)
    state_url = fields.pop("state_url")
    return Story(
        **fields,
        url=canonical_url(state_url) if state_url else None,
        word_count=read_count(post.scalar("wordCount"))[0],
        image_url=post_image_url(post),
        data_source="state",
        scraped_at=scraped_at,
    )


def listed_posts(listing: Node | None) -> list[Node]:
    """The ``Post`` nodes of a listing value in order, whatever its wrapper shape."""
    return [post for _, post in listed_entries(listing) if post is not None]


def listed_entries(listing: Node | None) -> list[tuple[str, Node | None]]:
    """``(post id, Post node)`` for each post a listing value lists, in order, whatever its
    wrapper shape; the node is None where the state names the post but holds nothing to
    read about it: a ``Post:<id>`` reference without an entity (a trimmed cache) or a
    ``{__typename, id}`` stub (2026 publication homes) — the page lists it, no more."""
    if listing is None:
        return []
    found: list[tuple[str, Node | None]] = []
    stack: list[tuple[Node | str, int]] = [(listing, 0)]  # depth first: the listing's order
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            found.append((value, None))  # a reference to a post the state does not hold
        elif is_post(value):
            found.append((str(value.id), value))
        elif value.typename == "Post" and value.id is not None:
            found.append((value.id, None))  # an id-only stub, or a post without a title
        elif depth < MAX_LISTING_DEPTH:
            stack += reversed([(child, depth + 1) for child in _listing_children(value)])
    return found


def _listing_children(value: Node) -> list[Node | str]:
    """What one level of a listing wraps: its entry's post, else its members' entries (a
    reference without an entity as the post id it names)."""
    entry = next((m for m in ENTRY_MEMBERS if value.has(m)), None)
    pairs = (
        [(value.ref(entry), value.node(entry))]
        if entry is not None
        else next((value.listed(m) for m in LISTING_MEMBERS if value.has(m)), [])
    )
    children: list[Node | str] = []
    for key, node in pairs:
        if node is not None:
            children.append(node)
        elif (post_id := _post_ref_id(key)) is not None:
            children.append(post_id)
    return children


def _post_ref_id(key: str | None) -> str | None:
    typename, _, post_id = (key or "").partition(":")
    return post_id if typename == "Post" and post_id else None
