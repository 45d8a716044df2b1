"""The ``TagArchiveFeedQuery`` operation: query text, variables and request body, in one place.

Medium's web client pages a tag's archive (``/tag/<slug>/archive``) with this
operation, POSTed as a JSON **array** of operations to ``/_/graphql`` with the
header ``graphql-operation: TagArchiveFeedQuery``::

    tagFromSlug(tagSlug) { sortedFeed: posts(timeRange, sortOrder, first, after) {
        edges { cursor node { ...Post } } pageInfo { hasNextPage endCursor } } }

``timeRange`` is ``{"kind": "ALL_TIME"}``, ``{"kind": "IN_YEAR", "inYear": {"year": Y}}``
or ``{"kind": "IN_MONTH", "inMonth": {"year": Y, "month": M}}``; ``sortOrder`` is
``NEWEST`` or ``MOST_READ``; ``first`` asks for up to :data:`MAX_PAGE_SIZE` (20): Medium
has answered every request with at most 20 edges since 2023-11, silently, whatever
``first`` asked for (``STRUCTURE.md``, "2026"); the next page passes the
previous ``pageInfo.endCursor`` as ``after`` (``""`` on the first page, as the
web client sends it). The variable shapes are those of requests published in
public scrapers; no response body was available to verify (see STRUCTURE.md),
so :mod:`topics_crawler.graphql.tag_archive` checks every response strictly.

Reading an answer
-----------------

Strict reading of one ``TagArchiveFeedQuery`` response: the page, or why it cannot be used.

The endpoint is not documented and no saved response exists, so nothing is
taken on trust: every level of ``[0].data.tagFromSlug.sortedFeed`` is checked
for presence and type (through the strict reader shared with the responses
validator, :mod:`topics_crawler.graphql.strict`), every edge must carry a cursor
and a ``Post`` node, and a cursor the crawl has already seen (a server answering
the same page again would page forever) is refused. :func:`read_archive_response`
never raises: it returns an :class:`ArchivePage` or an :class:`ArchiveFailure`
whose ``reason`` is a short stats key and ``detail`` a sentence for the log.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from topics_crawler.graphql.strict import (
    ReadFailure,
    ShapeError,
    first_result_node,
    required,
    required_list,
    required_node,
    wrong_typename,
)
from topics_crawler.pages.state import Node, kind_of
from topics_crawler.urls import MEDIUM_ROOT

OPERATION_NAME = "TagArchiveFeedQuery"
GRAPHQL_URL = f"{MEDIUM_ROOT}/_/graphql"
#: Edges Medium answers a page at most (since 2023-11, silently, whatever ``first`` asks).
MAX_PAGE_SIZE = 20
#: The alias the connection is read from (``data.tagFromSlug.sortedFeed``).
FEED_ALIAS = "sortedFeed"
REQUEST_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json",
    "graphql-operation": OPERATION_NAME,
}

SortOrder = Literal["NEWEST", "MOST_READ"]
SORT_ORDERS: tuple[SortOrder, ...] = ("NEWEST", "MOST_READ")
TimeRangeKind = Literal["ALL_TIME", "IN_YEAR", "IN_MONTH"]

#: Post fields of one listing node, as Medium's archive feed asks for them.
POST_FIELDS = """
fragment TagArchivePost on Post {
  id
  title
  mediumUrl
  uniqueSlug
  firstPublishedAt
  latestPublishedAt
  readingTime
  isLocked
  clapCount
  postResponses { count }
  extendedPreviewContent { subtitle isFullContent }
  previewImage { id }
  creator { id name username mediumMemberAt socialStats { followerCount } }
  collection { id name slug domain }
}
"""

QUERY = (
    """
