"""Strict reading of a GraphQL answer, shared by the readers of Medium's endpoint.

Medium's GraphQL endpoint is not documented and most of its answers were never seen, so a
reader takes nothing on trust: it walks the answer with :func:`member` (present, of the
expected type), and the first thing wrong raises :class:`ShapeError`, which the reader's
entry point turns into the :class:`ReadFailure` it returns (``reason``: a short stats key;
``detail``: a sentence for the log). An entry point never raises.

    try:
        result = first_result(decode(body))
        user = member(member(result, "data", dict, ""), "userResult", dict, "data.")
    except ShapeError as problem:
        return problem.failure

Used by :mod:`topics_crawler.author_archive`; the tag-archive and responses readers
(:mod:`.response`, :mod:`.responses_reader`) follow the same pattern with their own copies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from topics_crawler.pages.state import StateError, parse_json_payload

#: Error messages quoted in a ``graphql_errors`` detail.
MAX_MESSAGES = 3
T = TypeVar("T")


@dataclass(frozen=True)
class ReadFailure:
    """Why an answer cannot be used: ``reason`` (stats key) and ``detail`` (log text)."""

    reason: str
    detail: str


class ShapeError(Exception):
    """The answer is not what the reader expects; :attr:`failure` says why."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.failure = ReadFailure(reason, detail)


def decode(body: bytes | str) -> Any:
    """The answer's JSON (an XSSI guard stripped); ``not_json`` when it is none."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        return parse_json_payload(text)
    except StateError as exc:
        raise ShapeError("not_json", f"response is not JSON: {exc}") from None


def first_result(batch: Any) -> dict[str, Any]:
    """The one result of a batch of one operation (``not_a_batch``, ``graphql_errors``)."""
    if isinstance(batch, dict) and "errors" in batch:
        raise_for_errors(batch)
    if not isinstance(batch, list) or len(batch) != 1:
        raise ShapeError("not_a_batch", f"expected a JSON array of one result, got {kind(batch)}")
    result = batch[0]
    if not isinstance(result, dict):
        raise ShapeError("not_a_batch", f"batch result [0] is {kind(result)}, not an object")
    raise_for_errors(result)
    return result


def raise_for_errors(result: dict[str, Any]) -> None:
    """``graphql_errors`` (with the first messages) when the result carries errors."""
    errors = result.get("errors")
    if errors is None or errors == []:
        return
    if not isinstance(errors, list):
        raise ShapeError("wrong_type", f"errors is {kind(errors)}, not an array")
    messages = [_message(error) for error in errors[:MAX_MESSAGES]]
    more = f" (+{len(errors) - MAX_MESSAGES} more)" if len(errors) > MAX_MESSAGES else ""
    raise ShapeError("graphql_errors", "endpoint answered errors: " + "; ".join(messages) + more)


def member(parent: dict[str, Any], name: str, expected: type[T], where: str) -> T:
    """``parent[name]``, which must be present (``missing_field``) and an ``expected``
    (``wrong_type``); ``where`` is the path of ``parent`` for the detail (``data.``)."""
    if name not in parent or parent[name] is None:
        raise ShapeError("missing_field", f"{where}{name} is missing")
    value = parent[name]
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise ShapeError("wrong_type", f"{where}{name} is {kind(value)}, not {expected.__name__}")
    return value


def kind(value: Any) -> str:
    """A JSON value's kind for a detail (``null``, ``list``, ``str``…)."""
    return "null" if value is None else type(value).__name__


def _message(error: Any) -> str:
    message = error.get("message") if isinstance(error, dict) else None
    return message.strip()[:200] if isinstance(message, str) and message.strip() else repr(error)
