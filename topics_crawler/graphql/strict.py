"""Strict reading of a GraphQL answer, shared by the readers of Medium's endpoint.

Medium's GraphQL endpoint is not documented and most of its answers were never seen, so a
reader takes nothing on trust: it walks the answer member by member (present, of the
expected type), and the first thing wrong raises :class:`ShapeError`, which the reader's
entry point turns into the :class:`ReadFailure` it returns (``reason``: a short stats key;
``detail``: a sentence for the log). An entry point never raises.

Every reader walks the answer through the state reader's
:class:`~topics_crawler.pages.state.Node` accessors (references followed, a field found
whatever its arguments, nothing indexed raw): :func:`first_result_node`, then
:func:`required` / :func:`required_node` / :func:`required_list` / :func:`optional_node`
(the tag archive, responses and author archive readers: :mod:`.tag_archive_reader`,
:mod:`.post_responses_reader`, :mod:`topics_crawler.graphql.author_archive`)::

    try:
        data = required_node(first_result_node(body), "data", "")
        tag = required_node(data, "tagFromSlug", "data.")
    except ShapeError as problem:
        return ArchiveFailure(problem.reason, problem.detail, problem.failure.messages)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from topics_crawler.pages.state import Node, State, StateError, kind_of, parse_json_payload
from topics_crawler.pages.state.node import NodeState

#: Error messages quoted in a ``graphql_errors`` detail.
MAX_MESSAGES = 3
_EXPECTED = {
    dict: "an object",
    list: "an array",
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
}


@dataclass(frozen=True)
class ReadFailure:
    """Why an answer cannot be used: ``reason`` (stats key) and ``detail`` (log text);
    ``messages``: the endpoint's own error messages (a ``graphql_errors`` answer), in order."""

    reason: str
    detail: str
    messages: tuple[str, ...] = ()


class ShapeError(Exception):
    """The answer is not what the reader expects; :attr:`failure` says why."""

    def __init__(self, reason: str, detail: str, messages: tuple[str, ...] = ()) -> None:
        super().__init__(detail)
        self.failure = ReadFailure(reason, detail, messages)

    @property
    def reason(self) -> str:
        return self.failure.reason

    @property
    def detail(self) -> str:
        return self.failure.detail


def decode(body: bytes | str) -> Any:
    """The answer's JSON (an XSSI guard stripped); ``not_json`` when it is none."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        return parse_json_payload(text)
    except StateError as exc:
        raise ShapeError("not_json", f"response is not JSON: {exc}") from None


def first_result_node(body: bytes | str) -> Node:
    """The first result of a batch answer (``[{"data": …}]``), as a node: ``not_json``,
    ``not_a_batch``, ``graphql_errors`` or ``wrong_type`` (``errors`` not an array)."""
    decoded = decode(body)
    state = State(references={})
    if isinstance(decoded, dict):  # a lone result: the endpoint refused the whole batch
        _raise_for_errors(Node(state, decoded))
    answer = Node(state, {"answer": decoded}, "answer")
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
    messages = [_message(result.state, e) for e in result.list("errors")]
    quoted = messages[:MAX_MESSAGES]
    more = f" (+{len(errors) - MAX_MESSAGES} more)" if len(errors) > MAX_MESSAGES else ""
    raise ShapeError(
        "graphql_errors", "endpoint answered errors: " + "; ".join(quoted) + more, tuple(messages)
    )


def _message(state: NodeState, error: Any) -> str:
    message = Node(state, error).str("message") if isinstance(error, dict) else None
    return message.strip()[:200] if message and message.strip() else repr(error)


def required(node: Node, name: str, expected: type, where: str) -> Any:
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


def required_node(node: Node, name: str, where: str) -> Node:
    """A required object member, as a node (see :func:`required`)."""
    return Node(node.state, required(node, name, dict, where))


def required_list(node: Node, name: str, where: str) -> list[Any]:
    """A required array member, its elements with references followed (see :func:`required`)."""
    required(node, name, list, where)
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
