"""TagArchiveFeedQuery: query text, variables, body, strict response validation, nodes → items."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from topics_crawler.graphql import (
    GRAPHQL_URL,
    MAX_PAGE_SIZE,
    REQUEST_HEADERS,
    ArchiveFailure,
    ArchivePage,
    TimeRange,
    archive_result,
    read_archive_response,
    tag_archive_body,
    tag_archive_operation,
)
from topics_crawler.graphql.tag_archive import FEED_ALIAS, QUERY
from topics_crawler.items import Author, Publication, Story
from topics_crawler.site.content import default_site
from topics_crawler.site.graphql import graphql_response

TAG = "distributed-training"
SCRAPED_AT = "2026-11-30T12:00:00Z"


def test_query_selects_the_archive_connection_and_post_fields() -> None:
    assert QUERY.startswith("query TagArchiveFeedQuery($tagSlug: String!")
    for declaration in (
        "$timeRange: TagPostsTimeRange!",
        "$sortOrder: TagPostsSortOrder!",
        "$first: Int!",
        "$after: String",
    ):
        assert declaration in QUERY
    assert f"{FEED_ALIAS}: posts(timeRange: $timeRange, sortOrder: $sortOrder" in QUERY
    assert "pageInfo { hasNextPage endCursor }" in QUERY
    assert "edges { cursor node { ...TagArchivePost } }" in QUERY
    assert "fragment TagArchivePost on Post" in QUERY
    assert QUERY.count("{") == QUERY.count("}")


@pytest.mark.parametrize(
    ("time_range", "variable"),
    [
        (TimeRange.all_time(), {"kind": "ALL_TIME"}),
        (TimeRange.in_year(2024), {"kind": "IN_YEAR", "inYear": {"year": 2024}}),
        (
            TimeRange.in_month(2024, 6),
            {"kind": "IN_MONTH", "inMonth": {"year": 2024, "month": 6}},
        ),
    ],
)
def test_time_range_variables(time_range: TimeRange, variable: dict[str, Any]) -> None:
    operation = tag_archive_operation(TAG, time_range, "MOST_READ", first=15, after="abc")
    assert operation["operationName"] == "TagArchiveFeedQuery"
    assert operation["query"] == QUERY
    assert operation["variables"] == {
        "tagSlug": TAG,
        "timeRange": variable,
        "sortOrder": "MOST_READ",
        "first": 15,
        "after": "abc",
    }


def test_body_is_a_batched_array_and_first_is_clamped() -> None:
    body = json.loads(tag_archive_body(TAG, TimeRange.all_time(), "NEWEST", first=500))
    assert isinstance(body, list)
    assert len(body) == 1
    assert body[0]["variables"]["first"] == MAX_PAGE_SIZE == 20  # what Medium answers at most
    assert body[0]["variables"]["after"] == ""  # the first page, as the web client sends it
    assert GRAPHQL_URL == "https://medium.com/_/graphql"
    assert REQUEST_HEADERS["graphql-operation"] == "TagArchiveFeedQuery"


@pytest.mark.parametrize(
    "arguments",
    [
        ("IN_YEAR", None, None),
        ("IN_MONTH", 2024, None),
        ("ALL_TIME", 2024, None),
        ("IN_MONTH", 2024, 13),
    ],
)
def test_bad_time_ranges_are_refused(arguments: tuple[Any, Any, Any]) -> None:
    with pytest.raises(ValueError, match=r"time range|month"):
        TimeRange(*arguments)


def test_unknown_sort_order_is_refused() -> None:
    with pytest.raises(ValueError, match="sort order"):
        tag_archive_operation(TAG, TimeRange.all_time(), "OLDEST")  # type: ignore[arg-type]


# --- response validation ---------------------------------------------------------


@pytest.fixture(scope="module")
def valid_batch() -> list[dict[str, Any]]:
    """A real answer of the local site's endpoint: first page of 3."""
    site = default_site().with_archive(TAG, 20)
    body = tag_archive_body(TAG, TimeRange.all_time(), "NEWEST", first=3)
    status, payload, _ = graphql_response(site, body)
    assert status == 200
    batch = json.loads(payload)
    assert isinstance(batch, list)
    return batch


