"""Cloudflare's WAF refusal: the browser, then the crawl stopped (the blocked-page
middleware's answer to a ``waf`` block)."""

from __future__ import annotations

import pytest
from scrapy import Request, Spider
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from tests.blocked_pages import CLOCK, STORY, WAF_PAGE, sent
from topics_crawler.errors import REFUSED_STAT
from topics_crawler.middlewares.blocked import (
    HOLD_FOR_GOOD,
    RENDER_REASON_META,
    BlockedPageMiddleware,
    WafRefusal,
)
from topics_crawler.middlewares.download_failures import download_failure_reason
from topics_crawler.middlewares.refused import SiteRefused
from topics_crawler.scheduling.not_before import RETRY_NOT_BEFORE_META
from topics_crawler.signals import host_paused, plain_http_refused


def make_waf_middleware(mode: str = "auto") -> tuple[BlockedPageMiddleware, list[str]]:
    """A middleware and the hosts its ``plain_http_refused`` signals named."""
    crawler = get_crawler(Spider, {"RENDER_MODE": mode})
    crawler.spider = crawler._create_spider("test")
    middleware = BlockedPageMiddleware.from_crawler(crawler)
    switched: list[str] = []
    crawler.signals.connect(
        lambda host, block: switched.append(host), plain_http_refused, weak=False
    )
    return middleware, switched


def waf_response(url: str = STORY, status: int = 403) -> Response:
    return HtmlResponse(url, status=status, body=WAF_PAGE.encode(), encoding="utf-8")


def test_waf_refusal_of_plain_http_goes_to_the_browser_at_once() -> None:
    middleware, switched = make_waf_middleware()
    request = sent(middleware, Request(STORY, meta={"entity_kind": "story"}))
    retry = middleware.process_response(request, waf_response(status=200))  # any status
    assert isinstance(retry, Request)
    assert (retry.url, retry.meta[RENDER_REASON_META]) == (STORY, "waf")
    assert RETRY_NOT_BEFORE_META not in retry.meta  # another client, not a wait
    assert switched == ["medium.com"]
    stats = middleware.crawler.stats
    assert stats is not None
    assert stats.get_value("blocked/waf") == 1
    assert stats.get_value(REFUSED_STAT) is None


def test_waf_refusal_in_the_browser_too_stops_the_crawl_and_keeps_the_page(
    caplog: pytest.LogCaptureFixture,
) -> None:
    middleware, _ = make_waf_middleware()
    middleware.clock = lambda: CLOCK
    pauses: list[tuple[str, float]] = []
    middleware.crawler.signals.connect(
        lambda slot, until: pauses.append((slot, until)), host_paused, weak=False
    )
    meta = {"entity_kind": "story", "playwright": True, "download_slot": "medium.com"}
    rendered = sent(middleware, Request(STORY, meta={**meta, RENDER_REASON_META: "waf"}))
    held = middleware.process_response(rendered, waf_response())
    assert isinstance(held, Request)  # back to the queue: the next run fetches it
    assert held.url == STORY
    assert "playwright" not in held.meta
    assert RENDER_REASON_META not in held.meta
    assert pauses == [("medium.com", CLOCK + HOLD_FOR_GOOD)]  # held for the rest of the run
    stats = middleware.crawler.stats
    assert stats is not None
    assert stats.get_value(REFUSED_STAT) == 1
    [line] = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert line.startswith("medium.com refused the crawl: a Cloudflare WAF refusal")
    assert "Ray ID 8e21f0c4a9b7d356" in line
    assert "refusing plain HTTP and the browser" in line
    for helps in ("proxy", "Zyte API", "DOWNLOAD_BIND_ADDRESS"):
        assert helps in line


def test_a_custom_domain_refused_for_good_fails_its_pages_and_only_its(
    caplog: pytest.LogCaptureFixture,
) -> None:
    middleware, _ = make_waf_middleware()
    custom = "https://oxidized.dev/x-1a2b3c4d5e6f"
    rendered = sent(middleware, Request(custom, meta={"entity_kind": "story", "playwright": True}))
    with pytest.raises(WafRefusal) as raised:
        middleware.process_response(rendered, waf_response(custom))
    assert download_failure_reason(Failure(raised.value)) == "waf"
    [line] = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert line.startswith("oxidized.dev refused the crawl")
    later = Request("https://oxidized.dev/y-2b3c4d5e6f70", meta={"entity_kind": "story"})
    with pytest.raises(SiteRefused) as skipped:  # later requests to the host: never sent
        middleware.process_request(later)
    assert download_failure_reason(Failure(skipped.value)) == "refused_by_site"
    stats = middleware.crawler.stats
    assert stats is not None
    assert stats.get_value("refused_by_site/skipped") == 1
    medium = Request("https://medium.com/@ada", meta={"entity_kind": "author"})
    assert middleware.process_request(medium) is None  # Medium itself still may be asked


def test_waf_refusal_with_render_mode_never_is_for_good_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    middleware, switched = make_waf_middleware("never")
    request = sent(middleware, Request(STORY, meta={"entity_kind": "story"}))
    held = middleware.process_response(request, waf_response())
    assert isinstance(held, Request)
    assert switched == []
    [line] = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert "RENDER_MODE=never: no browser to try" in line


def test_waf_refusal_of_a_request_that_is_no_page_is_its_http_error() -> None:
    middleware, switched = make_waf_middleware()
    graphql = sent(middleware, Request("https://medium.com/_/graphql", method="POST"))
    response = waf_response("https://medium.com/_/graphql")
    assert middleware.process_response(graphql, response) is response  # a 403: the caller's
    assert switched == ["medium.com"]  # … and the host's pages go to the browser
    with pytest.raises(WafRefusal):  # the same body served with 200 is no data either
        middleware.process_response(graphql, waf_response("https://medium.com/_/graphql", 200))