query TagArchiveFeedQuery($tagSlug: String!, $timeRange: TagPostsTimeRange!,
                          $sortOrder: TagPostsSortOrder!, $first: Int!, $after: String) {
  tagFromSlug(tagSlug: $tagSlug) {
    id
    sortedFeed: posts(timeRange: $timeRange, sortOrder: $sortOrder, first: $first, after: $after) {
      edges { cursor node { ...TagArchivePost } }
      pageInfo { hasNextPage endCursor }
    }
  }
}
"""
    + POST_FIELDS
).strip()


@dataclass(frozen=True, order=True)
class TimeRange:
    """A ``TagPostsTimeRange``: all time, one year, or one month of a year."""

    kind: TimeRangeKind = "ALL_TIME"
    year: int | None = None
    month: int | None = None

    def __post_init__(self) -> None:
        needs = {"ALL_TIME": (False, False), "IN_YEAR": (True, False), "IN_MONTH": (True, True)}
        if needs.get(self.kind) != (self.year is not None, self.month is not None):
            raise ValueError(f"time range {self.kind} with year={self.year} month={self.month}")
        if self.month is not None and not 1 <= self.month <= 12:
            raise ValueError(f"month {self.month} is not 1 to 12")

    @classmethod
    def all_time(cls) -> TimeRange:
        return cls("ALL_TIME")

    @classmethod
    def in_year(cls, year: int) -> TimeRange:
        return cls("IN_YEAR", year)

    @classmethod
    def in_month(cls, year: int, month: int) -> TimeRange:
        return cls("IN_MONTH", year, month)

    def variables(self) -> dict[str, Any]:
        """The ``timeRange`` variable as Medium's client sends it."""
        if self.kind == "IN_YEAR":
            return {"kind": "IN_YEAR", "inYear": {"year": self.year}}
        if self.kind == "IN_MONTH":
            return {"kind": "IN_MONTH", "inMonth": {"year": self.year, "month": self.month}}
        return {"kind": "ALL_TIME"}

    def label(self) -> str:
        """``all-time``, ``2024``, ``2024-06`` (logs and stats)."""
        if self.kind == "IN_YEAR":
            return f"{self.year:04d}"
        if self.kind == "IN_MONTH":
            return f"{self.year:04d}-{self.month:02d}"
        return "all-time"


def tag_archive_variables(
    tag: str,
    time_range: TimeRange,
    sort_order: SortOrder,
    first: int = MAX_PAGE_SIZE,
    after: str | None = None,
) -> dict[str, Any]:
    """The variables of one page request; ``first`` is clamped to 1..``MAX_PAGE_SIZE``."""
    if sort_order not in SORT_ORDERS:
        raise ValueError(f"sort order {sort_order!r} is not one of {', '.join(SORT_ORDERS)}")
    return {
        "tagSlug": tag,
        "timeRange": time_range.variables(),
        "sortOrder": sort_order,
        "first": max(1, min(first, MAX_PAGE_SIZE)),
        "after": after or "",
    }


def tag_archive_operation(
    tag: str,
    time_range: TimeRange,
    sort_order: SortOrder,
    first: int = MAX_PAGE_SIZE,
    after: str | None = None,
) -> dict[str, Any]:
    """One operation of the batch: ``{"operationName", "variables", "query"}``."""
    return {
        "operationName": OPERATION_NAME,
        "variables": tag_archive_variables(tag, time_range, sort_order, first, after),
        "query": QUERY,
    }


def tag_archive_body(
    tag: str,
    time_range: TimeRange,
    sort_order: SortOrder,
    first: int = MAX_PAGE_SIZE,
    after: str | None = None,
) -> bytes:
    """The POST body: a JSON array holding the one operation (compact, UTF-8)."""
    operation = tag_archive_operation(tag, time_range, sort_order, first, after)
    return json.dumps([operation], separators=(",", ":"), ensure_ascii=False).encode("utf-8")


FailureReason = Literal[
    "not_json",
    "not_a_batch",
    "graphql_errors",
    "tag_not_found",
    "missing_field",
    "wrong_type",
    "null_node",
    "repeated_cursor",
    "empty_page",
]
"""The ``reason`` values of an :class:`ArchiveFailure`."""
#: Node fields without which an edge cannot become a story (name → expected type).
REQUIRED_NODE_FIELDS: dict[str, type] = {"id": str, "mediumUrl": str}