def mutated(batch: list[dict[str, Any]], change: Any) -> str:
    copied = copy.deepcopy(batch)
    change(copied)
    return json.dumps(copied)


def feed(batch: Any) -> dict[str, Any]:
    return batch[0]["data"]["tagFromSlug"][FEED_ALIAS]


def test_valid_page(valid_batch: list[dict[str, Any]]) -> None:
    page = read_archive_response(json.dumps(valid_batch).encode())
    assert isinstance(page, ArchivePage)
    assert len(page.nodes) == 3
    assert page.has_next_page is True
    assert page.end_cursor == page.cursors[-1]
    assert len(set(page.cursors)) == 3


def _set(path: list[Any], value: Any) -> Any:
    def change(batch: Any) -> None:
        target = batch
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _delete(path: list[Any]) -> Any:
    def change(batch: Any) -> None:
        target = batch
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


FEED_PATH = [0, "data", "tagFromSlug", FEED_ALIAS]


@pytest.mark.parametrize(
    ("change", "reason", "detail"),
    [
        (_set([0, "errors"], [{"message": "Rate limited"}]), "graphql_errors", "Rate limited"),
        (_set([0, "errors"], "boom"), "wrong_type", "errors is a string"),
        (_delete([0, "data"]), "missing_field", "data is missing"),
        (_set([0, "data"], None), "missing_field", "data is null"),
        (_delete([0, "data", "tagFromSlug"]), "missing_field", "tagFromSlug is missing"),
        (_set([0, "data", "tagFromSlug"], None), "tag_not_found", "no such tag"),
        (_delete(FEED_PATH), "missing_field", f"{FEED_ALIAS} is missing"),
        (_set([*FEED_PATH, "edges"], {"0": {}}), "wrong_type", "edges is an object, not an array"),
        (_delete([*FEED_PATH, "pageInfo"]), "missing_field", "pageInfo is missing"),
        (_set([*FEED_PATH, "pageInfo", "hasNextPage"], "yes"), "wrong_type", "not a boolean"),
        (_set([*FEED_PATH, "pageInfo", "hasNextPage"], None), "missing_field", "is null"),
        (_set([*FEED_PATH, "pageInfo", "endCursor"], None), "missing_field", "endCursor is empty"),
        (_set([*FEED_PATH, "pageInfo", "endCursor"], 42), "wrong_type", "endCursor is an integer"),
        (_set([*FEED_PATH, "edges", 1], None), "null_node", "edges[1] is null"),
        (_set([*FEED_PATH, "edges", 1, "node"], None), "null_node", "edges[1].node is null"),
        (_delete([*FEED_PATH, "edges", 0, "cursor"]), "missing_field", "edges[0].cursor"),
        (_set([*FEED_PATH, "edges", 0, "cursor"], 7), "wrong_type", "cursor is an integer, not a"),
        (_delete([*FEED_PATH, "edges", 2, "node", "id"]), "missing_field", "node.id is missing"),
        (_set([*FEED_PATH, "edges", 2, "node", "mediumUrl"], ""), "missing_field", "is empty"),
        (_set([*FEED_PATH, "edges", 0, "node", "__typename"], "User"), "wrong_type", "a User"),
        (_set([*FEED_PATH, "edges"], []), "empty_page", "no edges"),
    ],
)
def test_every_bad_shape_has_a_reason(
    valid_batch: list[dict[str, Any]], change: Any, reason: str, detail: str
) -> None:
    failure = read_archive_response(mutated(valid_batch, change))
    assert isinstance(failure, ArchiveFailure), failure
    assert failure.reason == reason
    assert detail in failure.detail


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("<html>Just a moment…</html>", "not_json"),
        ("", "not_json"),
        ("[]", "not_a_batch"),
        ('{"data": {}}', "not_a_batch"),
        ("[null]", "not_a_batch"),
        ('{"errors": [{"message": "Unparseable request body"}]}', "graphql_errors"),
    ],
)
def test_bodies_that_are_not_a_batch(body: str, reason: str) -> None:
    failure = read_archive_response(body)
    assert isinstance(failure, ArchiveFailure)
    assert failure.reason == reason


