"""The model of the 2026 variants (writers, publications, posts, tag cases) and the Apollo
state and JSON-LD each tag case's page carries; see :mod:`tests.variants_2026`."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

Entity = dict[str, Any]


@dataclass
class Writer:
    user_id: str
    username: str
    name: str
    image_id: str
    subdomain: bool = False

    @property
    def url(self) -> str:
        return f"https://medium.com/@{self.username}"


@dataclass
class Pub:
    collection_id: str
    slug: str
    name: str
    domain: str | None = None

    @property
    def url(self) -> str:
        return f"https://{self.domain}" if self.domain else f"https://medium.com/{self.slug}"


@dataclass
class Post:
    post_id: str
    title: str
    slug: str
    writer: Writer
    published: str  # ISO, UTC
    updated: str
    claps: int
    responses: int
    locked: bool
    tags: list[str]
    image_id: str
    subtitle: str = ""
    pub: Pub | None = None
    canonical: str | None = None  # a cross-post's original, off Medium

    @property
    def medium_url(self) -> str:
        if self.pub is not None:
            return f"{self.pub.url}/{self.slug}-{self.post_id}"
        if self.writer.subdomain:
            return f"https://{self.writer.username}.medium.com/{self.slug}-{self.post_id}"
        return f"https://medium.com/@{self.writer.username}/{self.slug}-{self.post_id}"


@dataclass
class TagCase:
    name: str
    slug: str
    title: str
    post_count: int
    related: list[tuple[str, str | None]]  # (slug, display title or None: no entity)
    feed_key: str  # the tagFeed key as stored, aliased
    feed_ids: list[str]  # posts the feed lists (those not in ``posts`` have no entity)
    newest_ids: list[str]  # Tag.posts:{NEWEST}
    posts: list[Post]  # entities in the state
    cards: list[Post]
    postings: list[Post]  # Tag.seoMetaTags.jsonLd
    page_postings: list[Post]  # the page's own ld+json
    follow: list[Writer | Pub] = field(default_factory=list)
    seed: int = 0


def ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def ref(key: str) -> dict[str, str]:
    return {"__ref": key}


def shuffled(entity: Entity, rng: random.Random) -> Entity:
    """The same object with its keys in another (seeded) order, nested objects too."""
    keys = list(entity)
    rng.shuffle(keys)
    return {k: shuffled(entity[k], rng) if isinstance(entity[k], dict) else entity[k] for k in keys}


# --- the state ------------------------------------------------------------------------------


def tag_state(case: TagCase) -> dict[str, Any]:
    rng = random.Random(case.seed)
    viewer = f"lo_{case.seed:012x}"
    state: dict[str, Entity] = {}

    def tag(slug: str, title: str) -> str:
        state[f"Tag:{slug}"] = {
            "__typename": "Tag",
            "viewerEdge": ref(f"TagViewerEdge:tagSlug:{slug}-viewerId:{viewer}"),
            "id": slug,
            "displayTitle": title,
            "normalizedTagSlug": slug,
        }
        return f"Tag:{slug}"

    def user(writer: Writer) -> str:
        state[f"User:{writer.user_id}"] = {
            "__typename": "User",
            "id": writer.user_id,
            "customDomainState": (
                {
                    "__typename": "CustomDomainState",
                    "live": {
                        "__typename": "CustomDomain",
                        "domain": f"{writer.username}.medium.com",
                    },
                }
                if writer.subdomain
                else None
            ),
            "hasSubdomain": writer.subdomain,
            "username": writer.username,
            "imageId": writer.image_id,
            "name": writer.name,
        }
        return f"User:{writer.user_id}"

    def collection(pub: Pub) -> str:
        state[f"Collection:{pub.collection_id}"] = {
            "__typename": "Collection",
            "id": pub.collection_id,
            "domain": pub.domain,
            "slug": pub.slug,
            "name": pub.name,
        }
        return f"Collection:{pub.collection_id}"

    for post in case.posts:
        state[f"Post:{post.post_id}"] = {
            "__typename": "Post",
            "id": post.post_id,
            "title": post.title,
            "previewImage": {"__typename": "ImageMetadata", "id": post.image_id},
            "extendedPreviewContent": {"__typename": "PreviewContent", "isFullContent": False,
                                       "subtitle": post.subtitle},
            "visibility": "LOCKED" if post.locked else "PUBLIC",
            "creator": ref(user(post.writer)),
            "collection": ref(collection(post.pub)) if post.pub else None,
            "mediumUrl": post.medium_url,
            "uniqueSlug": f"{post.slug}-{post.post_id}",
            "firstPublishedAt": ms(post.published),
            "latestPublishedAt": ms(post.updated),
            "isPublished": True,
            "tags": [ref(tag(slug, slug.replace("-", " ").title())) for slug in post.tags],
            "clapCount": post.claps,
            "isLocked": post.locked,
            "postResponses": {"__typename": "PostResponses", "count": post.responses},
        }  # fmt: skip
    for slug, title in case.related:
        if title is not None:
            tag(slug, title)
    for account in case.follow:
        user(account) if isinstance(account, Writer) else collection(account)
    json_ld = collection_page(case, case.postings)
    state[f"Tag:{case.slug}"] = {
        "__typename": "Tag",
        "id": case.slug,
        "displayTitle": case.title,
        "normalizedTagSlug": case.slug,
        "postCount": case.post_count,
        "posts:{\"sortOrder\":\"NEWEST\",\"timeRange\":{\"kind\":\"ALL_TIME\"}}": {
            "__typename": "TagPostConnection",
            "edges": [{"__typename": "TagPostEdge", "node": ref(f"Post:{pid}")}
                      for pid in case.newest_ids],
            "pageInfo": {"hasNextPage": True, "endCursor": ""},
        },
        "seoMetaTags": {"__typename": "SEOMetaTags", "robots": "index,follow",
                        "jsonLd": json.dumps(json_ld)},
    }  # fmt: skip
    root = {
        "__typename": "Query",
        "viewer": None,
        f'tagFromSlug({{"tagSlug":"{case.slug}"}})': ref(f"Tag:{case.slug}"),
        f'relatedTags({{"tagSlug":"{case.slug}"}})': [ref(f"Tag:{s}") for s, _ in case.related],
        case.feed_key: {
            "__typename": "TagFeedResult",
            "items": [{"__typename": "TagFeedItem", "feedId": f"feed-{case.seed}", "reason": 85,
                       "post": ref(f"Post:{pid}")} for pid in case.feed_ids],
        },
    }  # fmt: skip
    entries = list(state.items())
    rng.shuffle(entries)
    return {"ROOT_QUERY": shuffled(root, rng), **{k: shuffled(v, rng) for k, v in entries}}


def collection_page(case: TagCase, postings: list[Post]) -> dict[str, Any]:
    url = f"https://medium.com/tag/{case.slug}"
    return {
        "@context": "https://schema.org",
        "@id": url,
        "@type": "CollectionPage",
        "name": f"The most insightful stories about {case.title} - Medium",
        "url": url,
        "mainEntity": [posting(post) for post in postings],
    }


def posting(post: Post) -> dict[str, Any]:
    address = post.canonical or post.medium_url
    person = {"@context": "https://schema.org", "@id": post.writer.url, "@type": "Person",
              "identifier": post.writer.username, "name": post.writer.name,
              "url": post.writer.url}  # fmt: skip
    publisher = (
        {"@type": "Organization", "@id": post.pub.url, "name": post.pub.name, "url": post.pub.url}
        if post.pub
        else {"@type": "Organization", "@id": "https://medium.com", "name": "Medium",
              "url": "https://medium.com"}
    )  # fmt: skip
    return {
        "@context": "https://schema.org",
        "@id": address,
        "@type": "SocialMediaPosting",
        "author": person,
        "creator": person,
        "dateCreated": post.published,
        "dateModified": post.updated,
        "datePublished": post.published,
        "description": f"{post.title} The first lines of the story go here, cut short …",
        "headline": post.title,
        "identifier": post.post_id,
        "image": [f"https://miro.medium.com/{post.image_id}"],
        "isAccessibleForFree": not post.locked,
        "mainEntityOfPage": address,
        "name": post.title,
        "publisher": publisher,
        "url": address,
    }
