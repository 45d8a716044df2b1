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
:mod:`topics_crawler.graphql.post_responses` checks every response strictly.

Reading an answer
-----------------

Strict reading of one ``PostResponsesQuery`` answer: response rows, or why it is unusable.

No real body of this operation exists to check against (see docs/responses.md), so
nothing is taken on trust. The envelope (``[0].data.post.threadedPostResponses``)
must be there with the right types, the post must be the story asked about, and a
paging cursor that comes back is refused: any of these makes the whole answer a
:class:`ResponsesFailure`. Inside a valid answer each response is checked on its
own: one that is not a ``Post`` object, has no hex id, or claims to answer another
post than the one it is listed under is skipped with a reason (``skipped``), its
thread with it; a *deleted* response (a post without a creator) gives no row but
keeps its replies, which still name it as their parent. Everything is read through
the strict reader shared with the archive validator (:mod:`topics_crawler.graphql.strict`),
and :func:`read_responses` never raises.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from topics_crawler.graphql.strict import (
    ReadFailure,
    ShapeError,
    first_result_node,
    optional_node,
    required_list,
    required_node,
    wrong_typename,
)
from topics_crawler.items import StoryResponse
from topics_crawler.items.values import clean_text, parse_timestamp
from topics_crawler.pages.state import Node, kind_of

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


def _reply_selection(depth: int) -> str:
    """The nested reply selection ``depth`` levels deep ("" at 0)."""
    if depth <= 0:
        return ""
    inner = _reply_selection(depth - 1)
    return (
        f"threadedPostResponses(paging: $repliesPaging) {{ posts {{ ...ResponsePost {inner}}} }} "
    )


