"""Medium's GraphQL endpoint (``POST /_/graphql``): the tag archive feed, for deep paging
over plain HTTP.

* :mod:`.tag_archive`: the ``TagArchiveFeedQuery`` operation, variables and body.
* :mod:`.tag_archive_reader`: strict validation of a response into a page or a failure reason.
* :mod:`.listing`: a page's ``Post`` nodes as partial items and links.
"""

from __future__ import annotations

from topics_crawler.graphql.listing import archive_result
from topics_crawler.graphql.tag_archive import (
    GRAPHQL_URL,
    MAX_PAGE_SIZE,
    OPERATION_NAME,
    REQUEST_HEADERS,
    SORT_ORDERS,
    SortOrder,
    TimeRange,
    tag_archive_body,
    tag_archive_operation,
)
from topics_crawler.graphql.tag_archive_reader import (
    ArchiveFailure,
    ArchivePage,
    read_archive_response,
)

__all__ = [
    "GRAPHQL_URL",
    "MAX_PAGE_SIZE",
    "OPERATION_NAME",
    "REQUEST_HEADERS",
    "SORT_ORDERS",
    "ArchiveFailure",
    "ArchivePage",
    "SortOrder",
    "TimeRange",
    "archive_result",
    "read_archive_response",
    "tag_archive_body",
    "tag_archive_operation",
]
