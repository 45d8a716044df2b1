"""Responses: the ``PostResponsesQuery`` operation, the strict reader, ``in_response_to``.

No real answer of the operation exists, so the reader is tested on answers we
write: the local site's, and variants of it (wrong types, missing levels, another
post, a cursor coming back, entries that claim another parent).
"""

from __future__ import annotations

import copy
import json
import logging
import pickle
from datetime import UTC, datetime
from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.http import TextResponse
from scrapy.utils.test import get_crawler

from topics_crawler.graphql.post_responses import (
    OPERATION_NAME,
    PAGE_SIZE,
    QUERY,
    REPLY_DEPTH,
    ResponsesFailure,
    ResponsesPage,
    read_responses,
    responses_body,
    responses_variables,
)
from topics_crawler.items import Story, StoryResponse
from topics_crawler.pages._document import Document
from topics_crawler.pages.story import parse_story
from topics_crawler.site.content import default_site
from topics_crawler.site.graphql import graphql_response
from topics_crawler.site.model import SiteContent
from topics_crawler.spiders._paging import Callbacks
from topics_crawler.spiders._responses import MAX_PAGES, ResponsesFetcher

AT = "2026-11-30T12:00:00Z"
HANDS_ON = "hands-on-distributed-training-from-single-gpu-to-multi-gpu-with-lightning-ai"


@pytest.fixture
def site() -> SiteContent:
    return default_site()


def story_id(site: SiteContent, slug: str) -> str:
    return next(story.id for story in site.stories.values() if story.slug == slug)


def answer(site: SiteContent, post_id: str, limit: int = PAGE_SIZE, to: str | None = None) -> Any:
    status, body, _ = graphql_response(site, responses_body(post_id, limit, to))
    assert status == 200
    return json.loads(body)


def read(body: Any, post_id: str, **kwargs: Any) -> ResponsesPage | ResponsesFailure:
    raw = body if isinstance(body, bytes | str) else json.dumps(body)
    return read_responses(raw, post_id, AT, **kwargs)


def page_of(body: Any, post_id: str, **kwargs: Any) -> ResponsesPage:
    page = read(body, post_id, **kwargs)
    assert isinstance(page, ResponsesPage), page
    return page


# --- the operation -----------------------------------------------------------------------


def test_query_nests_replies_to_the_reply_depth() -> None:
    assert QUERY.count("threadedPostResponses(paging: $repliesPaging)") == REPLY_DEPTH
    assert QUERY.startswith(f"query {OPERATION_NAME}(")
    assert QUERY.count("{") == QUERY.count("}")
    body = json.loads(responses_body("a1b2c3d4e5f6", limit=500, to="cursor"))
    assert [op["operationName"] for op in body] == [OPERATION_NAME]
    assert body[0]["variables"]["paging"] == {"limit": PAGE_SIZE, "to": "cursor"}
    assert responses_variables("a1b2c3d4e5f6", limit=0)["paging"] == {"limit": 1}


# --- a valid answer ----------------------------------------------------------------------


def test_threads_come_in_order_with_parents_and_depths(site: SiteContent) -> None:
    post_id = story_id(site, HANDS_ON)
    page = page_of(answer(site, post_id), post_id)
    rows = page.rows
    assert [r.depth for r in rows] == [1, 2, 3, 2, 1]
    assert all(r.story_id == post_id for r in rows)
    first, reply, reply_to_reply, orphan, member = rows
    assert (first.parent_id, reply.parent_id, reply_to_reply.parent_id) == (
        post_id, first.response_id, reply.response_id,
    )  # fmt: skip
    assert orphan.parent_id not in {r.response_id for r in rows}  # its parent was deleted
    assert page.deleted == 1
    assert (member.is_member_only, member.text_is_preview) == (True, True)
    assert (
        first.text
        == "Did you scale the learning rate linearly with the GPUs?\n\nIt diverged for me."
    )
    assert first.author_username == "rishikumar"
    assert first.published_at == "2025-08-04T10:00:00Z"
    assert (first.claps, page.total, page.next_to, page.top_level) == (12, 3, None, 3)


def test_limit_cuts_the_rows_in_thread_order(site: SiteContent) -> None:
    post_id = story_id(site, HANDS_ON)
    page = page_of(answer(site, post_id), post_id, limit=2)
    assert [r.depth for r in page.rows] == [1, 2]


def test_pages_follow_the_cursor(site: SiteContent) -> None:
    post_id = story_id(site, "distributed-training-data-tensor-and-pipeline-parallelism")
    first = page_of(answer(site, post_id), post_id)
    assert len(first.rows) == PAGE_SIZE
    assert first.next_to
    second = page_of(answer(site, post_id, to=first.next_to), post_id, seen_cursors={"x"})
    assert len(second.rows) == 30 - PAGE_SIZE
    assert second.next_to is None
    ids = [r.response_id for r in first.rows + second.rows]
    assert len(set(ids)) == 30