QUERY = (
    "query PostResponsesQuery($postId: ID!, $paging: PagingOptions, "
    "$repliesPaging: PagingOptions) {\n"
    "  post(id: $postId) {\n"
    "    __typename\n    id\n    postResponses { count }\n"
    "    threadedPostResponses(paging: $paging) {\n"
    f"      posts {{ ...ResponsePost {_reply_selection(REPLY_DEPTH)}}}\n"
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


FailureReason = Literal[
    "not_json",
    "not_a_batch",
    "graphql_errors",
    "post_not_found",
    "wrong_post",
    "missing_field",
    "wrong_type",
    "repeated_cursor",
]
"""The ``reason`` values of a :class:`ResponsesFailure`."""
_POST_ID = re.compile(r"[0-9a-f]{8,16}")


@dataclass(frozen=True)
class ResponsesPage:
    """One valid page: its response rows in thread order (a response, then its replies)."""

    rows: list[StoryResponse] = field(default_factory=list)
    next_to: str | None = None
    """The ``to`` cursor of the next page (None: no more top-level responses)."""
    total: int | None = None
    """``postResponses.count`` as the answer states it."""
    top_level: int = 0
    """Top-level responses listed on this page (rows or not)."""
    deleted: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    """Responses left out, by reason (``wrong_parent``, ``bad_id``, ``wrong_type``…)."""


@dataclass(frozen=True)
class ResponsesFailure(ReadFailure):
    """Why an answer cannot be used (``reason``: a :data:`FailureReason`)."""


def read_responses(
    body: bytes | str,
    story_id: str,
    scraped_at: str,
    *,
    seen_cursors: Collection[str] = (),
    limit: int | None = None,
) -> ResponsesPage | ResponsesFailure:
    """The response rows of an answer about ``story_id`` (at most ``limit`` rows)."""
    try:
        post = _post(first_result_node(body), story_id)
        connection = required_node(post, "threadedPostResponses", "data.post.")
        posts = required_list(connection, "posts", "data.post.threadedPostResponses.")
        next_to = _next_cursor(connection, seen_cursors)
    except ShapeError as problem:
        return ResponsesFailure(problem.reason, problem.detail, problem.failure.messages)
    walk = _Walk(post, story_id, scraped_at, limit)
    for entry in posts:
        walk.visit(entry, story_id, 1)
    counts = post.node("postResponses")
    total = _count(counts.int("count")) if counts is not None else None
    return ResponsesPage(walk.rows, next_to, total, len(posts), walk.deleted, walk.skipped)


def _post(result: Node, story_id: str) -> Node:
    data = required_node(result, "data", "")
    if not data.has("post"):
        raise ShapeError("missing_field", "data.post is missing")
    if data.value("post") is None:
        raise ShapeError("post_not_found", f"data.post is null (no post {story_id})")
    post = required_node(data, "post", "data.")
    other = wrong_typename(post, "Post")
    if other is not None:
        raise ShapeError("wrong_type", f"data.post is a {other}, not a Post")
    if post.value("id") != story_id:
        raise ShapeError("wrong_post", f"data.post.id is {post.value('id')!r}, not {story_id!r}")
    return post


def _next_cursor(connection: Node, seen: Collection[str]) -> str | None:
    where = "data.post.threadedPostResponses."
    paging = optional_node(connection, "pagingInfo", where)
    following = optional_node(paging, "next", where + "pagingInfo.") if paging else None
    if following is None:
        return None
    to = following.value("to")
    if not isinstance(to, str) or not to:
        raise ShapeError(
            "missing_field", f"{where}pagingInfo.next.to is {kind_of(to)}, not a cursor"
        )
    if to in seen:
        raise ShapeError("repeated_cursor", f"cursor {to[:40]!r} came back (paging loop)")
    return to


class _Walk:
    """Depth-first over one page's threads, collecting rows until ``limit``."""

    def __init__(self, post: Node, story_id: str, scraped_at: str, limit: int | None) -> None:
        self.state = post.state
        self.story_id = story_id
        self.scraped_at = scraped_at
        self.limit = limit
        self.rows: list[StoryResponse] = []
        self.deleted = 0
        self.skipped: Counter[str] = Counter()

    def full(self) -> bool:
        return self.limit is not None and len(self.rows) >= self.limit

    def visit(self, value: Any, parent_id: str, depth: int) -> None:
        if self.full():
            return
        if value is None:
            self.skipped["null_entry"] += 1
            return
        entry = Node(self.state, value) if isinstance(value, dict) else None
        reason = _invalid(entry, parent_id)
        if entry is None or reason is not None:
            self.skipped[reason or "wrong_type"] += 1
            return
        response_id = entry.value("id")
        if entry.value("creator") is None:
            self.deleted += 1
        else:
            self.rows.append(self._row(entry, parent_id, depth))
        for reply in _replies(entry, self.skipped):
            self.visit(reply, response_id, depth + 1)

    def _row(self, entry: Node, parent_id: str, depth: int) -> StoryResponse:
        creator = entry.node("creator")
        content = entry.node("content")
        preview = content.bool("isLockedPreviewOnly") if content is not None else None
        text = _text(content.node("bodyModel") if content is not None else None)
        return StoryResponse(
            response_id=entry.value("id"),
            story_id=self.story_id,
            parent_id=parent_id,
            depth=depth,
            url=_str(entry.str("mediumUrl")),
            author_id=_str(creator.str("id")) if creator is not None else None,
            author_username=_str(creator.str("username")) if creator is not None else None,
            author_name=clean_text(_str(creator.str("name"))) if creator is not None else None,
            text=text,
            text_is_preview=preview if text else None,
            is_member_only=entry.bool("isLocked"),
            claps=_count(entry.value("clapCount")),
            published_at=parse_timestamp(entry.scalar("firstPublishedAt"))[0],
            data_source="graphql",
            scraped_at=self.scraped_at,
        )


def _invalid(entry: Node | None, parent_id: str) -> str | None:
    """Why ``entry`` cannot be a response to ``parent_id`` (None: it can)."""
    if entry is None or wrong_typename(entry, "Post") is not None:
        return "wrong_type"
    response_id = entry.value("id")
    if not isinstance(response_id, str) or not _POST_ID.fullmatch(response_id):
        return "bad_id"
    answered = entry.node("inResponseToPostResult")
    if (answered.value("id") if answered is not None else None) != parent_id:
        return "wrong_parent"
    kind = entry.value("inResponseToEntityType")
    if kind is not None and kind != "POST":
        return "wrong_parent"
    return None


def _replies(entry: Node, skipped: Counter[str]) -> list[Any]:
    if entry.value("threadedPostResponses") is None:
        return []
    thread = entry.node("threadedPostResponses")
    if thread is None or not isinstance(thread.value("posts"), list):
        skipped["wrong_type_replies"] += 1
        return []
    return thread.list("posts")


def _text(body_model: Node | None) -> str | None:
    paragraphs = body_model.nodes("paragraphs") if body_model is not None else []
    texts = [clean_text(p.str("text")) for p in paragraphs]
    joined = "\n\n".join(text for text in texts if text)
    return joined or None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _str(value: str | None) -> str | None:
    return value if value and value.strip() else None
