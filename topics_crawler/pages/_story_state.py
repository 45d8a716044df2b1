"""Story fields from the embedded state: the fast, most complete layer.

* Apollo cache (2019–2025): ``Post:<id>`` found through ``ROOT_QUERY.postResult``
  or by post id, with its ``User`` creator and ``Collection`` collection.
* Legacy ``{value, references}`` payload (2015–2018 pages and ``?format=json``):
  ``value`` is the Post, ``references`` hold its User and Collection.

Each function returns a :class:`StoryState`: a layer for :func:`pick` plus the
Author and Publication items the state describes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from topics_crawler.items import Author, Publication
from topics_crawler.normalize import clean_text, parse_count, parse_timestamp, tag_slug, unique
from topics_crawler.pages._body import (
    apollo_paragraphs,
    count_words,
    legacy_paragraphs,
    render_paragraphs,
)
from topics_crawler.pages._entities import (
    author_from_apollo,
    author_from_legacy,
    lower_id,
    publication_from_apollo,
    publication_from_legacy,
)
from topics_crawler.pages._state import ApolloState
from topics_crawler.pages.markdown import apollo_blocks, legacy_blocks, render_markdown


@dataclass
class StoryState:
    """What the embedded state says about a story."""

    fields: dict[str, Any] = field(default_factory=dict)
    """Story field → value (a :func:`pick` layer)."""
    author: Author | None = None
    publication: Publication | None = None


def one_line(value: Any) -> str | None:
    """Clean text with line breaks folded (2015 titles keep the editor's manual breaks)."""
    text = clean_text(value)
    return " ".join(text.split("\n")) if text else None


def _timestamp(value: Any) -> str | None:
    return parse_timestamp(value)[0]


def _count(value: Any) -> int | None:
    return parse_count(value)[0]


def _minutes(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


def _text_fields(text: str | None, preview: bool | None, word_count: Any) -> dict[str, Any]:
    """Body text, preview flag and word count (counted only from a full text)."""
    words = _count(word_count)
    if words is None and text and preview is False:
        words = count_words(text)
    return {
        "text": text,
        "text_is_preview": preview if text else None,
        "word_count": words,
    }


def _author_fields(author: Author | None) -> dict[str, Any]:
    if author is None:
        return {}
    return {
        "author_id": author.author_id,
        "author_username": author.username,
        "author_name": author.name,
    }


def _publication_fields(publication: Publication | None) -> dict[str, Any]:
    if publication is None:
        return {}
    return {
        "publication_id": publication.publication_id,
        "publication_slug": publication.slug,
        "publication_name": publication.name,
    }


# --- Apollo (2019–2025) -----------------------------------------------------------------


def find_apollo_post(state: ApolloState, post_id: str | None) -> dict[str, Any] | None:
    """The page's ``Post`` entity: ``ROOT_QUERY.postResult`` first, else ``Post:<post_id>``."""
    for _args, value in state.root_calls("postResult"):
        if isinstance(value, dict) and value.get("__typename", "Post") == "Post" and "id" in value:
            return value
    return state.get(f"Post:{post_id}") if post_id else None


def _apollo_tags(state: ApolloState, post: dict[str, Any]) -> list[str]:
    slugs: list[str] = []
    tags = state.field(post, "tags")
    for tag in tags if isinstance(tags, list) else []:
        if isinstance(tag, dict):
            raw = tag.get("normalizedTagSlug") or tag.get("id") or tag.get("slug")
            slug = tag_slug(raw)
            if slug:
                slugs.append(slug)
    return unique(slugs)


def _apollo_locked(post: dict[str, Any]) -> bool | None:
    locked = post.get("isLocked")
    if isinstance(locked, bool):
        return locked or post.get("visibility") == "LOCKED"
    visibility = post.get("visibility")
    return visibility == "LOCKED" if isinstance(visibility, str) else None


def _apollo_body(state: ApolloState, post: dict[str, Any]) -> dict[str, Any]:
    content = state.field(post, "content")
    if not isinstance(content, dict):
        return {}
    paragraphs = apollo_paragraphs(state, state.field(content, "bodyModel"))
    preview = content.get("isLockedPreviewOnly")
    preview_flag = preview if isinstance(preview, bool) else None
    markdown = render_markdown(
        apollo_blocks(state.field(content, "bodyModel"), state.resolve), preview=preview is True
    )
    fields = _text_fields(render_paragraphs(paragraphs), preview_flag, post.get("wordCount"))
    return {**fields, "markdown": markdown}


def _apollo_responses(state: ApolloState, post: dict[str, Any]) -> int | None:
    responses = state.field(post, "postResponses")
    if isinstance(responses, dict) and "count" in responses:
        return _count(responses.get("count"))
    return _count(post.get("responsesCount"))


def _apollo_answered(state: ApolloState, post: dict[str, Any]) -> str | None:
    """Id of the post a response answers: ``inResponseToPostResult`` (a ``Post`` reference
    or inline object) when ``inResponseToEntityType`` does not name another kind."""
    kind = post.get("inResponseToEntityType")
    if kind is not None and kind != "POST":
        return None
    raw = post.get("inResponseToPostResult")
    ref = raw.get("__ref") or raw.get("id") if isinstance(raw, dict) else None
    answered = state.field(post, "inResponseToPostResult")
    if isinstance(answered, dict) and answered.get("__typename", "Post") == "Post":
        return lower_id(answered.get("id"))
    if isinstance(ref, str) and ref.startswith("Post:"):  # a reference to an entity not cached
        return lower_id(ref.removeprefix("Post:"))
    return None


def apollo_story(state: ApolloState, post: dict[str, Any], scraped_at: str) -> StoryState:
    """Story layer, Author and Publication from an Apollo ``Post`` entity."""
    creator = state.field(post, "creator")
    author = author_from_apollo(state, creator, scraped_at) if isinstance(creator, dict) else None
    collection = state.field(post, "collection")
    publication = (
        publication_from_apollo(state, collection, scraped_at)
        if isinstance(collection, dict) and collection.get("id")
        else None
    )
    preview = state.field(post, "previewContent")
    fields: dict[str, Any] = {
        "story_id": lower_id(post.get("id")),
        "state_url": post.get("mediumUrl"),
        "title": one_line(post.get("title")),
        "subtitle": clean_text(preview.get("subtitle")) if isinstance(preview, dict) else None,
        **_author_fields(author),
        **_publication_fields(publication),
        "published_at": _timestamp(post.get("firstPublishedAt")),
        "updated_at": _timestamp(post.get("updatedAt") or post.get("latestPublishedAt")),
        "reading_time_min": _minutes(post.get("readingTime")),
        "claps": _count(post.get("clapCount")),
        "responses": _apollo_responses(state, post),
        "tags": _apollo_tags(state, post),
        "is_member_only": _apollo_locked(post),
        "language": clean_text(post.get("detectedLanguage")),
        "in_response_to": _apollo_answered(state, post),
        **_apollo_body(state, post),
    }
    return StoryState(fields, author, publication)


# --- Legacy (2015–2018, ?format=json) --------------------------------------------------


def _legacy_table(references: dict[str, Any], name: str) -> dict[str, Any]:
    table = references.get(name)
    return table if isinstance(table, dict) else {}


def _legacy_claps(virtuals: dict[str, Any]) -> int | None:
    """Claps; before claps (Aug 2017) the count was ``recommends``, which Medium turned
    into claps one for one, so a missing or zero ``totalClapCount`` falls back to it."""
    claps = _count(virtuals.get("totalClapCount"))
    if claps:
        return claps
    recommends = _count(virtuals.get("recommends"))
    return recommends if recommends is not None else claps


def _legacy_tags(virtuals: dict[str, Any]) -> list[str]:
    tags = virtuals.get("tags")
    if not isinstance(tags, list):
        return []
    slugs = [tag_slug(t.get("slug") or t.get("name")) for t in tags if isinstance(t, dict)]
    return unique([slug for slug in slugs if slug])


def _legacy_locked(post: dict[str, Any]) -> bool | None:
    locked = post.get("isSubscriptionLocked")
    return locked if isinstance(locked, bool) else None


def _legacy_body(post: dict[str, Any], virtuals: dict[str, Any]) -> dict[str, Any]:
    content = post.get("content")
    content = content if isinstance(content, dict) else {}
    text = render_paragraphs(legacy_paragraphs(content.get("bodyModel")))
    preview = virtuals.get("isLockedPreviewOnly")
    preview_flag = preview if isinstance(preview, bool) else (False if text else None)
    markdown = render_markdown(legacy_blocks(content.get("bodyModel")), preview=preview is True)
    return {**_text_fields(text, preview_flag, virtuals.get("wordCount")), "markdown": markdown}


def _legacy_subtitle(post: dict[str, Any], virtuals: dict[str, Any]) -> str | None:
    content = post.get("content")
    subtitle = content.get("subtitle") if isinstance(content, dict) else None
    return clean_text(subtitle or virtuals.get("subtitle"))


def _legacy_entities(
    post: dict[str, Any], references: dict[str, Any], scraped_at: str
) -> tuple[Author | None, Publication | None]:
    user = _legacy_table(references, "User").get(str(post.get("creatorId") or ""))
    author = author_from_legacy(user, references, scraped_at) if isinstance(user, dict) else None
    collection = _legacy_table(references, "Collection").get(
        str(post.get("homeCollectionId") or "")
    )
    publication = (
        publication_from_legacy(collection, scraped_at) if isinstance(collection, dict) else None
    )
    return author, publication


def legacy_story(payload: dict[str, Any], scraped_at: str) -> StoryState | None:
    """Story layer, Author and Publication from a legacy ``{value, references}`` payload."""
    post = payload.get("value")
    if not isinstance(post, dict) or not post.get("id"):
        return None
    references = payload.get("references")
    references = references if isinstance(references, dict) else {}
    virtuals = post.get("virtuals")
    virtuals = virtuals if isinstance(virtuals, dict) else {}
    author, publication = _legacy_entities(post, references, scraped_at)
    fields: dict[str, Any] = {
        "story_id": lower_id(post.get("id")),
        "state_url": (
            post.get("webCanonicalUrl") or post.get("mediumUrl") or post.get("canonicalUrl")
        ),
        "title": one_line(post.get("title")),
        "subtitle": _legacy_subtitle(post, virtuals),
        **_author_fields(author),
        **_publication_fields(publication),
        "published_at": _timestamp(post.get("firstPublishedAt")),
        "updated_at": _timestamp(post.get("updatedAt") or post.get("latestPublishedAt")),
        "reading_time_min": _minutes(virtuals.get("readingTime")),
        "claps": _legacy_claps(virtuals),
        "responses": _count(virtuals.get("responsesCreatedCount")),
        "tags": _legacy_tags(virtuals),
        "is_member_only": _legacy_locked(post),
        "language": clean_text(post.get("detectedLanguage")),
        "in_response_to": lower_id(post.get("inResponseToPostId") or None),
        **_legacy_body(post, virtuals),
    }
    return StoryState(fields, author, publication)
