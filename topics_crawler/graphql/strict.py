"""Strict reading of a GraphQL answer, shared by the validators of undocumented operations
(:mod:`~topics_crawler.graphql.response` for tag archive pages,
:mod:`~topics_crawler.graphql.responses_reader` for post responses).

An answer is decoded, the first result of its batch taken, its ``errors`` turned into a
failure, and every member a validator needs is read through the state reader's
:class:`~topics_crawler.pages.state.Node` (references followed, nothing indexed raw):
a member that is missing, null or of the wrong type raises :class:`ShapeError` naming
its path and type, which the validator returns as its :class:`ReadFailure` — never a
``KeyError`` or ``TypeError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from topics_crawler.pages.state import Node, State, StateError, kind_of, parse_json_payload

_MAX_MESSAGES = 3
_EXPECTED = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}


@dataclass(frozen=True)
class ReadFailure:
    """Why an answer cannot be used: ``reason`` (a stats key) and ``detail`` (log text)."""

    reason: str
    detail: str


class ShapeError(Exception):
    """The first problem found in an answer (``reason``: a stats key)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def first_result(body: bytes | str) -> Node:
    """The first result of a batch answer (``[{"data": …}]``); ``not_json``,
    ``not_a_batch``, ``graphql_errors`` or ``wrong_type`` (``errors`` not an array)."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        decoded = parse_json_payload(text)
    except StateError as exc:
        raise ShapeError("not_json", f"response is not JSON: {exc}") from None
    state = State(references={})
    answer = Node(state, {"answer": decoded}, "answer")
    if isinstance(decoded, dict):  # a lone result: the endpoint refused the whole batch
        _raise_for_errors(Node(state, decoded))
    results = answer.list("answer") if isinstance(decoded, list) else []
    if not results:
        raise ShapeError("not_a_batch", f"expected a JSON array of results, got {kind_of(decoded)}")
    if not isinstance(results[0], dict):
        raise ShapeError("not_a_batch", f"batch result [0] is {kind_of(results[0])}, not an object")
    result = Node(state, results[0])
    _raise_for_errors(result)
    return result


def _raise_for_errors(result: Node) -> None:
    errors = result.value("errors")
    if errors is None or errors == []:
        return
    if not isinstance(errors, list):
        raise ShapeError("wrong_type", f"errors is {kind_of(errors)}, not an array")
    messages = [_error_message(result.state, e) for e in result.list("errors")[:_MAX_MESSAGES]]
    more = f" (+{len(errors) - _MAX_MESSAGES} more)" if len(errors) > _MAX_MESSAGES else ""
    raise ShapeError("graphql_errors", "endpoint answered errors: " + "; ".join(messages) + more)


def _error_message(state: State, error: Any) -> str:
    message = Node(state, error).str("message") if isinstance(error, dict) else None
    return message.strip()[:200] if message and message.strip() else repr(error)


def member(node: Node, name: str, expected: type, where: str) -> Any:
    """The value of a required member: ``missing_field`` when absent or null,
    ``wrong_type`` when not ``expected`` (booleans count only as booleans)."""
    if not node.has(name):
        raise ShapeError("missing_field", f"{where}{name} is missing")
    value = node.value(name)
    if value is None:
        raise ShapeError("missing_field", f"{where}{name} is null")
    if not isinstance(value, expected) or (expected is not bool and isinstance(value, bool)):
        raise ShapeError(
            "wrong_type", f"{where}{name} is {kind_of(value)}, not {_EXPECTED[expected]}"
        )
    return value


def member_node(node: Node, name: str, where: str) -> Node:
    """A required object member, as a node (see :func:`member`)."""
    return Node(node.state, member(node, name, dict, where))


def member_list(node: Node, name: str, where: str) -> list[Any]:
    """A required array member, its elements with references followed (see :func:`member`)."""
    member(node, name, list, where)
    return node.list(name)


def optional_node(node: Node, name: str, where: str) -> Node | None:
    """An object member that may be absent or null (None); any other type is ``wrong_type``."""
    value = node.value(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ShapeError("wrong_type", f"{where}{name} is {kind_of(value)}, not an object")
    return Node(node.state, value)


def wrong_typename(node: Node, expected: str) -> str | None:
    """The node's ``__typename`` when it states another one than ``expected``, else None
    (an answer that selects no ``__typename`` is taken as ``expected``)."""
    if not node.has("__typename"):
        return None
    typename = node.value("__typename")
    return None if typename == expected else str(typename)
