"""Render policy without a browser: config, completeness checks, per-request decisions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from scrapy import Request, signals
from scrapy.http import HtmlResponse
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from topics_crawler.browser.actions import (
    DOCUMENT_STATUS_JS,
    LOAD_MORE_JS,
    abort_heavy_resource,
    document_status,
    load_more_outcome,
)
from topics_crawler.browser.config import BrowserConfig
from topics_crawler.middlewares.render_policy import RenderPolicyMiddleware
from topics_crawler.pages import PageKind, missing_data, parse_page
from topics_crawler.pages._blocked import Block
from topics_crawler.signals import plain_http_refused
from topics_crawler.site.content import default_site
from topics_crawler.site.js_sections import JsSections, js_tag_page, story_shell
from topics_crawler.site.render import author_page, story_page
from topics_crawler.site.tag_page import tag_page
from topics_crawler.spiders.topics import TopicsSpider

SITE = default_site()
SITE.now = datetime(2026, 11, 30, 12, tzinfo=UTC)
TAG = SITE.tags["machine-learning"]
TAG_URL = "https://medium.com/tag/machine-learning"
STORY = SITE.stories[TAG.sections["Popular this week"][0]]
STORY_URL = SITE.story_url(STORY)
AUTHOR = SITE.authors[STORY.author]


# --- config -------------------------------------------------------------------------


def test_config_reads_render_settings() -> None:
    config = BrowserConfig.from_settings(
        Settings({"RENDER_MODE": "Never", "RENDER_TIME_BUDGET": "2.5", "RENDER_SCROLL_PAUSE": 0.2})
    )
    assert (config.mode, config.time_budget_ms, config.scroll_pause_ms) == ("never", 2500, 200)
    assert BrowserConfig.from_settings(Settings()).mode == "auto"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("RENDER_MODE", "sometimes", "RENDER_MODE must be one of auto, always, never"),
        ("RENDER_TIME_BUDGET", "0", "RENDER_TIME_BUDGET must be greater than 0"),
        ("RENDER_SCROLL_IDLE_TRIES", "-1", "RENDER_SCROLL_IDLE_TRIES must be greater than 0"),
    ],
)
def test_config_refuses_bad_values(name: str, value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BrowserConfig.from_settings(Settings({name: value}))


# --- completeness -------------------------------------------------------------------


def lacks(kind: str, body: bytes, url: str, wanted_stories: int | None = None) -> str | None:
    """What the parsed page lacks (the check reads the parser's result, parses nothing)."""
    page_kind: PageKind = "json" if kind == "history" else kind  # type: ignore[assignment]
    return missing_data(parse_page(body, url, kind=page_kind), wanted_stories)


def test_server_rendered_tag_page_is_complete() -> None:
    body = tag_page(SITE, TAG).encode()
    assert lacks("tag", body, TAG_URL) is None


def test_tag_page_without_its_script_sections_lacks_who_to_follow() -> None:
    body = js_tag_page(SITE, TAG, JsSections()).encode()
    assert lacks("tag", body, TAG_URL) == "who_to_follow"


def test_tag_page_with_fewer_cards_than_wanted_lacks_stories() -> None:
    body = tag_page(SITE, TAG).encode()
    assert lacks("tag", body, TAG_URL, wanted_stories=8) is None
    assert lacks("tag", body, TAG_URL, wanted_stories=50) == "stories"


def test_a_page_that_is_not_a_tag_page_lacks_its_sections() -> None:
    assert lacks("tag", b"<html><body><p>hi</p></body></html>", TAG_URL) == "tag_sections"


def test_entity_pages_with_state_are_complete_and_script_shells_are_not() -> None:
    assert lacks("story", story_page(SITE, STORY).encode(), STORY_URL) is None
    assert lacks("author", author_page(SITE, AUTHOR).encode(), AUTHOR.url) is None
    assert lacks("story", story_shell(STORY.id).encode(), STORY_URL) == "story"
    assert lacks("author", story_shell(STORY.id).encode(), AUTHOR.url) == "author"
    assert lacks("history", b"{}", TAG_URL) is None


def test_story_page_without_state_is_judged_by_its_html() -> None:
    page = story_page(SITE, STORY)
    start = page.index("<script>window.__APOLLO_STATE__")
    without_state = page[:start] + page[page.index("</script>", start) + len("</script>") :]
    assert b"postResult(" not in without_state.encode()
    assert lacks("story", without_state.encode(), STORY_URL) is None


# --- the middleware -----------------------------------------------------------------


def make_middleware(**settings: Any) -> RenderPolicyMiddleware:
    crawler = get_crawler(TopicsSpider, settings)
    crawler.spider = crawler._create_spider(tags="machine-learning", **settings.pop("args", {}))
    return RenderPolicyMiddleware.from_crawler(crawler)


def stats(middleware: RenderPolicyMiddleware) -> dict[str, Any]:
    return {k: v for k, v in middleware.stats.get_stats().items() if k.startswith("render/")}


def page_request(kind: str = "tag", url: str = TAG_URL, **meta: Any) -> Request:
    return Request(url, meta={"entity_kind": kind, **meta})


def methods(request: Request) -> list[str]:
    """First argument of each browser action: the JS evaluated, or the wait's page method."""
    return [str(pm.args[0]) for pm in request.meta["playwright_page_methods"]]


def test_auto_mode_sends_plain_requests_without_a_reason() -> None:
    middleware = make_middleware()
    request = page_request(playwright=True)
    middleware.process_request(request)
    assert "playwright" not in request.meta
    assert stats(middleware) == {}


def test_a_render_reason_gets_one_browser_render_then_plain_http() -> None:
    middleware = make_middleware()
    request = page_request("author", AUTHOR.url, render_reason="signin_wall")
    middleware.process_request(request)
    assert request.meta["playwright"] is True
    assert request.meta["render_count"] == 1
    assert "playwright_context" not in request.meta  # the crawl's own context
    assert methods(request)[-1] == DOCUMENT_STATUS_JS
    retry = request.replace()  # the blocked-page retry copies the meta
    middleware.process_request(retry)
    assert "playwright" not in retry.meta
    assert stats(middleware) == {
        "render/requests": 1,
        "render/requests/author": 1,
        "render/reason/signin_wall": 1,
    }


def test_every_challenge_retry_goes_through_a_fresh_browser_context() -> None:
    middleware = make_middleware()
    first = page_request("author", AUTHOR.url, render_reason="challenge")
    middleware.process_request(first)
    second = first.replace()  # the next blocked-page retry copies the meta
    middleware.process_request(second)
    assert [r.meta["playwright"] for r in (first, second)] == [True, True]
    assert [r.meta["playwright_context"] for r in (first, second)] == ["fresh-1", "fresh-2"]
    assert stats(middleware)["render/fresh_context"] == 2


def test_a_host_whose_waf_refused_plain_http_has_its_pages_rendered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    middleware = make_middleware()
    block = Block("waf", "status 403 with 'sorry, you have been blocked'", "8e21f0c4a9b7d356")
    medium_story = "https://medium.com/@ada/x-1a2b3c4d5e6f"
    before = page_request("story", medium_story)
    middleware.process_request(before)
    assert "playwright" not in before.meta
    for _ in range(2):  # said once, however often it is sent
        middleware.crawler.signals.send_catch_log(
            plain_http_refused, host="medium.com", block=block
        )
    story = page_request("story", medium_story, render_count=1)  # even one rendered before
    graphql = Request("https://medium.com/_/graphql", method="POST", meta={"entity_kind": "tag"})
    custom = page_request("story", STORY_URL)  # a custom domain
    for request in (story, graphql, custom):
        middleware.process_request(request)
    assert story.meta["playwright"] is True
    assert "playwright" not in graphql.meta  # no page: never rendered
    assert "playwright" not in custom.meta  # another host (another Cloudflare zone)
    assert stats(middleware)["render/reason/waf"] == 1
    assert stats(middleware)["render/switched_hosts"] == 1
    lines = [r.getMessage() for r in caplog.records if "refused plain HTTP" in r.getMessage()]
    assert lines == [
        "medium.com refused plain HTTP (a Cloudflare WAF refusal (status 403 with 'sorry, you "
        "have been blocked', Ray ID 8e21f0c4a9b7d356)): its page requests go through the "
        "browser from now on"
    ]


def test_with_render_mode_never_no_host_is_switched() -> None:
    middleware = make_middleware(RENDER_MODE="never")
    block = Block("waf", "status 403", None)
    middleware.crawler.signals.send_catch_log(plain_http_refused, host="medium.com", block=block)
    request = page_request("story", STORY_URL)
    middleware.process_request(request)
    assert "playwright" not in request.meta
    assert "render/switched_hosts" not in stats(middleware)


def test_tag_page_actions_load_cards_up_to_max_stories() -> None:
    middleware = make_middleware(args={"max_stories": "7"})
    request = page_request(render_reason="who_to_follow")
    middleware.process_request(request)
    load_more = next(
        pm for pm in request.meta["playwright_page_methods"] if pm.args[:1] == (LOAD_MORE_JS,)
    )
    assert load_more.args[1]["wanted"] == 7
    assert load_more.args[1]["budgetMs"] == 20_000


def test_without_max_stories_only_the_history_fallback_scrolls() -> None:
    middleware = make_middleware()
    first_screen = page_request(render_reason="who_to_follow")
    middleware.process_request(first_screen)
    assert LOAD_MORE_JS not in methods(first_screen)
    history = page_request(render_reason="history_fallback")
    middleware.process_request(history)
    load_more = [pm for pm in history.meta["playwright_page_methods"] if LOAD_MORE_JS in pm.args]
    assert load_more[0].args[1]["wanted"] is None


def test_never_mode_renders_nothing_and_counts_what_it_skipped() -> None:
    middleware = make_middleware(RENDER_MODE="never")
    request = page_request(render_reason="challenge", playwright=True)
    middleware.process_request(request)
    assert "playwright" not in request.meta
    assert stats(middleware) == {"render/skipped/challenge": 1}


def test_always_mode_renders_pages_but_not_robots_or_listings() -> None:
    middleware = make_middleware(RENDER_MODE="always")
    story = page_request("story", STORY_URL)
    robots = Request("https://medium.com/robots.txt")
    listing = Request("https://medium.com/_/graphql", method="POST", meta={"entity_kind": "tag"})
    for request in (story, robots, listing):
        middleware.process_request(request)
    assert story.meta["playwright"] is True
    assert "playwright" not in robots.meta
    assert "playwright" not in listing.meta


def plain_response(request: Request, body: bytes, **kwargs: Any) -> HtmlResponse:
    return HtmlResponse(kwargs.pop("url", TAG_URL), body=body, request=request, **kwargs)


def test_the_middleware_never_parses_a_plain_response() -> None:
    middleware = make_middleware()
    request = page_request()
    middleware.process_request(request)
    body = js_tag_page(SITE, TAG, JsSections()).encode()  # lacks "Who to follow"
    response = plain_response(request, body)
    assert middleware.process_response(request, response) is response
    assert stats(middleware) == {}


def spider_for(**args: Any) -> TopicsSpider:
    crawler = get_crawler(TopicsSpider, {})
    spider = TopicsSpider.from_crawler(crawler, tags="machine-learning", **args)
    crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
    return spider


def test_a_needs_browser_signal_becomes_one_browser_request() -> None:
    spider = spider_for()
    request = page_request()
    body = js_tag_page(SITE, TAG, JsSections()).encode()
    response = plain_response(request, body)
    result = parse_page(body, TAG_URL, kind="tag")
    signal = result.signal("needs_browser")
    assert signal is not None
    assert signal.what == "who_to_follow"
    again = spider.refetcher.request_for(response, result)
    assert isinstance(again, Request)
    assert (again.url, again.dont_filter, again.meta["render_reason"]) == (
        TAG_URL,
        True,
        "who_to_follow",
    )
    assert spider.crawler.stats is not None
    assert spider.crawler.stats.get_value("render/fallback/who_to_follow") == 1
    # rendered once already: used as it is, counted as incomplete
    rendered = plain_response(page_request(render_count=1), body)
    assert spider.refetcher.request_for(rendered, result) is None
    assert spider.crawler.stats.get_value("render/incomplete/who_to_follow") == 1


def test_complete_and_error_responses_are_not_fetched_again() -> None:
    """(Blocked responses never reach a callback: the blocked-page middleware retries them.)"""
    spider = spider_for()
    request = page_request()
    complete = plain_response(request, tag_page(SITE, TAG).encode())
    error = plain_response(request, b"oops", status=500)
    for response in (complete, error):
        result = parse_page(response.body, TAG_URL, kind="tag")
        assert spider.refetcher.request_for(response, result) is None
    assert spider.crawler.stats is not None
    assert not [k for k in spider.crawler.stats.get_stats() if k.startswith("render/")]


def test_fewer_cards_than_max_stories_are_loaded_by_the_browser_outside_history_mode() -> None:
    body = tag_page(SITE, TAG).encode()
    result = parse_page(body, TAG_URL, kind="tag")
    plain = spider_for(max_stories="50")
    again = plain.refetcher.request_for(plain_response(page_request(), body), result)
    assert again is not None
    assert again.meta["render_reason"] == "stories"
    history = spider_for(max_stories="50", history="newest")
    assert history.refetcher.request_for(plain_response(page_request(), body), result) is None


def test_history_mode_renders_a_tag_page_without_loading_more_cards() -> None:
    middleware = make_middleware(args={"max_stories": "300", "history": "newest"})
    request = page_request(render_reason="who_to_follow")
    middleware.process_request(request)
    assert request.meta["playwright"] is True
    assert LOAD_MORE_JS not in methods(request)
    fallback = page_request(render_reason="history_fallback")
    middleware.process_request(fallback)
    assert LOAD_MORE_JS in methods(fallback)  # the browser stands in for a failed listing


def test_rendered_response_gets_the_status_of_the_document_finally_shown() -> None:
    middleware = make_middleware()
    request = page_request("author", AUTHOR.url, render_reason="challenge")
    middleware.process_request(request)
    request.meta["playwright_page_methods"][-1].result = 200
    body = author_page(SITE, AUTHOR).encode()
    first = HtmlResponse(
        AUTHOR.url, status=403, headers={"cf-mitigated": "challenge"}, body=body, request=request
    )
    response = middleware.process_response(request, first)
    assert isinstance(response, HtmlResponse)
    assert response.status == 200
    assert b"cf-mitigated" not in response.headers
    assert stats(middleware)["render/status_replaced"] == 1


def test_action_results_are_read_back() -> None:
    middleware = make_middleware(args={"max_stories": "5"})
    request = page_request(render_reason="stories")
    middleware.process_request(request)
    actions = request.meta["playwright_page_methods"]
    assert (load_more_outcome(actions), document_status(actions)) == (None, None)
    for action in actions:
        if action.args[:1] == (LOAD_MORE_JS,):
            action.result = {"cards": 5, "rounds": 2, "stop": "enough"}
    actions[-1].result = 200
    assert load_more_outcome(actions) == {"cards": 5, "rounds": 2, "stop": "enough"}
    assert document_status(actions) == 200


class FakeRequest:
    def __init__(self, resource_type: str) -> None:
        self.resource_type = resource_type


@pytest.mark.parametrize(
    ("resource_type", "aborted"),
    [("image", True), ("font", True), ("media", True), ("script", False), ("fetch", False)],
)
def test_heavy_resources_are_aborted(resource_type: str, aborted: bool) -> None:
    assert abort_heavy_resource(FakeRequest(resource_type)) is aborted  # type: ignore[arg-type]


def test_with_zyte_api_a_page_to_render_is_asked_of_zyte_api_rendered() -> None:
    middleware = make_middleware(ZYTE_API_TRANSPARENT_MODE=True)
    tag = page_request(render_reason="who_to_follow")
    story = page_request("story", STORY_URL, render_reason="story")
    plain = page_request("story", STORY_URL)
    for request in (tag, story, plain):
        middleware.process_request(request)
    assert tag.meta["zyte_api_automap"] == {
        "browserHtml": True,
        "actions": [{"action": "scrollBottom"}],
    }
    assert story.meta["zyte_api_automap"] == {"browserHtml": True}
    assert "zyte_api_automap" not in plain.meta
    assert not any("playwright" in r.meta for r in (tag, story, plain))
    assert stats(middleware)["render/requests"] == 2
