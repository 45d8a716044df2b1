"""The local site's ``POST /_/graphql``: paging, sort orders, time ranges and errors."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from topics_crawler.graphql import (
    REQUEST_HEADERS,
    ArchivePage,
    TimeRange,
    read_archive_response,
    tag_archive_body,
    tag_archive_operation,
)
from topics_crawler.site.content import default_site
from topics_crawler.site.graphql import archive_stories, cursor_for, graphql_response
from topics_crawler.site.model import SiteContent
from topics_crawler.site.server import SiteServer

TAG = "distributed-training"
ARCHIVE = 1000


@pytest.fixture(scope="module")
def content() -> SiteContent:
    return default_site().with_archive(TAG, ARCHIVE, seed=3)


def ask(content: SiteContent, payload: Any) -> tuple[int, Any]:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    status, body, headers = graphql_response(content, raw)
    assert headers["Content-Type"].startswith("application/json") or status == 500
    return status, json.loads(body)


def walk(content: SiteContent, time_range: TimeRange, order: str, first: int = 100) -> list[str]:
    """Story ids of a whole listing, page by page through the cursors."""
    ids: list[str] = []
    after = None
    for _ in range(100):
        body = tag_archive_body(TAG, time_range, order, first=first, after=after)  # type: ignore[arg-type]
        page = read_archive_response(graphql_response(content, body)[1])
        assert isinstance(page, ArchivePage), page
        assert len(page.nodes) <= first
        ids += [node["id"] for node in page.nodes]
        if not page.has_next_page:
            return ids
        after = page.end_cursor
    raise AssertionError("listing did not end")


def test_newest_pages_every_tagged_story_once_newest_first(content: SiteContent) -> None:
    ids = walk(content, TimeRange.all_time(), "NEWEST")
    tagged = [s for s in content.stories.values() if any(t.slug == TAG for t in s.tags)]
    assert len(tagged) > ARCHIVE
    assert sorted(ids) == sorted(s.id for s in tagged)
    dates = [content.stories[i].published_at for i in ids]
    assert dates == sorted(dates, reverse=True)


def test_most_read_is_by_claps(content: SiteContent) -> None:
    ids = walk(content, TimeRange.all_time(), "MOST_READ", first=37)
    claps = [content.stories[i].claps for i in ids]
    assert claps == sorted(claps, reverse=True)
    assert len(ids) == len(set(ids))


def test_time_ranges_filter_by_published_month_and_year(content: SiteContent) -> None:
    june = walk(content, TimeRange.in_month(2024, 6), "NEWEST")
    assert june
    assert {
        (content.stories[i].published_at.year, content.stories[i].published_at.month) for i in june
    } == {(2024, 6)}
    year = walk(content, TimeRange.in_year(2024), "NEWEST")
    assert set(june) < set(year)
    assert {content.stories[i].published_at.year for i in year} == {2024}
    assert walk(content, TimeRange.in_year(2013), "NEWEST") == []


def test_cursor_is_opaque_and_bound_to_its_sort_order(content: SiteContent) -> None:
    newest = archive_stories(content, TAG, {"kind": "ALL_TIME"}, "NEWEST")
    operation = tag_archive_operation(
        TAG, TimeRange.all_time(), "NEWEST", first=5, after=cursor_for("NEWEST", 10)
    )
    status, batch = ask(content, [operation])
    assert status == 200
    edges = batch[0]["data"]["tagFromSlug"]["sortedFeed"]["edges"]
    assert [e["node"]["id"] for e in edges] == [s.id for s in newest[10:15]]
    assert "NEWEST" not in edges[0]["cursor"]  # base64, not readable
    wrong = tag_archive_operation(
        TAG, TimeRange.all_time(), "MOST_READ", after=cursor_for("NEWEST", 10)
    )
    assert "does not belong" in ask(content, [wrong])[1][0]["errors"][0]["message"]


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"first": 0}, '"$first" must be 1 or more'),
        ({"timeRange": {"kind": "IN_MONTH", "inMonth": {"year": 2024, "month": 13}}}, "month"),
        ({"after": "!!not-a-cursor!!"}, "Invalid cursor"),
        ({"tagSlug": ""}, '"$tagSlug"'),
    ],
)
def test_bad_values_the_schema_allows_answer_graphql_errors_with_200(
    content: SiteContent, variables: dict[str, Any], message: str
) -> None:
    operation = tag_archive_operation(TAG, TimeRange.all_time(), "NEWEST")
    operation["variables"].update(variables)
    status, batch = ask(content, [operation])
    assert status == 200
    assert "data" not in batch[0]
    assert message in batch[0]["errors"][0]["message"]


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        (
            {"sortOrder": "OLDEST"},
            "Variable '$sortOrder' has invalid value: Value 'OLDEST' does not exist in "
            "'TagPostsSortOrder' enum.",
        ),
        (
            {"timeRange": {"kind": "IN_WEEK"}},
            "Variable '$timeRange' has invalid value at .kind: Value 'IN_WEEK' does not exist",
        ),
        ({"first": "20"}, "Variable '$first' has invalid value: Int cannot represent non-integer"),
        ({"first": None}, "Variable '$first' has invalid value: Expected value of non-null type"),
    ],
)
def test_values_against_the_schema_are_refused_with_400(
    content: SiteContent, variables: dict[str, Any], message: str
) -> None:
    operation = tag_archive_operation(TAG, TimeRange.all_time(), "NEWEST")
    operation["variables"].update(variables)
    status, batch = ask(content, [operation])
    assert status == 400
    assert "data" not in batch[0]
    assert batch[0]["errors"][0]["message"].startswith(message)


def test_an_operation_off_the_schema_is_refused_with_400_and_runs_nothing(
    content: SiteContent,
) -> None:
    """The author archive as it was sent before: ``$limit: Int!`` where the schema has a
    ``PaginationLimit``; in a batch, the valid operation beside it is not run either."""
    bad = {
        "operationName": "UserArchivePostsQuery",
        "variables": {"username": "varuntej", "from": "L1700000000000", "limit": 10},
        "query": "query UserArchivePostsQuery($username: ID!, $from: String, $limit: Int!) {"
        " userResult(username: $username) { ... on User { homepagePostsConnection("
        "paging: {from: $from, limit: $limit}) { posts { id } } } } }",
    }
    good = tag_archive_operation(TAG, TimeRange.all_time(), "NEWEST", first=2)
    status, batch = ask(content, [good, bad])
    assert status == 400
    assert batch[0] == {"errors": []}
    assert batch[1] == {
        "errors": [
            {
                "message": "Variable '$limit' of type 'Int!' used in position expecting type "
                "'PaginationLimit'."
            }
        ]
    }
    status, single = ask(content, bad)
    assert status == 400
    assert single["errors"][0]["message"].startswith("Variable '$limit' of type 'Int!'")


@pytest.mark.parametrize("first", [20, 21, 100, 5000])
def test_first_is_capped_at_20_silently(content: SiteContent, first: int) -> None:
    """Medium has answered at most 20 edges since 2023-11, whatever ``first`` asked, with
    no error and the cursor after the 20th."""
    operation = tag_archive_operation(TAG, TimeRange.all_time(), "NEWEST")
    operation["variables"]["first"] = first
    status, batch = ask(content, [operation])
    assert status == 200
    feed = batch[0]["data"]["tagFromSlug"]["sortedFeed"]
    assert len(feed["edges"]) == 20
    assert feed["pageInfo"] == {
        "__typename": "PageInfo",
        "hasNextPage": True,
        "endCursor": cursor_for("NEWEST", 20),
    }


def test_unknown_operation_and_unknown_tag(content: SiteContent) -> None:
    other = 'query PostViewerEdgeContentQuery { post(id: "ae81651e4034") { id } }'
    status, batch = ask(content, [{"operationName": "PostViewerEdgeContentQuery", "query": other}])
    assert status == 200
    assert "Unknown operation" in batch[0]["errors"][0]["message"]
    missing = tag_archive_operation("no-such-tag", TimeRange.all_time(), "NEWEST")
    assert ask(content, [missing])[1] == [{"data": {"tagFromSlug": None}}]


@pytest.mark.parametrize("body", [b"{not json", b"\xff\xfe", b"[]", b"42"])
def test_unparseable_bodies_are_400(content: SiteContent, body: bytes) -> None:
    status, answer = ask(content, body)
    assert status == 400
    assert answer["errors"]


def test_a_batch_of_two_gets_two_results(content: SiteContent) -> None:
    operations = [
        tag_archive_operation(TAG, TimeRange.all_time(), "NEWEST", first=2),
        tag_archive_operation(TAG, TimeRange.all_time(), "MOST_READ", first=2),
    ]
    status, batch = ask(content, operations)
    assert status == 200
    assert len(batch) == 2
    assert batch[0] != batch[1]


@pytest.fixture
def server(content: SiteContent) -> Iterator[SiteServer]:
    with SiteServer(content) as site:
        yield site


def post(server: SiteServer, path: str, body: bytes) -> tuple[int, bytes]:
    request = urllib.request.Request(
        server.url(path), data=body, headers=REQUEST_HEADERS, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_served_over_http_post_and_logged(server: SiteServer) -> None:
    status, body = post(server, "/_/graphql", tag_archive_body(TAG, TimeRange.all_time(), "NEWEST"))
    assert status == 200
    page = read_archive_response(body)
    assert isinstance(page, ArchivePage)
    assert len(page.nodes) == 20
    assert post(server, "/_/graphql", b"nope")[0] == 400
    assert post(server, "/tag/distributed-training", b"{}")[0] == 405
    assert server.count("/_/graphql", method="POST") == 2


def test_archive_stories_are_served_as_story_pages(
    server: SiteServer, content: SiteContent
) -> None:
    story = archive_stories(content, TAG, {"kind": "ALL_TIME"}, "NEWEST")[-1]
    with urllib.request.urlopen(server.url(content.story_path(story)), timeout=10) as response:
        assert response.status == 200
        assert story.title.encode() in response.read()


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("errors", "graphql_errors"),
        ("null_node", "null_node"),
        ("missing_page_info", "missing_field"),
        ("empty_page", "empty_page"),
    ],
)
def test_faults_give_the_matching_failure(fault: str, reason: str) -> None:
    site = default_site().with_archive(TAG, 30)
    site.graphql_fault = fault
    body = tag_archive_body(TAG, TimeRange.all_time(), "NEWEST", first=10)
    failure = read_archive_response(graphql_response(site, body)[1])
    assert getattr(failure, "reason", None) == reason


def test_repeat_cursor_fault_answers_the_first_page_again() -> None:
    site = default_site().with_archive(TAG, 30)
    site.graphql_fault = "repeat_cursor"
    first = read_archive_response(
        graphql_response(site, tag_archive_body(TAG, TimeRange.all_time(), "NEWEST", first=10))[1]
    )
    assert isinstance(first, ArchivePage)
    body = tag_archive_body(TAG, TimeRange.all_time(), "NEWEST", first=10, after=first.end_cursor)
    again = read_archive_response(graphql_response(site, body)[1], seen_cursors=first.cursors)
    assert getattr(again, "reason", None) == "repeated_cursor"
