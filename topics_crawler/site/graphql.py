"""``POST /_/graphql`` of the local site: Medium's GraphQL endpoint over the content.

The body is a JSON array of operations (a single object is answered with a single object,
as GraphQL servers do). Every operation is first validated the way Medium validates it,
against its schema (:mod:`topics_crawler.site.schema`: query, variable types and values); a batch
holding an invalid one is answered **HTTP 400** with ``errors`` carrying the validator's
messages, and nothing runs. Valid operations are answered by name:

* ``TagArchiveFeedQuery`` here: a tag's archive feed;
* ``PostResponsesQuery`` by :mod:`topics_crawler.site.threads`;
* ``UserArchivePostsQuery`` by :mod:`topics_crawler.site.author_archive`.

``TagArchiveFeedQuery``:

* Stories of a tag: every story carrying it; ``timeRange`` keeps those
  published in the year / month (UTC); ``NEWEST`` sorts by publication time,
  ``MOST_READ`` by claps (then newest first), ties by id.
* **At most 20 edges a page, whatever ``first`` asks for, silently** — as Medium has
  answered since 2023-11 (``STRUCTURE.md``); ``first`` below 1 is an error.
* Cursors are opaque: base64 of ``<sortOrder>:<offset>`` (the offset after the
  edge); ``after`` must be a cursor of the same sort order.
* Bad values the schema cannot see (a month 13, a foreign cursor) give GraphQL errors
  with HTTP 200 (``{"errors": [...]}`` in the result, as Medium answers); a body that is
  not JSON gives HTTP 400.
* ``SiteContent.schema_drift`` takes fields out of the schema (``{"Post.mediumUrl"}``): the
  operations that select them are refused as Medium refuses them (the drift alarm's case);
* ``SiteContent.graphql_refused`` answers every POST with 403 (what one datacentre address
  got in 2026-09 while pages were served); ``SiteContent.graphql_fault`` makes the endpoint
  misbehave for tests, one of :data:`FAULTS`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

from topics_crawler.site.author_archive import OPERATION as AUTHOR_ARCHIVE_OPERATION
from topics_crawler.site.author_archive import graphql_answer as author_archive_answer
from topics_crawler.site.entities import SiteStory
from topics_crawler.site.graphql_posts import post_node
from topics_crawler.site.model import SiteContent
from topics_crawler.site.schema import operation_errors
from topics_crawler.site.threads import OPERATION as RESPONSES_OPERATION
from topics_crawler.site.threads import responses_answer

JSON = "application/json; charset=utf-8"
OPERATION = "TagArchiveFeedQuery"
#: Edges a page holds at most, whatever ``first`` asks for (Medium since 2023-11).
PAGE_CAP = 20
SORT_ORDERS = ("NEWEST", "MOST_READ")
#: Misbehaviours selectable with ``content.graphql_fault``.
FAULTS = (
    "errors",  # every operation answers {"errors": [...]} (HTTP 200)
    "repeat_cursor",  # every page answers the first page again (same cursors, hasNextPage)
    "null_node",  # the second edge of every page has "node": null
    "missing_page_info",  # the connection has no pageInfo
    "empty_page",  # no edges, hasNextPage true
    "http_500",  # HTTP 500 with an HTML body
)

Result = dict[str, Any]


class OperationError(Exception):
    """Bad input to one operation: becomes a GraphQL error of that result."""


#: What one datacentre address got for every ``POST /_/graphql`` in 2026-09 (pages served).
REFUSED_BODY = b"<html><head><title>403 Forbidden</title></head><body>Forbidden</body></html>"


def graphql_response(content: SiteContent, body: bytes) -> tuple[int, bytes, dict[str, str]]:
    """``(status, body, headers)`` for a POST body."""
    if content.graphql_refused:
        return 403, REFUSED_BODY, {"Content-Type": "text/html; charset=utf-8"}
    fault = content.graphql_fault
    if fault == "http_500":
        return 500, b"<html><body>Internal error</body></html>", {"Content-Type": "text/html"}
    try:
        request = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return _json(400, {"errors": [{"message": f"Unparseable request body: {exc}"}]})
    batch = [request] if isinstance(request, dict) else request
    if not isinstance(batch, list) or not batch:
        return _json(
            400, {"errors": [{"message": "Body must be an operation or a non-empty array"}]}
        )
    dropped = frozenset(content.schema_drift)
    problems = [operation_errors(operation, dropped) for operation in batch]
    if any(problems):  # refused before anything runs, as a GraphQL server does
        results = [{"errors": [{"message": m} for m in found]} for found in problems]
        return _json(400, results[0] if isinstance(request, dict) else results)
    results = [_answer(content, operation) for operation in batch]
    return _json(200, results[0] if isinstance(request, dict) else results)


def cursor_for(sort_order: str, offset: int) -> str:
    """The opaque cursor after ``offset`` stories of a ``sort_order`` listing."""
    return base64.urlsafe_b64encode(f"{sort_order}:{offset}".encode()).decode()


def archive_stories(
    content: SiteContent, tag: str, time_range: Any, sort_order: str
) -> list[SiteStory]:
    """Stories of ``tag`` in ``time_range`` in ``sort_order`` (what the listing pages)."""
    keep = _time_filter(time_range)
    stories = [
        s for s in content.stories.values() if any(t.slug == tag for t in s.tags) and keep(s)
    ]
    if sort_order == "MOST_READ":
        return sorted(stories, key=lambda s: (-s.claps, -s.published_at.timestamp(), s.id))
    return sorted(stories, key=lambda s: (-s.published_at.timestamp(), s.id))


def _json(status: int, payload: Any) -> tuple[int, bytes, dict[str, str]]:
    return status, json.dumps(payload).encode("utf-8"), {"Content-Type": JSON}


def _answer(content: SiteContent, operation: dict[str, Any]) -> Result:
    name = operation.get("operationName")
    if name == RESPONSES_OPERATION:
        return responses_answer(content, operation)
    if name == AUTHOR_ARCHIVE_OPERATION:
        return author_archive_answer(content, operation)
    if content.graphql_fault == "errors":
        return {"errors": [{"message": "Internal server error", "path": ["tagFromSlug"]}]}
    try:
        return {"data": _tag_archive(content, operation)}
    except OperationError as exc:
        return {"errors": [{"message": str(exc), "locations": [{"line": 1, "column": 1}]}]}


def _tag_archive(content: SiteContent, operation: Any) -> Result:
    if not isinstance(operation, dict) or operation.get("operationName") != OPERATION:
        name = operation.get("operationName") if isinstance(operation, dict) else None
        raise OperationError(f"Unknown operation {name!r}")
    if "sortedFeed: posts(" not in str(operation.get("query", "")):
        raise OperationError("Query must select sortedFeed: posts(...)")
    variables = operation.get("variables")
    if not isinstance(variables, dict):
        raise OperationError("Variables must be an object")
    tag = variables.get("tagSlug")
    if not isinstance(tag, str) or not tag:
        raise OperationError('Variable "$tagSlug" of required type "String!" was not provided')
    sort_order = variables.get("sortOrder")
    if sort_order not in SORT_ORDERS:
        raise OperationError(f'Variable "$sortOrder" got invalid value {sort_order!r}')
    first = variables.get("first")
    if isinstance(first, bool) or not isinstance(first, int) or first < 1:
        raise OperationError(f'Variable "$first" must be 1 or more, got {first!r}')
    time_range = variables.get("timeRange")
    _time_filter(time_range)  # validates
    offset = _offset(variables.get("after"), str(sort_order))
    if tag not in content.tags:
        return {"tagFromSlug": None}
    stories = archive_stories(content, tag, time_range, str(sort_order))
    return {
        "tagFromSlug": {
            "__typename": "Tag",
            "id": tag,
            "sortedFeed": _connection(
                content, stories, offset, min(first, PAGE_CAP), str(sort_order)
            ),
        }
    }


def _offset(after: Any, sort_order: str) -> int:
    if after in (None, ""):
        return 0
    try:
        decoded = base64.urlsafe_b64decode(str(after).encode()).decode()
        order, _, number = decoded.partition(":")
        offset = int(number)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise OperationError(f"Invalid cursor {after!r}") from None
    if order != sort_order or offset < 0:
        raise OperationError(f"Cursor {after!r} does not belong to this listing")
    return offset


def _time_filter(time_range: Any) -> Callable[[SiteStory], bool]:
    if not isinstance(time_range, dict):
        raise OperationError('Variable "$timeRange" must be an object')
    kind = time_range.get("kind")
    if kind == "ALL_TIME":
        return lambda story: True
    if kind == "IN_YEAR":
        year = _number(time_range.get("inYear"), "year", 1970, 9999)
        return lambda story: story.published_at.year == year
    if kind == "IN_MONTH":
        year = _number(time_range.get("inMonth"), "year", 1970, 9999)
        month = _number(time_range.get("inMonth"), "month", 1, 12)
        return lambda story: (story.published_at.year, story.published_at.month) == (year, month)
    raise OperationError(f"Unknown time range kind {kind!r}")


def _number(container: Any, name: str, low: int, high: int) -> int:
    value = container.get(name) if isinstance(container, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise OperationError(f"Time range {name} must be {low} to {high}, got {value!r}")
    return value


def _connection(
    content: SiteContent, stories: list[SiteStory], offset: int, first: int, sort_order: str
) -> Result:
    fault = content.graphql_fault
    start = 0 if fault == "repeat_cursor" else offset
    chunk = [] if fault == "empty_page" else stories[start : start + first]
    edges: list[Result] = [
        {"__typename": "TagPostEdge", "cursor": cursor_for(sort_order, start + i + 1),
         "node": post_node(content, story)}
        for i, story in enumerate(chunk)
    ]  # fmt: skip
    if fault == "null_node" and len(edges) > 1:
        edges[1]["node"] = None
    has_next = fault in ("repeat_cursor", "empty_page") or start + len(chunk) < len(stories)
    connection: Result = {"__typename": "TagPostConnection", "edges": edges}
    if fault != "missing_page_info":
        connection["pageInfo"] = {
            "__typename": "PageInfo",
            "hasNextPage": has_next,
            "endCursor": edges[-1]["cursor"] if edges else None,
        }
        if fault == "empty_page":
            connection["pageInfo"]["endCursor"] = cursor_for(sort_order, offset + first)
    return connection
