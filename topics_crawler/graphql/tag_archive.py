"""The ``TagArchiveFeedQuery`` operation: query text, variables and request body, in one place.

Medium's web client pages a tag's archive (``/tag/<slug>/archive``) with this
operation, POSTed as a JSON **array** of operations to ``/_/graphql`` with the
header ``graphql-operation: TagArchiveFeedQuery``::

    tagFromSlug(tagSlug) { sortedFeed: posts(timeRange, sortOrder, first, after) {
        edges { cursor node { ...Post } } pageInfo { hasNextPage endCursor } } }

``timeRange`` is ``{"kind": "ALL_TIME"}``, ``{"kind": "IN_YEAR", "inYear": {"year": Y}}``
or ``{"kind": "IN_MONTH", "inMonth": {"year": Y, "month": M}}``; ``sortOrder`` is
``NEWEST`` or ``MOST_READ``; ``first`` is at most 100; the next page passes the
previous ``pageInfo.endCursor`` as ``after`` (``""`` on the first page, as the
web client sends it). The variable shapes are those of requests published in
public scrapers; no response body was available to verify (see STRUCTURE.md),
so :mod:`topics_crawler.graphql.tag_archive_reader` checks every response strictly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from topics_crawler.urls import MEDIUM_ROOT

OPERATION_NAME = "TagArchiveFeedQuery"
GRAPHQL_URL = f"{MEDIUM_ROOT}/_/graphql"
#: The largest ``first`` the endpoint accepts.
MAX_PAGE_SIZE = 100
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
