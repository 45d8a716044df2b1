"""Medium's GraphQL endpoint (``POST /_/graphql``): one operation per module, each with the
strict reader of its answer.

* :mod:`.tag_archive`: ``TagArchiveFeedQuery`` (a tag's archive feed, deep paging over plain
  HTTP) and the reading of its answer into a page or a failure reason.
* :mod:`.post_responses`: ``PostResponsesQuery`` (a story's responses with their threads).
* :mod:`.author_archive`: ``UserArchivePostsQuery`` and the stream cursor (an author's archive).
* :mod:`.listing`: an archive page's ``Post`` nodes as partial items and links.
* :mod:`.strict`: the strict reader the three share.
"""

from __future__ import annotations

from topics_crawler.graphql.listing import archive_result
from topics_crawler.graphql.tag_archive import (
    GRAPHQL_URL,
    MAX_PAGE_SIZE,
    OPERATION_NAME,
    REQUEST_HEADERS,
    SORT_ORDERS,
    ArchiveFailure,
    ArchivePage,
    SortOrder,
    TimeRange,
    read_archive_response,
    tag_archive_body,
    tag_archive_operation,
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
