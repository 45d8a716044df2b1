"""An author's archive beyond the profile's first page: the next-page request, in one place,
and the strict reading of a GraphQL archive answer.

A profile gives the cursor of its next stories (:class:`~topics_crawler.pages.ListingCursor`,
``listing="author_stories"``) in one of two forms (STRUCTURE.md):

* **state cursor** (2020+ profiles): ``User.homepagePostsConnection.pagingInfo.next`` =
  ``{"from": "L1583417617283", "limit": 10}``. The next page is the ``UserArchivePostsQuery``
  operation POSTed to ``/_/graphql`` (a JSON array of one operation, as the tag archive):
  ``userResult(username) { ... on User { homepagePostsConnection(paging: {from, limit}) {
  posts { ...Post } pagingInfo { next { from limit } } } } }``. The shape follows the
  profile state's own field, and ``$limit`` is a ``PaginationLimit`` as in every real
  operation on ``PagingOptions`` (an ``Int`` there fails Medium's validation:
  ``tests/test_graphql_schema.py``); no response body was available to verify, so
  :func:`read_user_posts` checks every answer strictly.
* **stream cursor** (2016–2019 profiles and ``/@user/latest?format=json``):
  ``paging{path, next{limit, to, source, page}}``. The next page is
  ``GET /@<user>/latest?<next>&format=json`` — the URL of the 2019 capture itself; ``path``
  (``/_/api/users/<id>/profile/stream``) is under ``/_/``, which Medium's robots.txt
  disallows — answering the same payload again, read by the JSON page parser, with the
  next ``paging``.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlencode

from topics_crawler.graphql.strict import (
    ReadFailure,
    ShapeError,
    first_result_node,
    optional_node,
    required,
    required_list,
    required_node,
)
from topics_crawler.graphql.tag_archive import GRAPHQL_URL, POST_FIELDS
from topics_crawler.pages import ListingCursor
from topics_crawler.pages.state import Node, kind_of
from topics_crawler.urls import author_url

OPERATION_NAME = "UserArchivePostsQuery"
#: The largest page the archive asks for.
MAX_LIMIT = 25
REQUEST_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json",
    "graphql-operation": OPERATION_NAME,
}
QUERY = (
    """
query UserArchivePostsQuery($username: ID!, $from: String, $limit: PaginationLimit!) {
  userResult(username: $username) {
    __typename
    ... on User {
      id
      username
      homepagePostsConnection(paging: {from: $from, limit: $limit},
                              includeDistributedResponses: false) {
        posts { ...TagArchivePost }
        pagingInfo { next { from limit } }
      }
    }
  }
}
"""
    + POST_FIELDS
).strip()

#: ``paging.next`` values a stream request passes on. ``source`` names the stream the
#: ``/latest`` path already picks, and a ``source=`` query is disallowed by Medium's
#: robots.txt (``Disallow: /*/*source=``); ``ignoredIds`` is an empty list in the captures.
STREAM_PARAMETERS = ("limit", "to", "page")
ArchiveForm = Literal["state", "stream"]
ArchiveFailureReason = Literal[
    "not_json",
    "not_a_batch",
    "graphql_errors",
    "user_not_found",
    "missing_field",
    "wrong_type",
    "repeated_cursor",
    "not_a_stream",
    "parse_errors",
    "unknown_cursor",
]


@dataclass(frozen=True)
class PageRequest:
    """What to send for the next archive page (turned into a Scrapy request by the spider)."""

    form: ArchiveForm
    url: str
    method: str = "GET"
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    cursor_key: str = ""
    """The cursor's identity (``from`` / ``to`` value): one coming back is a paging loop."""


def next_page_request(cursor: ListingCursor, username: str, limit: int) -> PageRequest | None:
    """The request of the page ``cursor`` points at, at most ``limit`` stories (and no more
    than the cursor's own ``limit``); None for a cursor of neither form."""
    values = cursor.cursor
    given = values.get("limit")
    size = max(
        1, min(limit, given if isinstance(given, int) and given > 0 else MAX_LIMIT, MAX_LIMIT)
    )
    if isinstance(values.get("from"), str) and values["from"]:
        variables = {"username": username, "from": values["from"], "limit": size}
        operation = {"operationName": OPERATION_NAME, "variables": variables, "query": QUERY}
        body = json.dumps([operation], separators=(",", ":"), ensure_ascii=False)
        return PageRequest(
            "state", GRAPHQL_URL, "POST", body.encode("utf-8"), REQUEST_HEADERS, values["from"]
        )
    if values.get("to") not in (None, ""):
        query = {k: v for k, v in values.items() if k in STREAM_PARAMETERS}
        query.update(limit=size, format="json")
        url = f"{author_url(username)}/latest?{urlencode(query)}"
        return PageRequest("stream", url, cursor_key=str(values["to"]))
    return None


@dataclass(frozen=True)
class UserPostsPage:
    """One valid GraphQL archive page: its ``Post`` nodes and the next cursor (or None)."""

    nodes: list[dict[str, Any]]
    next_cursor: ListingCursor | None


#: Why an archive page cannot be used (``reason``: an :data:`ArchiveFailureReason`).
ArchiveReadFailure = ReadFailure


def read_user_posts(
    body: bytes | str, owner: str | None, seen_cursors: Collection[str] = ()
) -> UserPostsPage | ArchiveReadFailure:
    """``[0].data.userResult.homepagePostsConnection`` of one answer, every level checked
    through the state reader's nodes (:mod:`topics_crawler.graphql.strict`: references
    followed, a field found whatever its arguments); never raises."""
    try:
        data = required_node(first_result_node(body), "data", "")
        user = optional_node(data, "userResult", "data.")
        if user is None or user.typename != "User":
            found = "null" if user is None else (user.typename or "untyped")
            raise ShapeError("user_not_found", f"data.userResult is {found}")
        where = "data.userResult.homepagePostsConnection."
        connection = required_node(user, "homepagePostsConnection", "data.userResult.")
        posts = []
        for index, post in enumerate(required_list(connection, "posts", where)):
            if not isinstance(post, dict):
                raise ShapeError("wrong_type", f"{where}posts[{index}] is {kind_of(post)}")
            node = Node(connection.state, post)
            for name in ("id", "mediumUrl"):
                if not required(node, name, str, f"{where}posts[{index}]."):
                    raise ShapeError("missing_field", f"{where}posts[{index}].{name} is empty")
            posts.append(post)
        return UserPostsPage(posts, _next_cursor(connection, where, owner, seen_cursors))
    except ShapeError as problem:
        return problem.failure


def _next_cursor(
    connection: Node, where: str, owner: str | None, seen: Collection[str]
) -> ListingCursor | None:
    paging = optional_node(connection, "pagingInfo", where)
    following = optional_node(paging, "next", f"{where}pagingInfo.") if paging else None
    if following is None:
        return None
    cursor = required(following, "from", str, f"{where}pagingInfo.next.")
    if cursor in seen:
        raise ShapeError("repeated_cursor", f"cursor {cursor!r} came back (a paging loop)")
    values: dict[str, Any] = {"from": cursor}
    limit = following.int("limit")
    if limit is not None:
        values["limit"] = limit
    return ListingCursor("author_stories", owner, values)
