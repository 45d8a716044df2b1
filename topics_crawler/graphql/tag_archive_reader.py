"""Strict reading of one ``TagArchiveFeedQuery`` response: the page, or why it cannot be used.

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
from topics_crawler.graphql.tag_archive import FEED_ALIAS
from topics_crawler.pages.state import Node, kind_of

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
        return ArchiveFailure(problem.reason, problem.detail)
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