def test_a_cursor_read_before_is_a_paging_loop(valid_batch: list[dict[str, Any]]) -> None:
    page = read_archive_response(json.dumps(valid_batch))
    assert isinstance(page, ArchivePage)
    again = read_archive_response(json.dumps(valid_batch), seen_cursors=set(page.cursors))
    assert isinstance(again, ArchiveFailure)
    assert again.reason == "repeated_cursor"
    only_end = read_archive_response(json.dumps(valid_batch), seen_cursors={page.end_cursor or ""})
    assert isinstance(only_end, ArchiveFailure)
    assert only_end.reason == "repeated_cursor"


def test_a_cursor_twice_on_one_page(valid_batch: list[dict[str, Any]]) -> None:
    first = feed(valid_batch)["edges"][0]["cursor"]
    failure = read_archive_response(
        mutated(valid_batch, _set([*FEED_PATH, "edges", 1, "cursor"], first))
    )
    assert isinstance(failure, ArchiveFailure)
    assert failure.reason == "repeated_cursor"


def test_last_page_without_end_cursor_is_fine(valid_batch: list[dict[str, Any]]) -> None:
    def last_page(batch: Any) -> None:
        feed(batch)["edges"] = []
        feed(batch)["pageInfo"] = {"hasNextPage": False, "endCursor": None}

    page = read_archive_response(mutated(valid_batch, last_page))
    assert page == ArchivePage([], [], False, None)


def test_many_errors_are_summarised() -> None:
    body = json.dumps([{"errors": [{"message": f"e{i}"} for i in range(5)]}])
    failure = read_archive_response(body)
    assert isinstance(failure, ArchiveFailure)
    assert failure.detail == "endpoint answered errors: e0; e1; e2 (+2 more)"


# --- nodes → items ------------------------------------------------------------------


def test_nodes_become_partial_stories_authors_and_publications() -> None:
    site = default_site()
    body = tag_archive_body(TAG, TimeRange.all_time(), "NEWEST", first=100)
    page = read_archive_response(graphql_response(site, body)[1])
    assert isinstance(page, ArchivePage)
    result = archive_result(page, GRAPHQL_URL, SCRAPED_AT)
    stories = [item for item in result.items if isinstance(item, Story)]
    assert [s.story_id for s in stories] == [node["id"] for node in page.nodes]
    by_id = {s.story_id: s for s in stories}
    for story_id, model in ((sid, site.stories[sid]) for sid in by_id):
        story = by_id[story_id]
        author = site.authors[model.author]
        assert story.url == site.story_url(model)
        assert story.title == model.title
        assert story.subtitle == model.subtitle
        assert story.claps == model.claps
        assert story.responses == model.responses
        assert story.is_member_only is model.member_only
        assert story.reading_time_min == model.reading_time
        assert story.author_username == author.username
        assert story.author_id == author.id
        assert story.published_at == model.published_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        assert story.image_url is not None
        assert story.image_url.endswith(model.image_id)
        assert story.scraped_at == SCRAPED_AT
    authors = {a.username: a for a in result.items if isinstance(a, Author)}
    assert set(authors) == {site.stories[sid].author for sid in by_id}
    for username, item in authors.items():
        assert item.followers == site.authors[username].followers
        assert item.is_member is site.authors[username].is_member
    publications = [p for p in result.items if isinstance(p, Publication)]
    expected_pubs = {site.stories[sid].publication for sid in by_id} - {None}
    assert {p.slug for p in publications} == expected_pubs
    story_links = [link.key for link in result.links_of("story")]
    assert story_links == [s.story_id for s in stories]
    assert {link.key for link in result.links_of("author")} == {a.lower() for a in authors}
    assert result.errors == []
