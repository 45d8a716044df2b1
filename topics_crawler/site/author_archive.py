"""Author archives on the local site, in both forms a profile pages its stories.

An author listed in :attr:`SiteContent.author_archives` gets a profile that lists only its
first page of stories and a cursor to the rest:

* ``state`` — today's profile with an Apollo ``User.homepagePostsConnection(…)`` whose
  ``pagingInfo.next`` is ``{"from": "L<epoch ms>", "limit": n}`` (arguments in another order
  than the real capture's key). The next pages answer the ``UserArchivePostsQuery`` GraphQL
  operation: stories published before ``from``, ``limit`` of them, and the next cursor.
* ``stream`` — a 2016–2019 profile (``window["obvInit"]({user, userMeta, streamItems,
  references, paging})``) whose ``paging`` is ``{path: …/_/api/users/<id>/profile/stream,
  next: {limit, to: "<epoch ms>", source: "overview", page: 2}}``. The path answers
  ``?format=json`` requests (``to``, ``limit``, ``page``) with the same payload, behind the
  XSSI guard, and the next ``paging``.

``bad_page`` (an archive page number, the profile being page 1) is answered broken: a
wrong-typed ``posts`` in GraphQL, a truncated JSON body in the stream; the archive stops there.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

from topics_crawler.site.entities import ArchiveSpec, SiteAuthor, SiteStory, utc
from topics_crawler.site.graphql_posts import post_node
from topics_crawler.site.markup import epoch_ms
from topics_crawler.site.model import SiteContent
from topics_crawler.site.seed import DEEP_LEARNING, default_site

OPERATION = "UserArchivePostsQuery"
STREAM_PATH = "/_/api/users/{user_id}/profile/stream"
XSSI = "])}while(1);</x>"
JSON = "application/json; charset=utf-8"


def archive_page(
    content: SiteContent, author: SiteAuthor, before_ms: int | None, limit: int
) -> tuple[list[SiteStory], bool]:
    """``(stories, has_more)`` of the author's stories published before ``before_ms``."""
    stories = content.stories_by(author.username)
    if before_ms is not None:
        stories = [s for s in stories if epoch_ms(s.published_at) < before_ms]
    return stories[:limit], len(stories) > limit


def profile_stories(content: SiteContent, author: SiteAuthor) -> tuple[list[SiteStory], bool]:
    """The profile's first page."""
    spec = content.author_archives[author.username]
    return archive_page(content, author, None, spec.page_size)


def state_connection(content: SiteContent, author: SiteAuthor, post_keys: list[str]) -> dict:
    """``(key, value)`` of the profile's ``homepagePostsConnection`` in the Apollo state."""
    spec = content.author_archives[author.username]
    listed, more = profile_stories(content, author)
    following = (
        {"__typename": "PageParams", "from": f"L{epoch_ms(listed[-1].published_at)}",
         "limit": spec.page_size}
        if more and listed else None
    )  # fmt: skip
    key = (
        'homepagePostsConnection({"includeDistributedResponses":false,'
        f'"paging":{{"from":null,"limit":{spec.page_size}}}}})'
    )
    value = {
        "__typename": "HomepagePostsConnection",
        "posts": [{"__ref": key_} for key_ in post_keys],
        "pagingInfo": {"__typename": "Paging", "next": following},
    }
    return {key: value}


def graphql_answer(content: SiteContent, operation: dict[str, Any]) -> dict[str, Any]:
    """The answer to one ``UserArchivePostsQuery``."""
    query = str(operation.get("query", ""))
    if "homepagePostsConnection(paging: {from: $from, limit: $limit}" not in query:
        return {"errors": [{"message": "Query must page homepagePostsConnection"}]}
    variables = operation.get("variables") or {}
    author = content.authors.get(str(variables.get("username", "")))
    if author is None:
        return {"data": {"userResult": {"__typename": "UserNotFound"}}}
    spec = content.author_archives.get(author.username)
    cursor, limit = variables.get("from"), variables.get("limit")
    if not (isinstance(cursor, str) and cursor[:1] == "L" and cursor[1:].isdigit()):
        return {"errors": [{"message": f"Invalid cursor {cursor!r}"}]}
    if not isinstance(limit, int) or not 1 <= limit <= 25:
        return {"errors": [{"message": f"limit must be 1 to 25, got {limit!r}"}]}
    before = int(cursor[1:])
    page_number = 2 + _pages_before(content, author, before, limit)
    stories, more = archive_page(content, author, before, limit)
    posts: Any = [post_node(content, story) for story in stories]
    if spec is not None and spec.bad_page == page_number:
        posts = "unavailable"
    following = (
        {"__typename": "PageParams", "from": f"L{epoch_ms(stories[-1].published_at)}",
         "limit": limit}
        if more and stories else None
    )  # fmt: skip
    user = {
        "__typename": "User",
        "id": author.id,
        "username": author.username,
        "homepagePostsConnection": {
            "__typename": "HomepagePostsConnection",
            "posts": posts,
            "pagingInfo": {"__typename": "Paging", "next": following},
        },
    }
    return {"data": {"userResult": user}}