def test_a_story_without_responses_is_an_empty_page(site: SiteContent) -> None:
    post_id = story_id(
        site, "train-infer-serve-and-how-to-know-when-you-actually-need-distribution"
    )
    page = page_of(answer(site, post_id), post_id)
    assert (page.rows, page.next_to, page.total) == ([], None, 0)


# --- strictness --------------------------------------------------------------------------


def thread(body: Any) -> dict[str, Any]:
    connection: dict[str, Any] = body[0]["data"]["post"]["threadedPostResponses"]
    return connection


def broken(site: SiteContent, change: Any) -> Any:
    body = copy.deepcopy(answer(site, story_id(site, HANDS_ON)))
    change(body)
    return body


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda b: b.clear(), "not_a_batch"),
        (lambda b: b.__setitem__(0, {"errors": [{"message": "boom"}]}), "graphql_errors"),
        (lambda b: b[0].__setitem__("data", []), "wrong_type"),
        (lambda b: b[0]["data"].__setitem__("post", None), "post_not_found"),
        (lambda b: b[0]["data"].pop("post"), "missing_field"),
        (lambda b: b[0]["data"]["post"].__setitem__("id", "0123456789ab"), "wrong_post"),
        (lambda b: b[0]["data"]["post"].__setitem__("__typename", "User"), "wrong_type"),
        (lambda b: b[0]["data"]["post"].pop("threadedPostResponses"), "missing_field"),
        (lambda b: thread(b).__setitem__("posts", {}), "wrong_type"),
        (lambda b: thread(b).__setitem__("pagingInfo", []), "wrong_type"),
        (lambda b: thread(b)["pagingInfo"].__setitem__("next", {"limit": 25}), "missing_field"),
    ],
)  # fmt: skip
def test_an_unusable_answer_is_a_failure_with_a_reason(
    site: SiteContent, change: Any, reason: str
) -> None:
    failure = read(broken(site, change), story_id(site, HANDS_ON))
    assert isinstance(failure, ResponsesFailure)
    assert failure.reason == reason
    assert failure.detail


@pytest.mark.parametrize("body", [b"", b"<html>oops</html>", b"\xff\xfe{", "[1, 2"])
def test_not_json(body: bytes | str) -> None:
    failure = read(body, "0123456789ab")
    assert isinstance(failure, ResponsesFailure)
    assert failure.reason == "not_json"


def test_a_cursor_that_comes_back_is_refused(site: SiteContent) -> None:
    post_id = story_id(site, "distributed-training-data-tensor-and-pipeline-parallelism")
    first = page_of(answer(site, post_id), post_id)
    again = read(answer(site, post_id), post_id, seen_cursors={first.next_to})
    assert isinstance(again, ResponsesFailure)
    assert again.reason == "repeated_cursor"


def test_bad_entries_are_skipped_with_their_reason_the_rest_kept(site: SiteContent) -> None:
    post_id = story_id(site, HANDS_ON)
    good = answer(site, post_id)

    def spoil(body: Any) -> None:
        posts = body[0]["data"]["post"]["threadedPostResponses"]["posts"]
        posts[0]["inResponseToPostResult"] = {"__typename": "Post", "id": "0badc0ffee00"}
        posts[2]["threadedPostResponses"] = "not an object"
        posts += [
            None,
            {"__typename": "User", "id": "abcdef012345"},
            {**posts[2], "id": "NOT-HEX"},
            {**posts[2], "id": "abcabcabcabc", "inResponseToEntityType": "CATALOG"},
        ]

    page = page_of(broken(site, spoil), post_id)
    assert dict(page.skipped) == {
        "wrong_parent": 2,  # the first one's whole thread goes with it
        "wrong_type_replies": 1,
        "null_entry": 1,
        "wrong_type": 1,
        "bad_id": 1,
    }
    assert len(page.rows) == 2  # the deleted one's reply and the member-only one
    assert len(page_of(good, post_id).rows) == 5


def test_wrong_typed_values_are_missing_values(site: SiteContent) -> None:
    post_id = story_id(site, HANDS_ON)

    def retype(body: Any) -> None:
        first = body[0]["data"]["post"]["threadedPostResponses"]["posts"][0]
        first.update(clapCount="12", firstPublishedAt=True, isLocked="no", mediumUrl=7)
        first["creator"]["name"] = ["Rishi"]
        first["content"]["bodyModel"] = {"paragraphs": "text"}

    row = page_of(broken(site, retype), post_id).rows[0]
    assert (row.claps, row.published_at, row.is_member_only, row.url) == (None, None, None, None)
    assert (row.author_name, row.text, row.text_is_preview) == (None, None, None)
    assert row.author_username == "rishikumar"


# --- a story that is a response ------------------------------------------------------------


def apollo_page(post: dict[str, Any], extra: dict[str, Any] | None = None) -> str:
    state = {
        "ROOT_QUERY": {f'postResult({{"id":"{post["id"]}"}})': {"__ref": f"Post:{post['id']}"}},
        f"Post:{post['id']}": post,
        **(extra or {}),
    }
    return (
        f"<html><body><script>window.__APOLLO_STATE__ = {json.dumps(state)}</script></body></html>"
    )


