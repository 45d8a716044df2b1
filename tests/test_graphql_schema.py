"""Every GraphQL operation the crawler can send passes Medium's schema.

Medium validates each operation before running it: a field, argument or variable type it
does not have fails the whole request (``PagingOptions.limit`` is a ``PaginationLimit``, so an
``Int`` variable there is refused every time). The bodies below are built by the same
functions the spider's requests use, in every variant those functions produce, and each
operation in them is checked against ``topics_crawler/site/medium-schema.graphql`` (a copy of
``../shared/medium-schema.graphql``) with graphql-core, query and variables alike.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable, Iterator
from itertools import product
from typing import Any

import pytest

import topics_crawler.graphql
from topics_crawler.graphql import MAX_PAGE_SIZE, SORT_ORDERS, TimeRange, tag_archive_body
from topics_crawler.graphql.author_archive import MAX_LIMIT, next_page_request
from topics_crawler.graphql.post_responses import PAGE_SIZE, responses_body
from topics_crawler.pages import ListingCursor
from topics_crawler.site.schema import SCHEMA_FILE, medium_schema, operation_errors

Variant = tuple[str, bytes]


def tag_archive_bodies() -> Iterator[Variant]:
    """``TagArchiveFeedQuery``: each time range kind, sort order, page size and cursor."""
    ranges = [TimeRange.all_time(), TimeRange.in_year(2024), TimeRange.in_month(2024, 6)]
    for time_range, order, first, after in product(
        ranges, SORT_ORDERS, (1, MAX_PAGE_SIZE, 500), (None, "TkVXRVNUOjIw")
    ):
        label = f"{time_range.label()} {order} first={first} after={after}"
        yield label, tag_archive_body("python", time_range, order, first=first, after=after)


def post_responses_bodies() -> Iterator[Variant]:
    """``PostResponsesQuery``: first and later pages, each page size."""
    for limit, to in product((1, PAGE_SIZE, 100), (None, "cmVzcG9uc2VzOjI1")):
        yield f"limit={limit} to={to}", responses_body("c2a4db010fd3", limit, to)


def author_archive_bodies() -> Iterator[Variant]:
    """``UserArchivePostsQuery`` (the state cursor; the stream cursor is a GET): with and
    without the cursor's own limit, each page size."""
    cursors = [{"from": "L1583417617283", "limit": 10}, {"from": "L1583417617283"}]
    for values, limit in product(cursors, (1, MAX_LIMIT, 1000)):
        cursor = ListingCursor("author_stories", "4e636e2ef813", values)
        request = next_page_request(cursor, "fixture-author-5", limit)
        assert request is not None
        assert request.method == "POST"
        yield f"cursor={values} limit={limit}", request.body


#: Operation name → the bodies the crawler can send with it.
SENT: dict[str, Callable[[], Iterator[Variant]]] = {
    "TagArchiveFeedQuery": tag_archive_bodies,
    "PostResponsesQuery": post_responses_bodies,
    "UserArchivePostsQuery": author_archive_bodies,
}


def every_body() -> Iterator[Any]:
    for name, bodies in SENT.items():
        for label, body in bodies():
            yield pytest.param(name, body, id=f"{name} {label}")


def test_the_schema_is_the_shared_one() -> None:
    """The tests' copy is ``../shared/medium-schema.graphql`` when that is present."""
    shared = SCHEMA_FILE.parents[3] / "shared" / "medium-schema.graphql"
    if not shared.is_file():
        pytest.skip(f"{shared} not found")
    assert SCHEMA_FILE.read_text(encoding="utf-8") == shared.read_text(encoding="utf-8")


def test_every_operation_module_is_checked_here() -> None:
    """A new operation module (one with an ``OPERATION_NAME``) needs its bodies in
    :data:`SENT`, or this test fails."""
    names = set()
    for module in pkgutil.iter_modules(topics_crawler.graphql.__path__):
        loaded = importlib.import_module(f"topics_crawler.graphql.{module.name}")
        if isinstance(getattr(loaded, "OPERATION_NAME", None), str):
            names.add(loaded.OPERATION_NAME)
    assert names == set(SENT)


@pytest.mark.parametrize(("name", "body"), list(every_body()))
def test_operation_passes_medium_schema(name: str, body: bytes) -> None:
    batch = json.loads(body)
    assert isinstance(batch, list)
    assert len(batch) == 1, "the crawler sends one operation per request"
    assert batch[0]["operationName"] == name
    assert operation_errors(batch[0]) == []


def test_a_wrongly_typed_variable_is_refused() -> None:
    """The check is the one a server makes: ``$limit: Int!`` where the schema wants a
    ``PaginationLimit`` is refused with the validator's message."""
    query = (
        'query Q($limit: Int!) { user(username: "a") { '
        "homepagePostsConnection(paging: {limit: $limit}) { posts { id } } } }"
    )
    problems = operation_errors({"operationName": "Q", "query": query, "variables": {"limit": 1}})
    assert problems == [
        "Variable '$limit' of type 'Int!' used in position expecting type 'PaginationLimit'."
    ]
    assert medium_schema().type_map["PaginationLimit"].name == "PaginationLimit"
