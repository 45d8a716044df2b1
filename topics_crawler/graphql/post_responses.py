"""The ``PostResponsesQuery`` operation: a story's responses with their threads, in one place.

On Medium a response is a post that answers another post (``inResponseToPostResult``
in the 2022 state, ``inResponseToPostId`` in 2015–2019 JSON; profiles list them with
``includeDistributedResponses``). The web client loads a story's responses from the
same ``POST /_/graphql`` endpoint as the tag archive, one page of top-level responses
at a time, each with its replies::

    post(id: $postId) { id postResponses { count }
      threadedPostResponses(paging: $paging) {
        posts { ...ResponsePost  threadedPostResponses(paging: $repliesPaging) { posts { … } } }
        pagingInfo { next { limit to } } } }

Replies are selected inline to :data:`REPLY_DEPTH` levels below the top-level
responses, so one request brings whole threads. The next page passes
``pagingInfo.next`` back as ``paging``. The operation and field names follow
Medium's data model as the captures show it (``Post``, ``postResponses``,
``inResponseToPostResult``, ``PagingOptions {limit, to}``); **no real response body
of this operation was available to check against** (see docs/responses.md), so
:mod:`topics_crawler.graphql.post_responses_reader` checks every response strictly.
"""

from __future__ import annotations

import json
from typing import Any

OPERATION_NAME = "PostResponsesQuery"
#: Top-level responses per request (Medium's client asks for pages of this size).
PAGE_SIZE = 25
#: Reply levels selected below a top-level response (2: replies and replies to them).
REPLY_DEPTH = 2
#: Replies per response per level.
REPLIES_LIMIT = 25
REQUEST_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json",
    "graphql-operation": OPERATION_NAME,
}

RESPONSE_FIELDS = """
fragment ResponsePost on Post {
  __typename
  id
  mediumUrl
  firstPublishedAt
  clapCount
  isLocked
  inResponseToEntityType
  inResponseToPostResult { __typename ... on Post { id } }
  creator { __typename id name username }
  content { isLockedPreviewOnly bodyModel { paragraphs { type text } } }
}
"""


def _replies(depth: int) -> str:
    """The nested reply selection ``depth`` levels deep ("" at 0)."""
    if depth <= 0:
        return ""
    inner = _replies(depth - 1)
    return (
        f"threadedPostResponses(paging: $repliesPaging) {{ posts {{ ...ResponsePost {inner}}} }} "
    )


QUERY = (
    "query PostResponsesQuery($postId: ID!, $paging: PagingOptions, "
    "$repliesPaging: PagingOptions) {\n"
    "  post(id: $postId) {\n"
    "    __typename\n    id\n    postResponses { count }\n"
    "    threadedPostResponses(paging: $paging) {\n"
    f"      posts {{ ...ResponsePost {_replies(REPLY_DEPTH)}}}\n"
    "      pagingInfo { next { limit to } }\n"
    "    }\n  }\n}\n" + RESPONSE_FIELDS
).strip()


def responses_variables(
    post_id: str, limit: int = PAGE_SIZE, to: str | None = None
) -> dict[str, Any]:
    """Variables of one page: ``limit`` top-level responses (1..``PAGE_SIZE``) after the
    cursor ``to`` of the previous page (absent on the first)."""
    paging: dict[str, Any] = {"limit": max(1, min(limit, PAGE_SIZE))}
    if to:
        paging["to"] = to
    return {"postId": post_id, "paging": paging, "repliesPaging": {"limit": REPLIES_LIMIT}}


def responses_operation(
    post_id: str, limit: int = PAGE_SIZE, to: str | None = None
) -> dict[str, Any]:
    """One operation of the batch: ``{"operationName", "variables", "query"}``."""
    return {
        "operationName": OPERATION_NAME,
        "variables": responses_variables(post_id, limit, to),
        "query": QUERY,
    }


def responses_body(post_id: str, limit: int = PAGE_SIZE, to: str | None = None) -> bytes:
    """The POST body: a JSON array holding the one operation (compact, UTF-8)."""
    operation = responses_operation(post_id, limit, to)
    return json.dumps([operation], separators=(",", ":"), ensure_ascii=False).encode("utf-8")