@dataclass(frozen=True)
class ArchivePage:
    """One valid page of a tag archive: its ``Post`` nodes in order and where to go next."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    cursors: list[str] = field(default_factory=list)
    has_next_page: bool = False
    end_cursor: str | None = None


@dataclass(frozen=True)
class ArchiveFailure(ReadFailure):
    """Why an archive response cannot be used (``reason``: a :data:`FailureReason`)."""


def read_archive_response(
    body: bytes | str, seen_cursors: Collection[str] = ()
) -> ArchivePage | ArchiveFailure:
    """The page in a response body, or the first problem found in it.

    ``seen_cursors`` are the cursors of the pages already read for the same
    listing; any of them coming back is a ``repeated_cursor`` failure.
    """
    try:
        page = _page(_feed(first_result_node(body)))
        _check_cursors(page, seen_cursors)
    except ShapeError as problem:
        return ArchiveFailure(problem.reason, problem.detail, problem.failure.messages)
    return page


def _feed(result: Node) -> Node:
    data = required_node(result, "data", "")
    if not data.has("tagFromSlug"):
        raise ShapeError("missing_field", "data.tagFromSlug is missing")
    if data.value("tagFromSlug") is None:
        raise ShapeError("tag_not_found", "data.tagFromSlug is null (no such tag)")
    tag = required_node(data, "tagFromSlug", "data.")
    return required_node(tag, FEED_ALIAS, "data.tagFromSlug.")


def _page(feed: Node) -> ArchivePage:
    where = f"data.tagFromSlug.{FEED_ALIAS}."
    edges = required_list(feed, "edges", where)
    page_info = required_node(feed, "pageInfo", where)
    has_next = required(page_info, "hasNextPage", bool, where + "pageInfo.")
    end_cursor = page_info.value("endCursor")
    if end_cursor is not None and not isinstance(end_cursor, str):
        raise ShapeError("wrong_type", f"{where}pageInfo.endCursor is {kind_of(end_cursor)}")
    if has_next and not end_cursor:
        raise ShapeError("missing_field", f"{where}pageInfo.endCursor is empty but hasNextPage")
    if has_next and not edges:
        raise ShapeError("empty_page", "no edges on a page that says hasNextPage")
    nodes, cursors = [], []
    for index, edge in enumerate(edges):
        node, cursor = _edge(feed, edge, f"{where}edges[{index}]")
        nodes.append(node.raw)
        cursors.append(cursor)
    return ArchivePage(nodes, cursors, has_next, end_cursor or None)


def _edge(feed: Node, value: Any, where: str) -> tuple[Node, str]:
    if value is None:
        raise ShapeError("null_node", f"{where} is null")
    if not isinstance(value, dict):
        raise ShapeError("wrong_type", f"{where} is {kind_of(value)}, not an object")
    edge = Node(feed.state, value)
    cursor = required(edge, "cursor", str, where + ".")
    if edge.has("node") and edge.value("node") is None:
        raise ShapeError("null_node", f"{where}.node is null")
    node = required_node(edge, "node", where + ".")
    other = wrong_typename(node, "Post")
    if other is not None:
        raise ShapeError("wrong_type", f"{where}.node is a {other}, not a Post")
    for name, expected in REQUIRED_NODE_FIELDS.items():
        if not required(node, name, expected, where + ".node."):
            raise ShapeError("missing_field", f"{where}.node.{name} is empty")
    return node, cursor


def _check_cursors(page: ArchivePage, seen: Collection[str]) -> None:
    earlier = set(seen)
    counts = Counter(page.cursors)
    repeated = [c for c in page.cursors if counts[c] > 1 or c in earlier]
    if page.end_cursor is not None and page.end_cursor in earlier:
        repeated.append(page.end_cursor)
    if repeated:
        raise ShapeError("repeated_cursor", f"cursor {repeated[0][:40]!r} came back (paging loop)")
