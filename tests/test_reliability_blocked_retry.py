"""Challenge pages and sign-in walls are retried with a render hook, then failed: the
blocked-page middleware's retries, their backoff and their own budget."""

from __future__ import annotations

import inspect

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Response
from twisted.python.failure import Failure

from tests.blocked_pages import (
    CLOCK,
    CLOUDFLARE_PAGE,
    STORY,
    challenge_response,
    make_middleware,
    not_before,
    sent,
)
from topics_crawler.middlewares.blocked import (
    ORIGIN_URL_META,
    RENDER_REASON_META,
    BlockedPageMiddleware,
    Challenge,
    SigninWall,
)
from topics_crawler.middlewares.download_failures import download_failure_reason
from topics_crawler.scheduling.fingerprint import CANONICAL_URL_META, MIRROR_URL_META
from topics_crawler.signals import host_paused


def test_retries_are_returned_at_once_nothing_awaits() -> None:
    assert not inspect.iscoroutinefunction(BlockedPageMiddleware.process_response)
    assert not inspect.iscoroutinefunction(BlockedPageMiddleware.process_exception)


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
    assert download_failure_reason(Failure(raised.value)) == "challenge"  # what the spider reports
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
    assert download_failure_reason(Failure(raised.value)) == "signin_wall"


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


def test_challenge_served_with_200_is_retried_too() -> None:
    middleware = make_middleware()
    request = sent(middleware, Request(STORY, meta={"entity_kind": "story"}))
    page = HtmlResponse(STORY, status=200, body=CLOUDFLARE_PAGE.encode(), encoding="utf-8")
    retry = middleware.process_response(request, page)
    assert isinstance(retry, Request)
    assert retry.meta[RENDER_REASON_META] == "challenge"
