"""Challenge pages and sign-in walls are recognised, retried with a render hook, then failed."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

import pytest
from scrapy import Request, Spider
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from tests.fixture_cases import FIXTURES
from topics_crawler.errors import REFUSED_STAT
from topics_crawler.middlewares.blocked import (
    HOLD_FOR_GOOD,
    ORIGIN_URL_META,
    RENDER_REASON_META,
    BlockedPageMiddleware,
    Challenge,
    SigninWall,
    WafRefusal,
)
from topics_crawler.middlewares.refused import SiteRefused
from topics_crawler.middlewares.retry_after import RETRY_NOT_BEFORE_META
from topics_crawler.pages._blocked import detect_block, is_signin_url
from topics_crawler.scheduling.fingerprint import CANONICAL_URL_META, MIRROR_URL_META
from topics_crawler.signals import host_paused, plain_http_refused
from topics_crawler.site.refusals import challenge_page, ray_id, waf_page
from topics_crawler.site.routes import Response as SiteResponse
from topics_crawler.spiders._helpers import failure_reason

STORY = "https://medium.com/@ev/welcome-to-medium-9e53ca408c48"
CLOUDFLARE_PAGE = """<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="refresh" content="390"></head><body><div class="main-wrapper">
<noscript>Enable JavaScript and cookies to continue</noscript></div>
<script>(function(){window._cf_chl_opt={cvId: '3',cZone: "medium.com",cType: 'managed'};
var a = document.createElement('script');
a.src = '/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8f0';
document.getElementsByTagName('head')[0].appendChild(a);}());</script></body></html>"""
WAF_PAGE = """<!DOCTYPE html><html class="no-js" lang="en-US"><head>
<title>Attention Required! | Cloudflare</title></head><body><div id="cf-wrapper">
<div id="cf-error-details" class="cf-error-details-wrapper"><h1 data-translate="block_headline">
Sorry, you have been blocked</h1><h2>You are unable to access</h2> medium.com</div>
<span>Cloudflare Ray ID: <strong class="font-semibold">8e21f0c4a9b7d356</strong></span>
</div></body></html>"""
SIGNIN_BODY = """<!DOCTYPE html><html><head><title>Sign in – Medium</title></head><body>
<h2>Sign in to continue reading</h2><button>Sign in with Google</button></body></html>"""
NORMAL_PAGE = """<!DOCTYPE html><html><head><title>Welcome – Medium</title></head><body>
<script>window.__CF$cv$params={r:'8e21f0c4a9b7d356'};var s=document.createElement('script');
s.src='/cdn-cgi/challenge-platform/scripts/precursor/main.js';</script>
<script>window.__APOLLO_STATE__ = {"ROOT_QUERY":{}}</script></body></html>"""


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
        # never a block page as data, whatever its status
        (200, STORY, CLOUDFLARE_PAGE, {}, "challenge"),
        (200, STORY, WAF_PAGE, {}, "waf"),
        (403, STORY, WAF_PAGE.encode(), {}, "waf"),
        (200, STORY, SIGNIN_BODY, {}, "signin_wall"),
        (None, STORY, WAF_PAGE, {}, "waf"),  # a saved page: the body alone
    ],
)
def test_blocked_responses_are_recognised(
    status: int | None, url: str, body: str | bytes, headers: dict[str, str], reason: str
) -> None:
    block = detect_block(status, url, body, headers)
    assert block is not None
    assert block.reason == reason
    assert block.evidence


@pytest.mark.parametrize(
    ("status", "url", "body", "headers"),
    [
        # Cloudflare injects its challenge-platform precursor into every normal page
        (200, STORY, NORMAL_PAGE, {}),
        (403, STORY, NORMAL_PAGE, {}),
        # a story about Cloudflare quoting its pages is a story: it holds Medium's data
        (200, STORY, NORMAL_PAGE.replace("</body>", WAF_PAGE + CLOUDFLARE_PAGE + "</body>"), {}),
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


#: The real refusals among the captures (2026), and what each is.
REAL_REFUSALS = {
    "challenge_managed__2scraper-2026.html": ("challenge", "a3bf6574af0257df"),
    "blocked_waf__2scraper-2026-redacted.html": ("waf", "a3bf432ecb5b18b9"),
}


def test_no_real_capture_looks_blocked(real_pages: Path) -> None:
    pages = sorted(p for p in real_pages.iterdir() if p.suffix in {".html", ".json", ".xml"})
    assert pages
    for page in pages:
        if page.name in REAL_REFUSALS:
            continue
        for status in (None, 200, 403, 503):
            assert detect_block(status, STORY, page.read_bytes()) is None, page.name


@pytest.mark.parametrize("name", sorted(REAL_REFUSALS))
def test_real_refusals_are_told_apart(real_pages: Path, name: str) -> None:
    reason, ray = REAL_REFUSALS[name]
    body = (real_pages / name).read_bytes()
    for status in (None, 200, 403):  # a saved page, and served with any status
        block = detect_block(status, "https://medium.com/tag/python", body)
        assert block is not None, name
        assert (block.reason, block.ray) == (reason, ray)
        assert block.transient is (reason == "challenge")


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


# --- Cloudflare's WAF refusal: the browser, then the crawl stopped ------------------------


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
    assert failure_reason(Failure(raised.value)) == "waf"
    [line] = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert line.startswith("oxidized.dev refused the crawl")
    later = Request("https://oxidized.dev/y-2b3c4d5e6f70", meta={"entity_kind": "story"})
    with pytest.raises(SiteRefused) as skipped:  # later requests to the host: never sent
        middleware.process_request(later)
    assert failure_reason(Failure(skipped.value)) == "refused_by_site"
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


def test_challenge_served_with_200_is_retried_too() -> None:
    middleware = make_middleware()
    request = sent(middleware, Request(STORY, meta={"entity_kind": "story"}))
    page = HtmlResponse(STORY, status=200, body=CLOUDFLARE_PAGE.encode(), encoding="utf-8")
    retry = middleware.process_response(request, page)
    assert isinstance(retry, Request)
    assert retry.meta[RENDER_REASON_META] == "challenge"


@pytest.mark.parametrize(("page", "reason"), [(waf_page, "waf"), (challenge_page, "challenge")])
def test_the_local_sites_refusals_are_variants_with_their_own_ray_ids(
    page: Callable[[str], SiteResponse], reason: str
) -> None:
    """Our own refusal pages, served at other URLs with other Ray IDs, read as the real ones
    (by their body: the challenge's ``cf-mitigated`` header left out)."""
    paths = ("/tag/rust", "/@ada-kowalska/embedded-rust-on-a-budget-6f708192a3b4")
    blocks = []
    for path in paths:
        served = page(path)
        url = "https://medium.com" + path
        blocks.append(detect_block(served.status, url, served.body))
    assert [b.reason if b else None for b in blocks] == [reason, reason]
    assert [b.ray if b else None for b in blocks] == [ray_id(path) for path in paths]
    assert len({ray_id(path) for path in paths}) == 2
