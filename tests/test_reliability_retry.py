"""Retries are returned at once with a not-before time (Retry-After, else backoff)."""

from __future__ import annotations

import inspect
import logging
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from scrapy import Request, Spider
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.utils.test import get_crawler
from twisted.internet.error import TCPTimedOutError

from tests.crawl_helpers import crawl_in_process
from tests.fixture_cases import FIXTURES
from tests.services import serving
from topics_crawler.middlewares.retry_after import (
    RetryAfterMiddleware,
    RetryWaitPolicy,
    backoff_delay,
    parse_retry_after,
)
from topics_crawler.scheduling.not_before import RETRY_NOT_BEFORE_META

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
URL = "https://medium.com/tag/llm"
SLOT = "127.0.0.1"
TAG_PAGE = FIXTURES / "own" / "tag" / "distributed-training" / "input.html"


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("120", 120.0),
        (b" 7 ", 7.0),
        ("Mon, 30 Nov 2026 12:01:30 GMT", 90.0),
        ("Mon, 30 Nov 2026 11:00:00 GMT", 0.0),  # already past
        ("soon", None),
        ("-5", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_retry_after(value: str | bytes | None, seconds: float | None) -> None:
    assert parse_retry_after(value, now=NOW) == seconds


def test_backoff_doubles_up_to_the_cap() -> None:
    assert [backoff_delay(n, 1.5, 10) for n in (1, 2, 3, 4)] == [1.5, 3.0, 6.0, 10.0]
    assert backoff_delay(3, 0, 10) == 0.0


def test_wait_policy_caps_retry_after_but_not_small_values() -> None:
    policy = RetryWaitPolicy(backoff_base=1, backoff_max=8, retry_after_max=60)
    assert policy.wait(1, 3600) == 60
    assert policy.wait(1, 5) == 5
    assert policy.wait(3, None) == 4


#: The retry middleware's clock in these tests (epoch seconds).
CLOCK = 1_800_000_000.0


def make_middleware(**settings: object) -> RetryAfterMiddleware:
    crawler = get_crawler(
        Spider, {"RETRY_TIMES": 2, "RETRY_BACKOFF_BASE": 1.0, "RETRY_AFTER_MAX": 120, **settings}
    )
    crawler.spider = crawler._create_spider("test")
    middleware = RetryAfterMiddleware.from_crawler(crawler)
    middleware.clock = lambda: CLOCK
    return middleware


def not_before(*retries: Request | Response | None) -> list[float]:
    """Seconds from now before which each returned retry may go out."""
    return [
        r.meta[RETRY_NOT_BEFORE_META] - CLOCK
        for r in retries
        if isinstance(r, Request) and RETRY_NOT_BEFORE_META in r.meta
    ]


def request(**meta: object) -> Request:
    return Request(URL, meta={"download_slot": SLOT, **meta})


def response(status: int, **headers: str) -> Response:
    return Response(URL, status=status, headers=headers)


def test_retries_are_returned_at_once_nothing_awaits() -> None:
    assert not inspect.iscoroutinefunction(RetryAfterMiddleware.process_response)
    assert not inspect.iscoroutinefunction(RetryAfterMiddleware.process_exception)


def test_429_with_retry_after_is_returned_with_that_not_before_time() -> None:
    middleware = make_middleware()
    result = middleware.process_response(request(), response(429, **{"Retry-After": "9"}))
    assert isinstance(result, Request)
    assert result.meta["retry_times"] == 1
    assert result.dont_filter
    assert not_before(result) == [9.0]
    stats = middleware.crawler.stats
    assert stats is not None
    assert stats.get_value("retry/retry_after") == 1
    assert stats.get_value("retry/wait_ms") == 9000
    assert stats.get_value("retry/reason_count/429 Too Many Requests") == 1


def test_http_date_retry_after_is_capped_and_a_long_wait_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    middleware = make_middleware(RETRY_AFTER_LONG_WAIT=30)
    far = "Wed, 01 Jan 2100 00:00:00 GMT"
    with caplog.at_level(logging.WARNING, logger="topics_crawler.middlewares.retry_after"):
        result = middleware.process_response(request(), response(503, **{"Retry-After": far}))
    assert not_before(result) == [120.0]
    assert (
        "Retry 1 of https://medium.com/tag/llm after status 503 not before 120.0s from now"
        in caplog.text
    )


def test_without_retry_after_the_not_before_time_backs_off() -> None:
    middleware = make_middleware()
    first = middleware.process_response(request(), response(503))
    assert isinstance(first, Request)
    second = middleware.process_response(first, response(503))
    assert isinstance(second, Request)
    assert not_before(first, second) == [1.0, 2.0]


def test_gives_up_after_retry_times_and_returns_the_last_response() -> None:
    middleware = make_middleware()
    last = response(503)
    result = middleware.process_response(request(retry_times=2), last)
    assert result is last


def test_dont_retry_and_other_statuses_pass_through() -> None:
    middleware = make_middleware()
    not_found = response(404)
    assert middleware.process_response(request(), not_found) is not_found
    busy = response(503)
    assert middleware.process_response(request(dont_retry=True), busy) is busy


def test_exceptions_are_retried_with_backoff() -> None:
    middleware = make_middleware()
    result = middleware.process_exception(request(), TCPTimedOutError())
    assert isinstance(result, Request)
    assert not_before(result) == [1.0]
    assert middleware.process_exception(request(), ValueError("bug")) is None


def test_retry_disabled_turns_the_middleware_off() -> None:
    with pytest.raises(NotConfigured):
        RetryAfterMiddleware.from_crawler(get_crawler(Spider, {"RETRY_ENABLED": False}))


def test_project_settings_replace_scrapys_retry_middleware() -> None:
    from topics_crawler import settings

    middlewares = settings.DOWNLOADER_MIDDLEWARES
    assert middlewares["scrapy.downloadermiddlewares.retry.RetryMiddleware"] is None
    assert middlewares["topics_crawler.middlewares.retry_after.RetryAfterMiddleware"] == 550
    assert 429 in settings.RETRY_HTTP_CODES


class RateLimitedHandler(BaseHTTPRequestHandler):
    """First request for a tag page: 429 with Retry-After 1; then the page. Others: 404."""

    hits: list[tuple[str, float]] = []  # noqa: RUF012 - shared by the server's handler threads

    def do_GET(self) -> None:
        self.hits.append((self.path, time.monotonic()))
        tag_hits = [path for path, _ in self.hits if path.startswith("/tag/")]
        if self.path.startswith("/tag/") and len(tag_hits) == 1:
            status, body, extra = 429, b"slow down", {"Retry-After": "1"}
        elif self.path.startswith("/tag/"):
            status, body, extra = 200, TAG_PAGE.read_bytes(), {}
        else:
            status, body, extra = 404, b"not here", {}
        self.send_response(status)
        for name, value in {"Content-Type": "text/html", **extra}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.mark.integration
def test_a_real_crawl_waits_for_retry_after_in_its_slot_then_gets_the_page(tmp_path: Path) -> None:
    if not TAG_PAGE.exists():
        pytest.skip(f"tag fixture page missing: {TAG_PAGE}")
    RateLimitedHandler.hits = []
    with serving(RateLimitedHandler) as url:
        run = crawl_in_process(
            url,
            tmp_path,
            "tags=distributed-training",
            "follow=",
            settings={"HEALTH_ENABLED": False, "TELNETCONSOLE_ENABLED": False},
            timeout=120,
        )
    assert run.returncode == 0, run.log[-2000:]
    tag_times = [at for path, at in RateLimitedHandler.hits if path.startswith("/tag/")]
    assert len(tag_times) == 2
    assert tag_times[1] - tag_times[0] >= 1.0
    assert run.stats["retry/retry_after"] == 1
    assert run.stats["rate/throttled"] == 1
    assert run.stats["rate/paused_ms"] >= 900
    assert run.of_type("tag_page")
