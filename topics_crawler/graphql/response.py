"""Strict reading of one ``TagArchiveFeedQuery`` response: the page, or why it cannot be used.

The endpoint is not documented and no saved response exists, so nothing is
taken on trust: every level of ``[0].data.tagFromSlug.sortedFeed`` is checked
for presence and type, every edge must carry a cursor and a ``Post`` node, and
a cursor the crawl has already seen (a server answering the same page again
would page forever) is refused. :func:`read_archive_response` never raises:
it returns an :class:`ArchivePage` or an :class:`ArchiveFailure` whose
``reason`` is a short stats key and ``detail`` a sentence for the log.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from topics_crawler.graphql.tag_archive import FEED_ALIAS
from topics_crawler.pages._state import StateError, parse_json_payload

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
#: Node fields without which an edge cannot become a story (name → expected type).
REQUIRED_NODE_FIELDS: dict[str, type] = {"id": str, "mediumUrl": str}
_MAX_MESSAGES = 3


@dataclass(frozen=True)
class ArchivePage:
    """One valid page of a tag archive: its ``Post`` nodes in order and where to go next."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    cursors: list[str] = field(default_factory=list)
    has_next_page: bool = False
    end_cursor: str | None = None


@dataclass(frozen=True)
class ArchiveFailure:
    """Why a response cannot be used: ``reason`` (stats key) and ``detail`` (log text)."""

    reason: FailureReason
    detail: str


class _ShapeError(Exception):
    def __init__(self, reason: FailureReason, detail: str) -> None:
        super().__init__(detail)
        self.failure = ArchiveFailure(reason, detail)


def read_archive_response(
    body: bytes | str, seen_cursors: Collection[str] = ()
) -> ArchivePage | ArchiveFailure:
    """The page in a response body, or the first problem found in it.

    ``seen_cursors`` are the cursors of the pages already read for the same
    listing; any of them coming back is a ``repeated_cursor`` failure.
    """
    try:
        feed = _feed(_first_result(_decode(body)))
        page = _page(feed)
        _check_cursors(page, seen_cursors)
    except _ShapeError as problem:
        return problem.failure
    return page


def _decode(body: bytes | str) -> Any:
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        return parse_json_payload(text)
    except StateError as exc:
        raise _ShapeError("not_json", f"response is not JSON: {exc}") from None


def _first_result(batch: Any) -> dict[str, Any]:
    if isinstance(batch, dict) and "errors" in batch:
        _raise_for_errors(batch)
    if not isinstance(batch, list) or not batch:
        raise _ShapeError("not_a_batch", f"expected a JSON array of results, got {_kind(batch)}")
    result = batch[0]
    if not isinstance(result, dict):
        raise _ShapeError("not_a_batch", f"batch result [0] is {_kind(result)}, not an object")
    _raise_for_errors(result)
    return result


def _raise_for_errors(result: dict[str, Any]) -> None:
    errors = result.get("errors")
    if errors is None or errors == []:
        return
    if not isinstance(errors, list):
        raise _ShapeError("wrong_type", f"errors is {_kind(errors)}, not an array")
    messages = [_error_message(error) for error in errors[:_MAX_MESSAGES]]
    more = f" (+{len(errors) - _MAX_MESSAGES} more)" if len(errors) > _MAX_MESSAGES else ""
    raise _ShapeError("graphql_errors", "endpoint answered errors: " + "; ".join(messages) + more)


def _error_message(error: Any) -> str:
    message = error.get("message") if isinstance(error, dict) else None
    return message.strip()[:200] if isinstance(message, str) and message.strip() else repr(error)


def _feed(result: dict[str, Any]) -> dict[str, Any]:
    data = _member(result, "data", dict, "")
    if "tagFromSlug" not in data:
        raise _ShapeError("missing_field", "data.tagFromSlug is missing")
    if data["tagFromSlug"] is None:
        raise _ShapeError("tag_not_found", "data.tagFromSlug is null (no such tag)")
    tag = _member(data, "tagFromSlug", dict, "data.")
    return _member(tag, FEED_ALIAS, dict, "data.tagFromSlug.")


def _page(feed: dict[str, Any]) -> ArchivePage:
    where = f"data.tagFromSlug.{FEED_ALIAS}."
    edges = _member(feed, "edges", list, where)
    page_info = _member(feed, "pageInfo", dict, where)
    has_next = _member(page_info, "hasNextPage", bool, where + "pageInfo.")
    end_cursor = page_info.get("endCursor")
    if end_cursor is not None and not isinstance(end_cursor, str):
        raise _ShapeError("wrong_type", f"{where}pageInfo.endCursor is {_kind(end_cursor)}")
    if has_next and not end_cursor:
        raise _ShapeError("missing_field", f"{where}pageInfo.endCursor is empty but hasNextPage")
    if has_next and not edges:
        raise _ShapeError("empty_page", "no edges on a page that says hasNextPage")
    nodes, cursors = [], []
    for index, edge in enumerate(edges):
        node, cursor = _edge(edge, f"{where}edges[{index}]")
        nodes.append(node)
        cursors.append(cursor)
    return ArchivePage(nodes, cursors, has_next, end_cursor or None)


def _edge(edge: Any, where: str) -> tuple[dict[str, Any], str]:
    if edge is None:
        raise _ShapeError("null_node", f"{where} is null")
    if not isinstance(edge, dict):
        raise _ShapeError("wrong_type", f"{where} is {_kind(edge)}, not an object")
    cursor = _member(edge, "cursor", str, where + ".")
    if "node" in edge and edge["node"] is None:
        raise _ShapeError("null_node", f"{where}.node is null")
    node = _member(edge, "node", dict, where + ".")
    if node.get("__typename", "Post") != "Post":
        raise _ShapeError("wrong_type", f"{where}.node is a {node['__typename']}, not a Post")
    for name, expected in REQUIRED_NODE_FIELDS.items():
        value = _member(node, name, expected, where + ".node.")
        if not value:
            raise _ShapeError("missing_field", f"{where}.node.{name} is empty")
    return node, cursor


def _check_cursors(page: ArchivePage, seen: Collection[str]) -> None:
    earlier = set(seen)
    counts = Counter(page.cursors)
    repeated = [c for c in page.cursors if counts[c] > 1 or c in earlier]
    if page.end_cursor is not None and page.end_cursor in earlier:
        repeated.append(page.end_cursor)
    if repeated:
        raise _ShapeError("repeated_cursor", f"cursor {repeated[0][:40]!r} came back (paging loop)")


def _member(container: dict[str, Any], name: str, expected: type, where: str) -> Any:
    if name not in container:
        raise _ShapeError("missing_field", f"{where}{name} is missing")
    value = container[name]
    if value is None:
        raise _ShapeError("missing_field", f"{where}{name} is null")
    if not isinstance(value, expected) or (expected is not bool and isinstance(value, bool)):
        raise _ShapeError(
            "wrong_type", f"{where}{name} is {_kind(value)}, not {_TYPE_NAMES[expected]}"
        )
    return value


_TYPE_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}


def _kind(value: Any) -> str:
    """``an object``, ``an array``, ``null``… for messages."""
    if value is None:
        return "null"
    return _TYPE_NAMES.get(type(value), f"a {type(value).__name__}")
