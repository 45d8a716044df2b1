"""Challenge pages and sign-in walls are recognised, retried with a render hook, then failed."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from scrapy import Request, Spider
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from tests.fixture_cases import FIXTURES
from topics_crawler.middlewares.blocked import (
    ORIGIN_URL_META,
    RENDER_REASON_META,
    BlockedPageMiddleware,
    Challenge,
    SigninWall,
)
from topics_crawler.middlewares.retry_after import RETRY_NOT_BEFORE_META
from topics_crawler.pages._blocked import detect_block, is_signin_url
from topics_crawler.scheduling.fingerprint import CANONICAL_URL_META, MIRROR_URL_META
from topics_crawler.signals import host_paused
from topics_crawler.spiders._helpers import failure_reason

STORY = "https://medium.com/@ev/welcome-to-medium-9e53ca408c48"
CLOUDFLARE_PAGE = """<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="refresh" content="390"></head><body><div class="main-wrapper">
<noscript>Enable JavaScript and cookies to continue</noscript></div>
<script>(function(){window._cf_chl_opt={cvId: '3',cZone: "medium.com",cType: 'managed'};
var a = document.createElement('script');
a.src = '/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8f0';
document.getElementsByTagName('head')[0].appendChild(a);}());</script></body></html>"""


@pytest.mark.parametrize(
    ("status", "url", "body", "headers", "reason"),
    [
        (403, STORY, CLOUDFLARE_PAGE, {}, "challenge"),
        (503, STORY, CLOUDFLARE_PAGE.encode(), {}, "challenge"),
        (403, STORY, "<html>denied</html>", {"cf-mitigated": "challenge"}, "challenge"),
        (302, STORY, "", {"Location": "/m/signin?redirect=%2F%40ev"}, "signin_wall"),
        (
            302,
            STORY,
            "",
            {"location": "https://medium.com/m/callback/sso?redirectUrl=x"},
            "signin_wall",
        ),
        (200, "https://medium.com/m/signin?operation=register", "<html/>", {}, "signin_wall"),
        (404, "https://humanparts.medium.com/m/signin", "", {}, "signin_wall"),
    ],
)
def test_blocked_responses_are_recognised(
    status: int, url: str, body: str | bytes, headers: dict[str, str], reason: str
) -> None:
    block = detect_block(status, url, body, headers)
    assert block is not None
    assert block.reason == reason
    assert block.evidence


@pytest.mark.parametrize(
    ("status", "url", "body", "headers"),
    [
        # Cloudflare injects challenge-platform scripts into normal 200 pages
        (200, STORY, CLOUDFLARE_PAGE, {}),
        (403, STORY, "<html><title>Forbidden</title></html>", {}),
        (503, STORY, "upstream connect error", {}),
        (302, STORY, "", {"Location": "https://medium.com/@ev/welcome-9e53ca408c48"}),
        (200, "https://medium.com/m/signinx", "", {}),
        (301, "https://medium.com/p/9e53ca408c48", "", {"Location": "/m/global-identity?x=1"}),
    ],
)
def test_ordinary_responses_are_not_blocked(
    status: int, url: str, body: str, headers: dict[str, str]
) -> None:
    assert detect_block(status, url, body, headers) is None


def test_signin_urls() -> None:
    assert is_signin_url("https://medium.com/m/signin")
    assert is_signin_url("https://medium.com/M/Callback/google")
    assert not is_signin_url("https://medium.com/@m/signin-help-0123456789ab")


def test_no_real_capture_looks_blocked(real_pages: Path) -> None:
    pages = sorted(p for p in real_pages.iterdir() if p.suffix in {".html", ".json", ".xml"})
    assert pages
    for page in pages:
        for status in (200, 403, 503):
            assert detect_block(status, STORY, page.read_bytes()) is None, page.name


def test_no_own_fixture_page_looks_blocked() -> None:
    pages = sorted((FIXTURES / "own").glob("*/*/input.*"))
    for page in pages:
        assert detect_block(503, STORY, page.read_bytes()) is None, page.name


#: The middleware's clock in these tests (epoch seconds).
CLOCK = 1_800_000_000.0


def not_before(*retries: Request) -> list[float]:
    """Seconds from now before which each returned retry may go out (nothing sleeps)."""
    return [r.meta[RETRY_NOT_BEFORE_META] - CLOCK for r in retries]


def make_middleware() -> BlockedPageMiddleware:
    crawler = get_crawler(Spider, {"BLOCKED_RETRY_TIMES": 2, "RETRY_BACKOFF_BASE": 2.0})
    crawler.spider = crawler._create_spider("test")
    middleware = BlockedPageMiddleware.from_crawler(crawler)
    middleware.clock = lambda: CLOCK
    return middleware


def test_retries_are_returned_at_once_nothing_awaits() -> None:
    assert not inspect.iscoroutinefunction(BlockedPageMiddleware.process_response)
    assert not inspect.iscoroutinefunction(BlockedPageMiddleware.process_exception)


def challenge_response(url: str = STORY) -> Response:
    return HtmlResponse(url, status=503, body=CLOUDFLARE_PAGE.encode(), encoding="utf-8")


def sent(middleware: BlockedPageMiddleware, request: Request) -> Request:
    """The request as the downloader sees it after this middleware's process_request."""
    middleware.process_request(request)
    return request


