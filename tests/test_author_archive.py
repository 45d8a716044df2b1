"""Author archive pages: the next-page request of both cursor forms (built in one place),
from the real captures' cursors and from variants, and the strict GraphQL reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.type_swaps import type_swapped
from topics_crawler.graphql.author_archive import (
    OPERATION_NAME,
    ArchiveReadFailure,
    UserPostsPage,
    next_page_request,
    read_user_posts,
)
from topics_crawler.pages import ListingCursor, parse_page

AUSTIN = "author_austinlchurch__lstsk-medium-api-2022-prettified.html"
MIKE = "json_author_mikecronin92_latest__mostly-focused-site-2019.json"


def cursor(**values: Any) -> ListingCursor:
    return ListingCursor("author_stories", "u1", values)


def test_a_state_cursor_is_one_graphql_operation_with_its_from() -> None:
    page = next_page_request(cursor(limit=10, **{"from": "L1583417617283"}), "ada", 25)
    assert page is not None
    assert (page.form, page.method, page.url) == ("state", "POST", "https://medium.com/_/graphql")
    (operation,) = json.loads(page.body)
    assert operation["operationName"] == OPERATION_NAME == page.headers["graphql-operation"]
    assert operation["variables"] == {"username": "ada", "from": "L1583417617283", "limit": 10}
    assert "homepagePostsConnection(paging: {from: $from, limit: $limit}" in operation["query"]
    smaller = next_page_request(cursor(limit=10, **{"from": "L1"}), "ada", 4)
    assert smaller is not None
    assert json.loads(smaller.body)[0]["variables"]["limit"] == 4  # what is left of N


def test_a_stream_cursor_is_the_latest_stream_as_json_without_source() -> None:
    values = {"limit": 10, "to": "1531117375068", "source": "latest", "ignoredIds": [], "page": 2}
    path = "https://medium.com/_/api/users/u/profile/stream"
    page = next_page_request(ListingCursor("author_stories", "u", values, path), "Mike", 100)
    assert page is not None
    parts = urlsplit(page.url)
    assert (page.form, page.method, parts.path) == ("stream", "GET", "/@Mike/latest")
    assert parse_qs(parts.query) == {
        "limit": ["10"],
        "to": ["1531117375068"],
        "page": ["2"],
        "format": ["json"],
    }  # fmt: skip  (robots.txt disallows /_/ and source=)
    assert page.cursor_key == "1531117375068"
    assert next_page_request(cursor(limit=10), "x", 5) is None  # neither form


@pytest.mark.real_pages
def test_the_real_captures_cursors_make_both_requests(real_pages: Path) -> None:
    austin = parse_page((real_pages / AUSTIN).read_bytes(), "https://austinlchurch.medium.com/")
    (state_cursor,) = austin.cursors
    page = next_page_request(state_cursor, "austinlchurch", 25)
    assert page is not None
    assert json.loads(page.body)[0]["variables"]["from"] == "L1583417617283"
    url = "https://medium.com/@mikecronin92/latest?format=json"
    mike = parse_page((real_pages / MIKE).read_bytes(), url, kind="json")
    (stream_cursor,) = mike.cursors
    page = next_page_request(stream_cursor, "mikecronin92", 25)
    assert page is not None
    assert parse_qs(urlsplit(page.url).query)["to"] == ["1531117375068"]


def answer(connection: Any, typename: str = "User") -> bytes:
    user = {"__typename": typename, "id": "u1", "homepagePostsConnection": connection}
    return json.dumps([{"data": {"userResult": user}}]).encode()


POST = {"__typename": "Post", "id": "abc123def456", "mediumUrl": "https://medium.com/@a/x-abc1"}


def test_a_valid_page_gives_its_posts_and_next_cursor() -> None:
    page = read_user_posts(
        answer({"posts": [POST], "pagingInfo": {"next": {"from": "L9", "limit": 3}}}), "u1"
    )
    assert isinstance(page, UserPostsPage)
    assert page.nodes == [POST]
    assert page.next_cursor == ListingCursor("author_stories", "u1", {"from": "L9", "limit": 3})
    last = read_user_posts(answer({"posts": [], "pagingInfo": {"next": None}}), "u1")
    assert isinstance(last, UserPostsPage)
    assert last.next_cursor is None


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"<html>", "not_json"),
        (json.dumps({"data": {}}).encode(), "not_a_batch"),
        (json.dumps([{"errors": [{"message": "nope"}]}]).encode(), "graphql_errors"),
        (json.dumps([{"data": {"userResult": None}}]).encode(), "user_not_found"),
        (answer({"posts": []}, typename="UserNotFound"), "user_not_found"),
        (json.dumps([{"data": {"userResult": []}}]).encode(), "wrong_type"),
        (answer(None), "missing_field"),
        (answer({"posts": "unavailable"}), "wrong_type"),
        (answer({"posts": [None]}), "wrong_type"),
        (answer({"posts": [{"id": "abc"}]}), "missing_field"),
        (answer({"posts": [POST], "pagingInfo": {"next": {"to": "9"}}}), "missing_field"),
        (answer({"posts": [POST], "pagingInfo": {"next": {"from": 9}}}), "wrong_type"),
        (answer({"posts": [POST], "pagingInfo": []}), "wrong_type"),
        (answer({"posts": [POST], "pagingInfo": {"next": {"from": "L1"}}}), "repeated_cursor"),
    ],
)
def test_every_bad_answer_has_its_reason(body: bytes, reason: str) -> None:
    page = read_user_posts(body, "u1", seen_cursors={"L1"})
    assert isinstance(page, ArchiveReadFailure)
    assert page.reason == reason


def test_a_field_call_key_and_a_reference_are_read_like_plain_fields() -> None:
    """A variant of the answer: the connection under a field-call key with its arguments,
    the post behind an Apollo-style reference inlined in the answer."""
    connection = {"posts": [POST], "pagingInfo": {"next": {"from": "L9", "limit": 10}}}
    user = {
        "__typename": "User",
        "id": "u1",
        'homepagePostsConnection({"paging":{"from":"L8","limit":10}})': connection,
    }
    page = read_user_posts(json.dumps([{"data": {"userResult": user}}]).encode(), "u1")
    assert isinstance(page, UserPostsPage)
    assert page.nodes == [POST]
    assert page.next_cursor == ListingCursor("author_stories", "u1", {"from": "L9", "limit": 10})


def test_an_answer_with_any_value_swapped_never_raises() -> None:
    body = answer({"posts": [POST, POST], "pagingInfo": {"next": {"from": "L9", "limit": 3}}})
    outcomes = [read_user_posts(swapped, "u1") for swapped in type_swapped(json.loads(body), 400)]
    assert all(isinstance(o, UserPostsPage | ArchiveReadFailure) for o in outcomes)
    reasons = {o.reason for o in outcomes if isinstance(o, ArchiveReadFailure)}
    assert {"missing_field", "wrong_type", "not_a_batch", "user_not_found"} <= reasons
