"""The local site's content: the data model, the default site and what a crawl must yield.

``default_site()`` builds the site; ``SiteContent.with_archive()`` grows it for
scale tests; ``expected_entities()`` derives, from the model alone (never from
the parsers), the entities and key values a full crawl of some tags must yield.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from topics_crawler.site.entities import (
    SiteAuthor,
    SiteCluster,
    SitePublication,
    SiteStory,
    SiteTag,
    TopicRef,
    make_id,
)
from topics_crawler.site.model import SiteContent
from topics_crawler.site.seed import CUSTOM_DOMAIN, default_site

__all__ = [
    "CUSTOM_DOMAIN",
    "SiteAuthor",
    "SiteCluster",
    "SiteContent",
    "SitePublication",
    "SiteStory",
    "SiteTag",
    "TopicRef",
    "default_site",
    "expected_entities",
    "make_id",
    "reachable",
    "section_key",
]


def iso(moment: datetime) -> str:
    """Item timestamp format, ``YYYY-MM-DDTHH:MM:SSZ``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def section_key(heading: str) -> str:
    """``TagPage.sections`` key of a section heading (see MARKUP.md)."""
    key = "".join(c if c.isalnum() else "_" for c in heading.strip().lower())
    key = "_".join(part for part in key.split("_") if part)
    return "recommended" if key == "recommended_stories" else key


def reachable(content: SiteContent, tags: Iterable[str]) -> tuple[set[str], set[str], set[str]]:
    """``(story ids, usernames, publication slugs)`` a crawl reaches from the tag pages.

    Links followed: tag page → its cards and who-to-follow accounts; story →
    its author and publication; author → every story and the "Following"
    sidebar; publication → every story. Other tag pages are not followed.
    """
    stories: set[str] = set()
    authors: set[str] = set()
    publications: set[str] = set()
    queue: deque[tuple[str, str]] = deque()
    for slug in tags:
        tag = content.tags[slug]
        queue.extend(("story", sid) for sid in tag.listed())
        queue.extend(tag.who_to_follow if tag.generation == "today" else [])
    while queue:
        kind, key = queue.popleft()
        if kind == "story" and key not in stories:
            stories.add(key)
            story = content.stories[key]
            queue.append(("author", story.author))
            if story.publication:
                queue.append(("publication", story.publication))
        elif kind == "author" and key not in authors:
            authors.add(key)
            queue.extend(("story", s.id) for s in content.stories_by(key))
            queue.extend(("author", name) for name in content.authors[key].following_list)
        elif kind == "publication" and key not in publications:
            publications.add(key)
            queue.extend(("story", s.id) for s in content.stories_in(key))
    return stories, authors, publications


def expected_entities(content: SiteContent, tags: Iterable[str]) -> dict[str, Any]:
    """What a full crawl of ``tags`` must yield, keyed like the items' own fields.

    ``{"tag_pages": {slug: {...}}, "stories": {id: {...}}, "authors": {username:
    {...}}, "publications": {slug: {...}}}``; each inner mapping holds the key
    values of the entity under the item field names of ``topics_crawler.items``.
    """
    tag_slugs = list(dict.fromkeys(tags))
    story_ids, usernames, pub_slugs = reachable(content, tag_slugs)
    return {
        "tag_pages": {slug: _tag_values(content, content.tags[slug]) for slug in tag_slugs},
        "stories": {sid: _story_values(content, content.stories[sid]) for sid in sorted(story_ids)},
        "authors": {name: _author_values(content.authors[name]) for name in sorted(usernames)},
        "publications": {
            slug: _publication_values(content.publications[slug]) for slug in sorted(pub_slugs)
        },
    }


def _story_values(content: SiteContent, story: SiteStory) -> dict[str, Any]:
    author = content.authors[story.author]
    publication = content.publication_of(story)
    return {
        "url": content.story_url(story),
        "title": story.title,
        "subtitle": story.subtitle,
        "author_id": author.id,
        "author_username": author.username,
        "author_name": author.name,
        "publication_id": publication.id if publication else None,
        "publication_slug": publication.slug if publication else None,
        "publication_name": publication.name if publication else None,
        "published_at": iso(story.published_at),
        "updated_at": iso(story.last_update),
        "reading_time_min": story.reading_time,
        "word_count": story.word_count,
        "claps": story.claps,
        "responses": story.responses,
        "tags": [tag.slug for tag in story.tags],
        "is_member_only": story.member_only,
        "language": story.language,
        "text_is_preview": story.member_only,
    }


def _author_values(author: SiteAuthor) -> dict[str, Any]:
    return {
        "author_id": author.id,
        "name": author.name,
        "url": author.url,
        "bio": author.bio or None,
        "followers": author.followers,
        "following": author.following,
        "is_member": author.is_member,
    }


def _publication_values(publication: SitePublication) -> dict[str, Any]:
    return {
        "publication_id": publication.id,
        "name": publication.name,
        "url": publication.url,
        "domain": publication.domain,
        "description": publication.description or None,
        "followers": publication.followers,
    }


def _tag_values(content: SiteContent, tag: SiteTag) -> dict[str, Any]:
    follow: list[dict[str, str | None]] = []
    for kind, key in tag.who_to_follow:
        if kind == "author":
            author = content.authors[key]
            follow.append({"kind": kind, "id": author.id, "username": key, "name": author.name})
        else:
            pub = content.publications[key]
            follow.append({"kind": kind, "id": pub.id, "slug": key, "name": pub.name})
    if tag.generation == "2022":
        return _tag_values_2022(content, tag)
    clusters = [
        {"name": c.name, "description": c.description, "section": section_key(c.name)}
        | ({} if c.stories else {"section": None})
        for c in tag.clusters
    ]
    sections = {section_key(c.name): list(c.stories) for c in tag.clusters if c.stories}
    return {
        "name": tag.name,
        "url": tag.url,
        "description": tag.description,
        "parent_topics": [parent.name for parent in tag.parents],
        "subtopics": clusters,
        "related_tags": [related.slug for related in tag.related],
        "followers": tag.followers,
        "story_count": tag.story_count,
        "sections": sections | {section_key(h): list(ids) for h, ids in tag.sections.items()},
        "who_to_follow": follow,
    }


def _tag_values_2022(content: SiteContent, tag: SiteTag) -> dict[str, Any]:
    """A 2022 page gives what its state holds: counts, related tags, top writers, one feed."""
    writers = [content.authors[name] for name in tag.top_writers]
    return {
        "name": tag.name,
        "url": tag.url,
        "related_tags": [related.slug for related in tag.related],
        "story_count": tag.story_count,
        "writer_count": tag.writers,
        "top_writers": [
            {"kind": "author", "id": a.id, "username": a.username, "name": a.name} for a in writers
        ],
        "sections": {"tag_feed_hot": tag.listed()},
        "who_to_follow": [],
    }