def test_challenge_is_retried_with_the_render_hook_then_fails_as_challenge() -> None:
    middleware = make_middleware()
    request = sent(middleware, Request(STORY, meta={"entity_kind": "story"}))
    first = middleware.process_response(request, challenge_response())
    assert isinstance(first, Request)
    assert first.url == STORY
    assert first.meta[RENDER_REASON_META] == "challenge"
    assert first.meta["entity_kind"] == "story"
    second = middleware.process_response(sent(middleware, first), challenge_response())
    assert isinstance(second, Request)
    assert not_before(first, second) == [2.0, 4.0]
    with pytest.raises(Challenge) as raised:
        middleware.process_response(sent(middleware, second), challenge_response())
    assert raised.value.status == 503
    assert failure_reason(Failure(raised.value)) == "challenge"  # what the spider reports
    stats = middleware.crawler.stats
    assert stats is not None
    assert stats.get_value("blocked/challenge") == 3
    assert stats.get_value("blocked/gave_up/challenge") == 1
    assert stats.get_value("blocked/retry/count") == 2


def test_a_challenge_pauses_its_whole_host_a_signin_wall_only_its_page() -> None:
    middleware = make_middleware()
    pauses: list[tuple[str, float]] = []
    middleware.crawler.signals.connect(
        lambda slot, until: pauses.append((slot, until)), host_paused, weak=False
    )
    request = sent(middleware, Request(STORY, meta={"download_slot": "medium.com"}))
    middleware.process_response(request, challenge_response())
    assert pauses == [("medium.com", CLOCK + 2.0)]  # the host waits out the backoff
    walled = sent(middleware, Request(STORY, meta={"download_slot": "medium.com"}))
    signin = HtmlResponse("https://medium.com/m/signin?redirect=x", status=200, body=b"")
    retry = middleware.process_response(walled, signin)
    assert isinstance(retry, Request)
    assert retry.meta[RENDER_REASON_META] == "signin_wall"
    assert len(pauses) == 1


def test_signin_redirect_through_the_mirror_retries_the_original_page() -> None:
    middleware = make_middleware()
    original = sent(middleware, Request(STORY))
    # the mirror rewrote the request, the redirect middleware then followed /m/signin
    mirrored = original.replace(
        url="http://127.0.0.1:8000/@ev/welcome-to-medium-9e53ca408c48",
        meta={**original.meta, CANONICAL_URL_META: STORY},
    )
    signin = "https://medium.com/m/signin?redirect=x"
    redirected = sent(
        middleware,
        mirrored.replace(
            url=signin,
            meta={
                **mirrored.meta,
                "redirect_urls": [mirrored.url],
                "redirect_times": 1,
                CANONICAL_URL_META: signin,
                MIRROR_URL_META: "http://127.0.0.1:8000/m/signin?redirect=x",
            },
        ),
    )
    assert redirected.meta[ORIGIN_URL_META] == STORY
    retry = middleware.process_response(redirected, Response(signin, status=200))
    assert isinstance(retry, Request)
    assert retry.url == STORY
    assert retry.meta[RENDER_REASON_META] == "signin_wall"
    for key in ("redirect_urls", "redirect_times", CANONICAL_URL_META, MIRROR_URL_META):
        assert key not in retry.meta


