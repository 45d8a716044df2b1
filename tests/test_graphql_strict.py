"""The strict GraphQL validators (tag archive pages, post responses) read every member
through the state reader: a value of another type anywhere in an answer is a failure
with a reason, a skipped entry or a gap — never an exception."""

from __future__ import annotations

import json

import pytest

from tests.type_swaps import type_swapped
from topics_crawler.graphql import TimeRange, tag_archive_body
from topics_crawler.graphql.post_responses import ResponsesPage, read_responses, responses_body
from topics_crawler.graphql.strict import ReadFailure
from topics_crawler.graphql.tag_archive import ArchivePage, read_archive_response
from topics_crawler.site.content import default_site
from topics_crawler.site.graphql import graphql_response

TAG = "distributed-training"
AT = "2026-11-30T12:00:00Z"


def test_archive_answers_with_any_value_swapped_never_raise() -> None:
    site = default_site().with_archive(TAG, 20)
    body = tag_archive_body(TAG, TimeRange.all_time(), "NEWEST", first=2)
    answer = json.loads(graphql_response(site, body)[1])
    assert isinstance(read_archive_response(json.dumps(answer)), ArchivePage)
    outcomes = [read_archive_response(swapped) for swapped in type_swapped(answer, 400)]
    assert all(isinstance(o, ArchivePage | ReadFailure) for o in outcomes)
    assert {o.reason for o in outcomes if isinstance(o, ReadFailure)} >= {
        "missing_field",
        "wrong_type",
        "not_a_batch",
        "tag_not_found",
        "null_node",
    }


@pytest.mark.parametrize(
    "slug", ["hands-on-distributed-training-from-single-gpu-to-multi-gpu-with-lightning-ai"]
)
def test_responses_answers_with_any_value_swapped_never_raise(slug: str) -> None:
    site = default_site()
    post_id = next(story.id for story in site.stories.values() if story.slug == slug)
    answer = json.loads(graphql_response(site, responses_body(post_id, 10, None))[1])
    assert isinstance(read_responses(json.dumps(answer), post_id, AT), ResponsesPage)
    outcomes = [read_responses(b, post_id, AT) for b in type_swapped(answer, 400)]
    assert all(isinstance(o, ResponsesPage | ReadFailure) for o in outcomes)
    skipped = {reason for o in outcomes if isinstance(o, ResponsesPage) for reason in o.skipped}
    assert {"wrong_type", "bad_id", "wrong_parent"} <= skipped
    assert {o.reason for o in outcomes if isinstance(o, ReadFailure)} >= {
        "missing_field",
        "wrong_type",
        "wrong_post",
    }
