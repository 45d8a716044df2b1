"""The ``Post`` object Medium's GraphQL answers carry for a listed story (the tag archive feed
and the author archive select the same fields), nested objects inline."""

from __future__ import annotations

from typing import Any

from topics_crawler.site.entities import SiteStory
from topics_crawler.site.markup import epoch_ms
from topics_crawler.site.model import SiteContent

Result = dict[str, Any]


def post_node(content: SiteContent, story: SiteStory) -> Result:
    """The ``Post`` fields the archive feed selects, nested objects inline."""
    author = content.authors[story.author]
    publication = content.publication_of(story)
    return {
        "__typename": "Post",
        "id": story.id,
        "title": story.title,
        "mediumUrl": content.story_url(story),
        "uniqueSlug": story.unique_slug,
        "firstPublishedAt": epoch_ms(story.published_at),
        "latestPublishedAt": epoch_ms(story.last_update),
        "readingTime": story.reading_time,
        "isLocked": story.member_only,
        "clapCount": story.claps,
        "postResponses": {"__typename": "PostResponses", "count": story.responses},
        "extendedPreviewContent": {
            "__typename": "PreviewContent",
            "subtitle": story.subtitle,
            "isFullContent": not story.member_only,
        },
        "previewImage": {"__typename": "ImageMetadata", "id": story.image_id},
        "creator": {
            "__typename": "User",
            "id": author.id,
            "name": author.name,
            "username": author.username,
            "mediumMemberAt": 1_600_000_000_000 if author.is_member else 0,
            "socialStats": {"__typename": "SocialStats", "followerCount": author.followers},
        },
        "collection": None if publication is None else {
            "__typename": "Collection",
            "id": publication.id,
            "name": publication.name,
            "slug": publication.slug,
            "domain": publication.domain,
        },
    }  # fmt: skip