def story_from(html: str) -> Story:
    url = "https://medium.com/@ada/a-reply-0123456789ab"
    result = parse_story(Document(html, url, scraped_at=datetime(2026, 11, 30, tzinfo=UTC)))
    story = result.items[0]
    assert isinstance(story, Story)
    return story


@pytest.mark.parametrize(
    ("answered", "extra", "expected"),
    [
        ({"__ref": "Post:AABBCCDDEEFF"}, {"Post:AABBCCDDEEFF": {"id": "AABBCCDDEEFF"}}, "aabbccddeeff"),  # noqa: E501
        ({"__ref": "Post:aabbccddeeff"}, None, "aabbccddeeff"),  # the entity is not cached
        ({"__typename": "Post", "id": "aabbccddeeff"}, None, "aabbccddeeff"),  # inline
        ({"type": "id", "id": "Post:aabbccddeeff"}, None, "aabbccddeeff"),  # Apollo-2
        (None, None, None),
        ({"__typename": "Catalog", "id": "c1"}, None, None),
    ],
)  # fmt: skip
def test_in_response_to_from_the_apollo_state(
    answered: Any, extra: dict[str, Any] | None, expected: str | None
) -> None:
    post = {"__typename": "Post", "id": "0123456789ab", "title": "A reply",
            "inResponseToPostResult": answered,
            "inResponseToEntityType": "POST" if answered else None}  # fmt: skip
    assert story_from(apollo_page(post, extra)).in_response_to == expected


def test_in_response_to_other_entity_types_is_none() -> None:
    post = {"__typename": "Post", "id": "0123456789ab", "title": "A note",
            "inResponseToPostResult": {"__ref": "Post:aabbccddeeff"},
            "inResponseToEntityType": "CATALOG"}  # fmt: skip
    assert story_from(apollo_page(post)).in_response_to is None


@pytest.mark.parametrize(
    ("value", "expected"), [("AABBCCDDEEFF", "aabbccddeeff"), ("", None), (7, None)]
)
def test_in_response_to_from_legacy_json(value: Any, expected: str | None) -> None:
    payload = {"value": {"id": "0123456789ab", "title": "A reply", "inResponseToPostId": value}}
    html = f'<html><body><script>window["obvInit"]({json.dumps(payload)})</script></body></html>'
    assert story_from(html).in_response_to == expected


def test_a_thread_s_paging_state_travels_with_its_requests(site: SiteContent) -> None:
    """Each answer is read by a fetcher that never saw the thread before (another worker,
    a resumed run): the state in the request is enough, and nothing stays behind."""
    post_id = story_id(site, "distributed-training-data-tensor-and-pipeline-parallelism")
    story = Story(story_id=post_id, url=f"https://medium.com/p/{post_id}", responses=30)
    crawler = get_crawler(Spider)
    reported: list[tuple[str, str]] = []

    def fetcher() -> ResponsesFetcher:
        return ResponsesFetcher(
            limit=100, callbacks=Callbacks(lambda r: None, lambda f: None), max_pages=MAX_PAGES,
            stats=crawler.stats, logger=logging.getLogger("test"),
            report=lambda url, reason, _detail: reported.append((url, reason)),
        )  # fmt: skip

    request = next(fetcher().start(story))
    rows: list[StoryResponse] = []
    for _ in range(3):
        status, body, headers = graphql_response(site, request.body)
        outputs = list(fetcher().read(TextResponse(request.url, status=status, body=body,
                                                   headers=headers, request=request)))  # fmt: skip
        rows += [o for o in outputs if isinstance(o, StoryResponse)]
        following = [o for o in outputs if isinstance(o, Request)]
        if not following:
            break
        request = following[0]
        assert pickle.loads(pickle.dumps(request.meta))  # what a disk or Redis queue stores
    assert len({row.response_id for row in rows}) == len(rows) == 30
    assert not reported
    assert not vars(fetcher()).keys() & {"threads"}  # no per-story state in the fetcher


def test_a_failed_request_is_reported_under_its_story(site: SiteContent) -> None:
    post_id = story_id(site, "distributed-training-data-tensor-and-pipeline-parallelism")
    story = Story(story_id=post_id, url="https://medium.com/p/x", responses=3)
    reported: list[tuple[str, str]] = []
    fetcher = ResponsesFetcher(
        limit=10, callbacks=Callbacks(lambda r: None, lambda f: None), max_pages=MAX_PAGES,
        stats=get_crawler(Spider).stats, logger=logging.getLogger("test"),
        report=lambda url, reason, _detail: reported.append((url, reason)),
    )  # fmt: skip
    request = next(fetcher.start(story))
    fetcher.fail(request.meta, "http_500", "Internal error")
    assert reported == [("https://medium.com/p/x", "http_500")]
