"""The refusal pages the blocked-page tests read (a Cloudflare challenge, a WAF refusal, a
sign-in wall, a normal page carrying Cloudflare's precursor script) and the
:class:`~topics_crawler.middlewares.blocked.BlockedPageMiddleware` as they build it, on a
frozen clock."""

from __future__ import annotations

from scrapy import Request, Spider
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler

from topics_crawler.middlewares.blocked import BlockedPageMiddleware
from topics_crawler.scheduling.not_before import RETRY_NOT_BEFORE_META

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


def challenge_response(url: str = STORY) -> Response:
    return HtmlResponse(url, status=503, body=CLOUDFLARE_PAGE.encode(), encoding="utf-8")


def sent(middleware: BlockedPageMiddleware, request: Request) -> Request:
    """The request as the downloader sees it after this middleware's process_request."""
    middleware.process_request(request)
    return request