def test_dont_retry_fails_at_once_as_signin_wall() -> None:
    middleware = make_middleware()
    request = sent(middleware, Request(STORY, meta={"dont_retry": True}))
    redirect = Response(STORY, status=302, headers={"Location": "/m/signin"})
    with pytest.raises(SigninWall) as raised:
        middleware.process_response(request, redirect)
    assert failure_reason(Failure(raised.value)) == "signin_wall"


def test_ordinary_pages_pass_through() -> None:
    middleware = make_middleware()
    page = HtmlResponse(STORY, status=200, body=b"<html><body>story</body></html>")
    assert middleware.process_response(sent(middleware, Request(STORY)), page) is page


def redirected_to_signin(middleware: BlockedPageMiddleware, meta: dict[str, object]) -> Request:
    """The request the redirect middleware makes when a story answers 302 to /m/signin."""
    original = sent(middleware, Request(STORY, meta=meta))
    signin = "https://medium.com/m/signin?redirect=x"
    return sent(
        middleware,
        original.replace(url=signin, meta={**original.meta, "redirect_urls": [STORY]}),
    )


def test_signin_redirect_refused_by_robots_txt_retries_the_original_page() -> None:
    middleware = make_middleware()
    redirected = redirected_to_signin(middleware, {"entity_kind": "author"})
    refused = IgnoreRequest("Forbidden by robots.txt")
    retry = middleware.process_exception(redirected, refused)
    assert isinstance(retry, Request)
    assert retry.url == STORY
    assert retry.meta[RENDER_REASON_META] == "signin_wall"
    assert "redirect_urls" not in retry.meta
    assert not_before(retry) == [2.0]
    stats = middleware.crawler.stats
    assert stats is not None
    assert stats.get_value("blocked/signin_wall") == 1


def test_signin_redirect_refused_for_good_fails_as_signin_wall() -> None:
    middleware = make_middleware()
    redirected = redirected_to_signin(middleware, {"dont_retry": True})
    refused = IgnoreRequest("Forbidden by robots.txt")
    with pytest.raises(SigninWall) as raised:
        middleware.process_exception(redirected, refused)
    assert raised.value.status == 302


@pytest.mark.parametrize(
    ("url", "meta"),
    [
        ("https://medium.com/m/signin", {}),  # asked for directly, not redirected there
        ("https://medium.com/@ev/private-0123456789ab", {"redirect_urls": [STORY]}),
    ],
)
def test_other_refused_requests_are_left_alone(url: str, meta: dict[str, object]) -> None:
    middleware = make_middleware()
    request = sent(middleware, Request(url, meta=meta))
    refused = IgnoreRequest("Forbidden by robots.txt")
    assert middleware.process_exception(request, refused) is None
    challenge = Challenge(url, 403, "marker")
    assert middleware.process_exception(request, challenge) is None


def test_blocks_have_their_own_retry_budget() -> None:
    middleware = make_middleware()
    # two 503 retries already happened: the challenge still gets BLOCKED_RETRY_TIMES (2) retries
    request = sent(middleware, Request(STORY, meta={"retry_times": 2}))
    first = middleware.process_response(request, challenge_response())
    assert isinstance(first, Request)
    assert (first.meta["retry_times"], first.meta["blocked_times"]) == (3, 1)
    second = middleware.process_response(sent(middleware, first), challenge_response())
    assert isinstance(second, Request)
    assert (second.meta["retry_times"], second.meta["blocked_times"]) == (4, 2)
    with pytest.raises(Challenge):
        middleware.process_response(sent(middleware, second), challenge_response())
    assert not_before(first, second) == [2.0, 4.0]
