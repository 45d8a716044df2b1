"""A GraphQL answer made of ``errors`` is drift, not a transient fault.

Medium validates every operation against its schema before running it; an answer whose
``errors`` say so (``Cannot query field…``, ``Variable '$limit' of type 'Int!' used in position
expecting type 'PaginationLimit'``) comes back the same on every retry, for every page, until
the operation changes. So it is never retried or shrugged off: the pager that met it calls
:func:`record_drift`, which counts it per operation, keeps the first message, and gives the one
plain line the log, ``failures.jsonl`` and the crawl's health verdict
(:mod:`topics_crawler.extensions.health`) all carry.

Stats: ``graphql/drift/<operation>`` (answers), ``graphql/drift/<operation>/message`` (the
first one's first message).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from scrapy.statscollectors import StatsCollector

from topics_crawler.graphql.strict import ReadFailure

#: The ``reason`` of a failure that is drift.
DRIFT_REASON = "graphql_errors"
#: HTTP statuses whose body is still a GraphQL answer to read: a server refuses an operation
#: that fails validation with 400 and its ``errors`` (GraphQL requests let them through).
GRAPHQL_ERROR_STATUSES = [400]
DRIFT_PREFIX = "graphql/drift/"
MESSAGE_SUFFIX = "/message"


def is_drift(failure: ReadFailure) -> bool:
    """True for an answer the endpoint refused with ``errors``."""
    return failure.reason == DRIFT_REASON


def drift_line(operation: str, message: str) -> str:
    """The one plain line naming the operation and Medium's first message."""
    return f"Medium refused the GraphQL operation {operation}: {message}"


def record_drift(stats: StatsCollector, operation: str, failure: ReadFailure) -> str:
    """Count one drifted answer of ``operation``, keep its first message (the first answer's
    only), and return the plain line (:func:`drift_line`) for the log and ``failures.jsonl``."""
    message = failure.messages[0] if failure.messages else failure.detail
    stats.inc_value(f"{DRIFT_PREFIX}{operation}")
    key = f"{DRIFT_PREFIX}{operation}{MESSAGE_SUFFIX}"
    if stats.get_value(key) is None:
        stats.set_value(key, message)
    return drift_line(operation, message)


def failure_detail(stats: StatsCollector, operation: str, failure: ReadFailure) -> str:
    """The sentence to log and report for ``failure`` of ``operation``: the drift line (and
    the drift recorded) for ``errors``, else the failure's own detail."""
    return record_drift(stats, operation, failure) if is_drift(failure) else failure.detail


def drifted_operations(stats: Mapping[str, Any]) -> Iterator[tuple[str, int, str]]:
    """``(operation, answers, first message)`` of every operation that drifted, by name."""
    for key in sorted(stats):
        if not key.startswith(DRIFT_PREFIX) or key.endswith(MESSAGE_SUFFIX):
            continue
        operation = key[len(DRIFT_PREFIX) :]
        message = str(stats.get(f"{key}{MESSAGE_SUFFIX}") or "")
        yield operation, int(stats[key]), message
