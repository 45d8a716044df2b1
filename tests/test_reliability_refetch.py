"""A page whose state JSON is broken is asked for once more, never twice."""

from __future__ import annotations

import logging

from scrapy import Request, Spider
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from topics_crawler.middlewares.blocked import ORIGIN_URL_META
from topics_crawler.pages import parse_page
from topics_crawler.site.content import default_site
from topics_crawler.site.faults import broken_state
from topics_crawler.site.routes import resolve
from topics_crawler.spiders._refetch import (
    DOWNLOAD_META,
    REFETCH_META,
    has_broken_state,
    refetch_request,
)

LOGGER = logging.getLogger(__name__)
CANONICAL = "https://medium.com/@varuntej"
MIRRORED = "http://127.0.0.1:8000/@varuntej"


def author_response(*, broken: bool, meta: dict[str, object] | None = None) -> HtmlResponse:
    page = resolve(default_site(), "/@varuntej")
    body = broken_state(page).body if broken else page.body
    request = Request(
        MIRRORED,
        meta={
            ORIGIN_URL_META: CANONICAL,
            "entity_kind": "author",
            "download_latency": 0.01,
            "retry_times": 1,
        },
    )
    request.meta.update(meta or {})
    return HtmlResponse(MIRRORED, body=body, encoding="utf-8", request=request)


def test_broken_state_is_asked_for_once_more_at_its_original_url() -> None:
    response = author_response(broken=True)
    result = parse_page(response.body, CANONICAL, kind="author")
    collector = get_crawler(Spider).stats
    assert collector is not None
    assert has_broken_state(result)
    retry = refetch_request(response, result, collector, LOGGER)
    assert retry is not None
    assert (retry.url, retry.dont_filter, retry.meta[REFETCH_META]) == (CANONICAL, True, True)
    assert retry.meta["entity_kind"] == "author"
    assert not DOWNLOAD_META & retry.meta.keys(), "per-download meta is not forwarded"
    assert collector.get_value("parse/refetched/author") == 1


def test_the_second_answer_is_used_whatever_it_is() -> None:
    response = author_response(broken=True, meta={REFETCH_META: True})
    result = parse_page(response.body, CANONICAL, kind="author")
    collector = get_crawler(Spider).stats
    assert collector is not None
    assert refetch_request(response, result, collector, LOGGER) is None


def test_a_sound_page_is_not_asked_for_again() -> None:
    response = author_response(broken=False)
    result = parse_page(response.body, CANONICAL, kind="author")
    collector = get_crawler(Spider).stats
    assert collector is not None
    assert not has_broken_state(result)
    assert refetch_request(response, result, collector, LOGGER) is None


def test_broken_state_is_a_typed_signal_not_an_error_string() -> None:
    response = author_response(broken=True)
    result = parse_page(response.body, CANONICAL, kind="author")
    signal = result.signal("broken_state")
    assert signal is not None
    assert signal.what == "apollo_state"
    result.errors.clear()  # the decision never reads the error text
    assert has_broken_state(result)