def _pages_before(content: SiteContent, author: SiteAuthor, before_ms: int, limit: int) -> int:
    """Archive pages before the one starting at ``before_ms`` (the profile's excluded)."""
    newer = [
        s for s in content.stories_by(author.username) if epoch_ms(s.published_at) >= before_ms
    ]
    first = content.author_archives[author.username].page_size
    return max(0, -(-(len(newer) - first) // limit))


def legacy_payload(
    content: SiteContent, author: SiteAuthor, stories: list[SiteStory], more: bool, page: int
) -> dict[str, Any]:
    """``{user, userMeta, streamItems, references, paging}`` of one stream page."""
    spec = content.author_archives[author.username]
    posts = {
        story.id: {
            "id": story.id,
            "title": story.title,
            "uniqueSlug": story.unique_slug,
            "creatorId": author.id,
            "firstPublishedAt": epoch_ms(story.published_at),
            "latestPublishedAt": epoch_ms(story.last_update),
            "mediumUrl": content.story_url(story),
            "virtuals": {
                "readingTime": story.reading_time,
                "totalClapCount": story.claps,
                "responsesCreatedCount": story.responses,
                "subtitle": story.subtitle,
                "tags": [{"slug": t.slug, "name": t.name} for t in story.tags],
            },
            "type": "Post",
        }
        for story in stories
    }
    paging: dict[str, Any] = {"path": content_url(content, author)}
    if more and stories:
        paging["next"] = {
            "limit": spec.page_size,
            "to": str(epoch_ms(stories[-1].published_at)),
            "source": "overview",
            "ignoredIds": [],
            "page": page + 1,
        }
    return {
        "user": {
            "userId": author.id, "name": author.name, "username": author.username,
            "bio": author.bio, "imageId": author.image_id, "type": "User",
        },
        "userMeta": {"numberOfPostsPublished": len(content.stories_by(author.username))},
        "streamItems": [
            {"itemType": "postPreview", "postPreview": {"postId": story.id}, "type": "StreamItem"}
            for story in stories
        ],
        "references": {
            "Post": posts,
            "User": {author.id: {"userId": author.id, "name": author.name,
                                 "username": author.username, "type": "User"}},
            "SocialStats": {author.id: {"userId": author.id,
                                        "usersFollowedByCount": author.followers}},
        },
        "paging": paging,
    }  # fmt: skip


def content_url(content: SiteContent, author: SiteAuthor) -> str:
    """The stream endpoint the payload's ``paging.path`` names (on medium.com)."""
    return "https://medium.com" + STREAM_PATH.format(user_id=author.id)


def legacy_profile_page(content: SiteContent, author: SiteAuthor) -> str:
    """A 2016–2019 profile page: the first stream page in ``obvInit``."""
    stories, more = profile_stories(content, author)
    payload = legacy_payload(content, author, stories, more, page=1)
    return (
        f"<!DOCTYPE html><html><head><title>{author.name} – Medium</title>"
        f'<link rel="canonical" href="{author.url}">'
        f'<meta property="profile:username" content="{author.username}"></head><body>'
        f'<div class="u-paddingTop10"><h1 class="hero-title">{author.name}</h1></div>'
        '<script>// <![CDATA[\nwindow["obvInit"]('
        + json.dumps(payload)
        + ")\n// ]]></script></body></html>"
    )


def stream_answer(content: SiteContent, raw_path: str) -> tuple[int, bytes] | None:
    """The answer to ``GET /@user/latest?format=json&…`` or the same stream at
    ``/_/api/users/<id>/profile/stream?…`` (None: neither path)."""
    parts = urlsplit(raw_path)
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) == 2 and segments[0].startswith("@") and segments[1] == "latest":
        author = content.authors.get(segments[0][1:])
    elif segments[:3] == ["_", "api", "users"] and segments[4:] == ["profile", "stream"]:
        author = next((a for a in content.authors.values() if a.id == segments[3]), None)
    else:
        return None
    if author is None or author.username not in content.author_archives:
        return 404, b'{"success":false,"error":"User not found"}'
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    if query.get("format") != "json" or not query.get("to", "").isdigit():
        return 400, b'{"success":false,"error":"format=json and to=<epoch ms> required"}'
    spec = content.author_archives[author.username]
    page = int(query.get("page", "2")) if query.get("page", "2").isdigit() else 2
    limit = int(query.get("limit", str(spec.page_size)))
    stories, more = archive_page(content, author, int(query["to"]), limit)
    body = json.dumps({"success": True, "payload": legacy_payload(content, author, stories,
                                                                  more, page)})  # fmt: skip
    if spec.bad_page == page:
        body = body[: len(body) // 2]  # cut off mid-payload
    return 200, (XSSI + body).encode("utf-8")


#: Authors of the default site given an archive, and how their profile pages it.
ARCHIVES = {
    "meetvaddoriya": ArchiveSpec("state"),
    "varuntej": ArchiveSpec("stream", bad_page=3),
    "pinterest_engineering": ArchiveSpec("state", bad_page=2),
}
#: Stories each of them gets on top of the default site's.
EXTRA_STORIES = 10


def author_archive_site(
    extra: int = EXTRA_STORIES, archives: dict[str, ArchiveSpec] | None = None
) -> SiteContent:
    """A fresh default site whose ``archives`` authors (default :data:`ARCHIVES`) have
    ``extra`` more stories each, paged by their profiles as their spec says."""
    site = default_site()
    for number, (username, spec) in enumerate((archives or ARCHIVES).items()):
        for index in range(extra):
            site.add_story(
                SiteStory(
                    slug=f"{username.replace('_', '-')}-archive-{index + 1}",
                    title=f"Archive note {index + 1} by {username}",
                    subtitle=f"Older writing, part {index + 1}",
                    author=username,
                    published_at=utc(2021, 1 + number, 1) + timedelta(hours=index),
                    paragraphs=[f"Part {index + 1} of an older series.", "Kept short."],
                    claps=10 * index,
                    tags=[DEEP_LEARNING],
                )
            )
        site.author_archives[username] = spec
    return site
