"""Apollo-3 cache of the local site's pages (``window.__APOLLO_STATE__``).

Entities are normalised the way Medium's client cache stores them: top-level
``Post:<id>``, ``User:<id>``, ``Collection:<id>``, ``Tag:<slug>``,
``Paragraph:<id>`` and ``ImageMetadata:<id>`` objects linked with
``{"__ref": "Type:<id>"}``; the page's own query hangs off ``ROOT_QUERY``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from topics_crawler.site.entities import SiteAuthor, SitePublication, SiteStory, SiteTag, TopicRef
from topics_crawler.site.markup import epoch_ms
from topics_crawler.site.model import SiteContent

Entity = dict[str, Any]
_EXTENDED_PREVIEW_KEY = (
    'extendedPreviewContent({"truncationConfig":{"previewParagraphsWordCountThreshold":400,'
    '"minimumWordLengthForTruncation":150,"truncateAtEndOfSentence":true}})'
)


def ref(key: str) -> dict[str, str]:
    """An Apollo-3 reference."""
    return {"__ref": key}


def root_call(name: str, **args: str) -> str:
    """A ``ROOT_QUERY`` field-call key: ``postResult({"id":"…"})``."""
    return f"{name}({json.dumps(args, separators=(',', ':'))})"


class StateBuilder:
    """Collects the entities of one page; :meth:`to_dict` gives the cache."""

    def __init__(self, content: SiteContent) -> None:
        self.content = content
        self.root: Entity = {"__typename": "Query", "viewer": None}
        self.entities: dict[str, Entity] = {}

    def to_dict(self) -> dict[str, Entity]:
        return {"ROOT_QUERY": self.root, **self.entities}

    def query(self, key: str, value: Any) -> None:
        self.root[key] = value

    def user(self, author: SiteAuthor) -> str:
        key = f"User:{author.id}"
        membership = {"__typename": "Membership", "tier": "MEMBER"} if author.is_member else None
        self.entities[key] = {
            "__typename": "User",
            "id": author.id,
            "name": author.name,
            "username": author.username,
            "bio": author.bio,
            "imageId": author.image_id,
            "hasSubdomain": False,
            "membership": membership,
            "socialStats": {
                "__typename": "SocialStats",
                "followerCount": author.followers,
                "followingCount": author.following,
            },
        }
        return key

    def collection(self, publication: SitePublication) -> str:
        key = f"Collection:{publication.id}"
        self.entities[key] = {
            "__typename": "Collection",
            "id": publication.id,
            "name": publication.name,
            "slug": publication.slug,
            "domain": publication.domain,
            "description": publication.description,
            "subscriberCount": publication.followers,
        }
        return key

    def tag_ref(self, topic: TopicRef) -> str:
        key = f"Tag:{topic.slug}"
        self.entities.setdefault(
            key,
            {
                "__typename": "Tag",
                "id": topic.slug,
                "displayTitle": topic.name,
                "normalizedTagSlug": topic.slug,
            },
        )
        return key

    def tag_page(self, tag: SiteTag) -> str:
        """The tag of a tag page, with counts and related tags."""
        key = self.tag_ref(TopicRef(tag.slug, tag.name))
        self.entities[key].update(
            {
                "followerCount": tag.followers,
                "postCount": tag.story_count,
                "description": tag.description,
                "relatedTags": [ref(self.tag_ref(topic)) for topic in tag.related],
            }
        )
        return key

    def image(self, image_id: str) -> str:
        key = f"ImageMetadata:{image_id}"
        self.entities[key] = {
            "__typename": "ImageMetadata",
            "id": image_id,
            "originalWidth": 1400,
            "originalHeight": 933,
        }
        return key

    def post(
        self,
        story: SiteStory,
        *,
        with_body: bool = False,
        extended_preview: bool = False,
        member: bool = False,
    ) -> str:
        """A story and everything it references; ``with_body`` adds the paragraphs;
        ``extended_preview`` stores the preview as 2022 listings do
        (``extendedPreviewContent({"truncationConfig":…})``)."""
        content = self.content
        publication = content.publication_of(story)
        key = f"Post:{story.id}"
        entity: Entity = {
            "__typename": "Post",
            "id": story.id,
            "title": story.title,
            "mediumUrl": content.story_url(story),
            "uniqueSlug": story.unique_slug,
            "firstPublishedAt": epoch_ms(story.published_at),
            "latestPublishedAt": epoch_ms(story.last_update),
            "updatedAt": epoch_ms(story.last_update),
            "readingTime": story.reading_time,
            "clapCount": story.claps,
            "voterCount": story.voters,
            "postResponses": {"__typename": "PostResponses", "count": story.responses},
            "isLocked": story.member_only,
            "visibility": "LOCKED" if story.member_only else "PUBLIC",
            "detectedLanguage": story.language,
            "wordCount": story.word_count,
            "creator": ref(self.user(content.authors[story.author])),
            "collection": ref(self.collection(publication)) if publication else None,
            "tags": [ref(self.tag_ref(topic)) for topic in story.tags],
            "previewContent": {
                "__typename": "PreviewContent",
                "subtitle": story.subtitle,
                "isFullContent": not story.member_only,
            },
            "previewImage": ref(self.image(story.image_id)),
        }
        if extended_preview:
            entity[_EXTENDED_PREVIEW_KEY] = entity.pop("previewContent")
        if with_body:
            entity['content({"postMeteringOptions":{"referrer":""}})'] = self._body(story, member)
        self.entities[key] = entity
        return key

    def _body(self, story: SiteStory, member: bool = False) -> Entity:
        version = hashlib.sha1(f"version:{story.id}".encode()).hexdigest()[:12]
        refs = []
        index = 0
        for number, block in enumerate(story.body(member)):
            paragraph_id = f"{version}_{number}"
            paragraph: Entity = {"__typename": "Paragraph", "id": paragraph_id}
            if isinstance(block, str):
                paragraph |= {"name": paragraph_name(story, index), "type": "P", "text": block}
                index += 1
            elif block.image_id is None:
                continue  # an off-site image has no place in Medium's state (pages without one)
            else:  # a Medium figure: an IMG paragraph naming its ImageMetadata
                metadata = self.image(block.image_id)
                self.entities[metadata]["alt"] = block.alt or None
                paragraph |= {
                    "name": figure_name(story, number),
                    "type": "IMG",
                    "layout": "INSET_CENTER",
                    "metadata": ref(metadata),
                    "text": block.caption or None,
                }
            self.entities[f"Paragraph:{paragraph_id}"] = paragraph | {"markups": []}
            refs.append(ref(f"Paragraph:{paragraph_id}"))
        return {
            "__typename": "PostContent",
            "isLockedPreviewOnly": story.member_only and not member,
            "bodyModel": {"__typename": "RichText", "paragraphs": refs},
        }


def figure_name(story: SiteStory, number: int) -> str:
    """The 4-hex anchor of a figure (the ``number``-th block of the body)."""
    return hashlib.sha1(f"{story.id}:figure:{number}".encode()).hexdigest()[:4]


def paragraph_name(story: SiteStory, index: int) -> str:
    """The 4-hex paragraph anchor Medium uses as ``name`` and DOM ``id``."""
    return hashlib.sha1(f"{story.id}:{index}".encode()).hexdigest()[:4]
