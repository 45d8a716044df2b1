"""Story fields from the embedded state: the fast, most complete layer.

* Apollo cache (2019–2025): the ``Post`` found through ``ROOT_QUERY.postResult``
  (any arguments) or by post id, with its ``User`` creator and ``Collection``.
* Legacy ``{value, references}`` payload (2015–2018 pages and ``?format=json``):
  ``value`` is the Post, ``references`` hold its User and Collection.

Both are read through :mod:`topics_crawler.pages.state`. Each function returns a
:class:`StoryState`: a layer for :func:`pick` plus the Author and Publication
items the state describes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from topics_crawler.items import Author, Publication
from topics_crawler.items.access import access_level, preview_share
from topics_crawler.items.values import clean_text, parse_timestamp, read_count, tag_slug, unique
from topics_crawler.pages._body import count_words, render_paragraphs
from topics_crawler.pages._entities import (
    author_from_legacy_user,
    lower_id,
    publication_from_legacy_collection,
)
from topics_crawler.pages._markdown_state import apollo_body, legacy_body
from topics_crawler.pages._posts import (
    author_fields,
    minutes,
    one_line,
    post_author,
    post_fields,
    post_publication,
    publication_fields,
)
from topics_crawler.pages.markdown import render_markdown
from topics_crawler.pages.state import Node, State
from topics_crawler.urls import cross_post_url


@dataclass
class StoryState:
    """What the embedded state says about a story."""

    fields: dict[str, Any] = field(default_factory=dict)
    """Story field → value (a :func:`pick` layer)."""
    author: Author | None = None
    publication: Publication | None = None
    source: str = "state"
    """The ``data_source`` name of the layer."""


def _text_fields(text: str | None, preview: bool | None, word_count: Any) -> dict[str, Any]:
    """Body text, preview flag, access level, word count (counted only from a full text)
    and, for a preview, its share of the words Medium states."""
    stated = read_count(word_count)[0]
    words = stated
    if words is None and text and preview is False:
        words = count_words(text)
    return {
        "text": text,
        "text_is_preview": preview if text else None,
        "access": access_level(bool(text), preview),
        "preview_share": preview_share(count_words(text), stated) if text and preview else None,
        "word_count": words,
    }


# --- Apollo (2019–2025) -----------------------------------------------------------------


def find_apollo_post(state: State, post_id: str | Callable[[], str | None] | None) -> Node | None:
    """The page's ``Post``: the ``postResult`` root call first, else ``Post:<post_id>``
    (``post_id`` may be a function, asked only when there is no such call)."""
    for call in state.root.calls("postResult"):
        post = call.node
        if post is not None and post.typename in ("Post", None) and post.has("id"):
            return post
    return state.entity("Post", post_id() if callable(post_id) else post_id)


def _apollo_body(post: Node) -> dict[str, Any]:
    content = post.node("content")
    if content is None:
        return {}
    body_model = content.node("bodyModel")
    preview = content.bool("isLockedPreviewOnly")
    body = apollo_body(body_model)  # one read for the text and the Markdown
    fields = _text_fields(render_paragraphs(body.paragraphs), preview, post.scalar("wordCount"))
    return {**fields, "markdown": render_markdown(body.blocks, preview=bool(preview))}


def apollo_story(post: Node, scraped_at: str) -> StoryState:
    """Story layer, Author and Publication from an Apollo ``Post`` node."""
    author = post_author(post, scraped_at)
    publication = post_publication(post, scraped_at)
    fields = {**post_fields(post, scraped_at), **_apollo_body(post)}
    return StoryState(fields, author, publication)


# --- Legacy (2015–2018, ?format=json) --------------------------------------------------


def _legacy_claps(virtuals: Node) -> tuple[int | None, str | None]:
    """Claps and their raw text; before claps (Aug 2017) the count was ``recommends``,
    which Medium turned into claps one for one, so a missing or zero ``totalClapCount``
    falls back to it."""
    claps = read_count(virtuals.scalar("totalClapCount"))
    if claps[0] or claps[1] is not None:
        return claps
    recommends = read_count(virtuals.scalar("recommends"))
    return recommends if recommends != (None, None) else claps


def _legacy_tags(virtuals: Node) -> list[str]:
    slugs = [tag_slug(t.str("slug") or t.str("name")) for t in virtuals.nodes("tags")]
    return unique([slug for slug in slugs if slug])


def _legacy_body(post: Node, virtuals: Node) -> dict[str, Any]:
    content = post.node("content")
    body = legacy_body(content.node("bodyModel") if content else None)  # read once
    text = render_paragraphs(body.paragraphs)
    preview = virtuals.bool("isLockedPreviewOnly")
    preview_flag = preview if preview is not None else (False if text else None)
    markdown = render_markdown(body.blocks, preview=bool(preview))
    return {**_text_fields(text, preview_flag, virtuals.scalar("wordCount")), "markdown": markdown}


def _legacy_subtitle(post: Node, virtuals: Node) -> str | None:
    content = post.node("content")
    subtitle = content.str("subtitle") if content is not None else None
    return clean_text(subtitle or virtuals.str("subtitle"))


def _legacy_entities(
    post: Node, state: State, scraped_at: str
) -> tuple[Author | None, Publication | None]:
    user = state.entity("User", post.str("creatorId"))
    author = author_from_legacy_user(user, state, scraped_at) if user is not None else None
    collection = state.entity("Collection", post.str("homeCollectionId"))
    publication = (
        publication_from_legacy_collection(collection, scraped_at)
        if collection is not None
        else None
    )
    return author, publication


def legacy_post_story(post: Node, state: State, scraped_at: str) -> StoryState | None:
    """Story layer, Author and Publication from a legacy Post (``references`` in ``state``)."""
    if not post.str("id"):
        return None
    virtuals = post.node("virtuals") or Node(state, {}, "virtuals")
    author, publication = _legacy_entities(post, state, scraped_at)
    claps, claps_raw = _legacy_claps(virtuals)
    responses, responses_raw = read_count(virtuals.scalar("responsesCreatedCount"))
    fields: dict[str, Any] = {
        "story_id": lower_id(post.str("id")),
        "state_url": (
            post.str("webCanonicalUrl") or post.str("mediumUrl") or post.str("canonicalUrl")
        ),
        "canonical_url": cross_post_url(post.str("canonicalUrl"), lower_id(post.str("id"))),
        "title": one_line(post.str("title")),
        "subtitle": _legacy_subtitle(post, virtuals),
        **author_fields(author),
        **publication_fields(publication),
        "published_at": parse_timestamp(post.scalar("firstPublishedAt"))[0],
        "updated_at": parse_timestamp(post.scalar("updatedAt") or post.scalar("latestPublishedAt"))[
            0
        ],
        "reading_time_min": minutes(virtuals.float("readingTime")),
        "claps": claps,
        "claps_raw": claps_raw,
        "responses": responses,
        "responses_raw": responses_raw,
        "tags": _legacy_tags(virtuals),
        "is_member_only": post.bool("isSubscriptionLocked"),
        "language": clean_text(post.str("detectedLanguage")),
        "in_response_to": lower_id(post.str("inResponseToPostId")),
        **_legacy_body(post, virtuals),
    }
    return StoryState(fields, author, publication)


def legacy_story(state: State, scraped_at: str) -> StoryState | None:
    """Story layer, Author and Publication of a legacy ``{value, references}`` payload."""
    post = state.root.node("value")
    return legacy_post_story(post, state, scraped_at) if post is not None else None
