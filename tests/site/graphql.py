"""``POST /_/graphql`` of the local site: Medium's ``TagArchiveFeedQuery`` over the content.

The body is a JSON array of operations (a single object is answered with a
single object, as GraphQL servers do). ``TagArchiveFeedQuery`` is answered here,
``PostResponsesQuery`` by :mod:`tests.site.threads`;
the operation is recognised by ``operationName`` (the query text is not parsed,
but it must select the ``sortedFeed: posts(…)`` connection the answer fills).

* Stories of a tag: every story carrying it; ``timeRange`` keeps those
  published in the year / month (UTC); ``NEWEST`` sorts by publication time,
  ``MOST_READ`` by claps (then newest first), ties by id.
* Cursors are opaque: base64 of ``<sortOrder>:<offset>`` (the offset after the
  edge); ``after`` must be a cursor of the same sort order, ``first`` 1..100.
* Bad variables give GraphQL errors with HTTP 200 (``{"errors": [...]}`` in the
  result, as Medium answers); a body that is not JSON gives HTTP 400.
* ``SiteContent.graphql_fault`` makes the endpoint misbehave for tests, one of
  :data:`FAULTS`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

from tests.site.markup import epoch_ms
from tests.site.model import SiteContent, SiteStory
from tests.site.threads import OPERATION as RESPONSES_OPERATION
from tests.site.threads import responses_answer

JSON = "application/json; charset=utf-8"
OPERATION = "TagArchiveFeedQuery"
MAX_FIRST = 100
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


def graphql_response(content: SiteContent, body: bytes) -> tuple[int, bytes, dict[str, str]]:
    """``(status, body, headers)`` for a POST body."""
    fault = content.graphql_fault
    if fault == "http_500":
        return 500, b"<html><body>Internal error</body></html>", {"Content-Type": "text/html"}
    try:
        request = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return _json(400, {"errors": [{"message": f"Unparseable request body: {exc}"}]})
    if isinstance(request, dict):
        return _json(200, _answer(content, request))
    if not isinstance(request, list) or not request:
        return _json(
            400, {"errors": [{"message": "Body must be an operation or a non-empty array"}]}
        )
    return _json(200, [_answer(content, operation) for operation in request])


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


def _answer(content: SiteContent, operation: Any) -> Result:
    if isinstance(operation, dict) and operation.get("operationName") == RESPONSES_OPERATION:
        return responses_answer(content, operation)
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
    if isinstance(first, bool) or not isinstance(first, int) or not 1 <= first <= MAX_FIRST:
        raise OperationError(f'Variable "$first" must be 1 to {MAX_FIRST}, got {first!r}')
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
            "sortedFeed": _connection(content, stories, offset, first, str(sort_order)),
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
