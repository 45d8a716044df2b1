"""Responses of the local site: threads under stories, and the ``PostResponsesQuery`` answer.

A response is a post answering another post, as on Medium. The default site gives
the "Hands-On Distributed Training" story a thread with two reply levels, a deleted
response (its reply stays) and a member-only one, and the "Data, Tensor and Pipeline
Parallelism" story 30 plain responses (more than one page). Every other story has none.

The answer follows the operation's query (``post(id)`` → ``postResponses`` and
``threadedPostResponses(paging)`` → ``posts`` with replies inline to the depth the
query nests ``threadedPostResponses``, ``pagingInfo.next {limit, to}``); ``to`` is an
opaque cursor (base64 of ``responses:<offset>``). ``SiteContent.responses_fault`` makes
it misbehave for tests, one of :data:`FAULTS`.
"""

from __future__ import annotations

import base64
import binascii
from datetime import timedelta
from typing import Any

from topics_crawler.site.entities import MEDIUM_ROOT, SiteResponse, utc
from topics_crawler.site.markup import epoch_ms
from topics_crawler.site.model import SiteContent

OPERATION = "PostResponsesQuery"
MAX_LIMIT = 25
FAULTS = (
    "errors",  # {"errors": [...]} for every answer
    "wrong_post",  # data.post is another post
    "repeat_cursor",  # every page points to the first page again
    "bad_entries",  # a null entry, a non-Post, and a response claiming another parent
)
Result = dict[str, Any]


class OperationError(Exception):
    """Bad input to the operation: becomes a GraphQL error."""


def add_threads(site: SiteContent) -> None:
    """The default site's threads (see the module doc)."""
    by_slug = {story.slug: story for story in site.stories.values()}
    hands_on = by_slug[
        "hands-on-distributed-training-from-single-gpu-to-multi-gpu-with-lightning-ai"
    ]
    day = utc(2025, 8, 4, 10)
    site.threads[hands_on.id] = [
        SiteResponse(
            "lr-scaling", "rishikumar",
            ["Did you scale the learning rate linearly with the GPUs?", "It diverged for me."],
            day, claps=12,
            replies=[
                SiteResponse(
                    "lr-scaling-reply", "pelinbalci", ["Yes, with a short warm-up."],
                    day + timedelta(hours=3), claps=4,
                    replies=[
                        SiteResponse("lr-scaling-thanks", "rishikumar", ["Warm-up fixed it."],
                                     day + timedelta(hours=9), claps=1),
                    ],
                ),
            ],
        ),
        SiteResponse(
            "removed", None, [], day + timedelta(days=1),
            replies=[
                SiteResponse("removed-reply", "varuntej", ["Answering a deleted response."],
                             day + timedelta(days=1, hours=2)),
            ],
        ),
        SiteResponse(
            "members-note", "meetvaddoriya",
            ["Memory budgets change with four GPUs.", "The rest is for members."],
            day + timedelta(days=2), claps=30, member_only=True,
        ),
    ]  # fmt: skip
    parallelism = by_slug["distributed-training-data-tensor-and-pipeline-parallelism"]
    start = utc(2025, 9, 1, 8)
    site.threads[parallelism.id] = [
        SiteResponse(f"parallelism-{n}", "varuntej", [f"Response number {n}."],
                     start + timedelta(hours=n), claps=n)
        for n in range(1, 31)
    ]  # fmt: skip


def responses_answer(content: SiteContent, operation: Any) -> Result:
    """The result of one ``PostResponsesQuery`` operation."""
    if content.responses_fault == "errors":
        return {"errors": [{"message": "Internal server error", "path": ["post"]}]}
    try:
        return {"data": _post(content, operation)}
    except OperationError as exc:
        return {"errors": [{"message": str(exc), "locations": [{"line": 1, "column": 1}]}]}


def _post(content: SiteContent, operation: dict[str, Any]) -> Result:
    query = str(operation.get("query", ""))
    if "threadedPostResponses(paging: $paging)" not in query:
        raise OperationError("Query must select threadedPostResponses(paging: $paging)")
    variables = operation.get("variables")
    if not isinstance(variables, dict):
        raise OperationError("Variables must be an object")
    post_id = variables.get("postId")
    if not isinstance(post_id, str) or not post_id:
        raise OperationError('Variable "$postId" of required type "ID!" was not provided')
    limit, offset = _paging(variables.get("paging"))
    story = content.stories.get(post_id)
    if story is None:
        return {"post": None}
    thread = content.threads.get(post_id, [])
    depth = query.count("threadedPostResponses(paging: $repliesPaging)")
    fault = content.responses_fault
    start = 0 if fault == "repeat_cursor" else offset
    chunk = thread[start : start + limit]
    posts: list[Any] = [_node(content, r, post_id, depth) for r in chunk]
    if fault == "bad_entries":
        posts[1:1] = [None, {"__typename": "User", "id": "abcdef012345"}]
        if posts[0] is not None:
            posts[0]["inResponseToPostResult"] = {"__typename": "Post", "id": "0badc0ffee00"}
    more = fault == "repeat_cursor" or start + len(chunk) < len(thread)
    paging = {"next": {"limit": limit, "to": _cursor(start + len(chunk))} if more else None}
    return {
        "post": {
            "__typename": "Post",
            "id": "000000000000" if fault == "wrong_post" else story.id,
            "postResponses": {"__typename": "PostResponses", "count": len(thread)},
            "threadedPostResponses": {
                "__typename": "ThreadedPostResponses",
                "posts": posts,
                "pagingInfo": {"__typename": "PagingInfo", **paging},
            },
        }
    }


def _paging(paging: Any) -> tuple[int, int]:
    if not isinstance(paging, dict):
        raise OperationError('Variable "$paging" must be an object')
    limit = paging.get("limit")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise OperationError(f"paging.limit must be 1 to {MAX_LIMIT}, got {limit!r}")
    to = paging.get("to")
    if to in (None, ""):
        return limit, 0
    try:
        kind, _, number = base64.urlsafe_b64decode(str(to).encode()).decode().partition(":")
        offset = int(number)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise OperationError(f"Invalid cursor {to!r}") from None
    if kind != "responses" or offset < 0:
        raise OperationError(f"Cursor {to!r} does not belong to this listing")
    return limit, offset


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"responses:{offset}".encode()).decode()


def _node(content: SiteContent, response: SiteResponse, parent_id: str, depth: int) -> Result:
    author = content.authors.get(response.author) if response.author else None
    shown = response.text[:1] if response.member_only else response.text
    node: Result = {
        "__typename": "Post",
        "id": response.id,
        "mediumUrl": f"{MEDIUM_ROOT}/@{response.author or 'deleted'}/{response.key}-{response.id}",
        "firstPublishedAt": epoch_ms(response.published_at),
        "clapCount": response.claps,
        "isLocked": response.member_only,
        "inResponseToEntityType": "POST",
        "inResponseToPostResult": {"__typename": "Post", "id": parent_id},
        "creator": None if author is None else {
            "__typename": "User", "id": author.id, "name": author.name,
            "username": author.username,
        },
        "content": None if author is None else {
            "__typename": "PostContent",
            "isLockedPreviewOnly": response.member_only,
            "bodyModel": {"__typename": "RichText", "paragraphs": [
                {"__typename": "Paragraph", "type": "P", "text": text} for text in shown
            ]},
        },
    }  # fmt: skip
    if depth > 0:
        node["threadedPostResponses"] = {
            "__typename": "ThreadedPostResponses",
            "posts": [_node(content, r, response.id, depth - 1) for r in response.replies],
        }
    return node
