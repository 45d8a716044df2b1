"""Hostile links are never requested: other hosts, private addresses, odd schemes, huge URLs."""

from __future__ import annotations

import logging

import pytest
from scrapy import Request, Spider
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from topics_crawler.middlewares.download_failures import download_failure_reason
from topics_crawler.safety.links import (
    LinkSafetyMiddleware,
    UnsafeUrl,
    UrlPolicy,
    is_private_host,
    mirror_netloc,
)
from topics_crawler.urls import MEDIUM_CUSTOM_DOMAIN_META

MIRROR = "http://127.0.0.1:8123"


@pytest.mark.parametrize(
    "url",
    [
        "https://medium.com/tag/llm",
        "https://www.medium.com/@ev",
        "https://humanparts.medium.com/the-mtg-color-wheel-c9700a7cf36d",
        "https://miro.medium.com/max/1400/1*abc.png",
        "http://medium.com/p/c9700a7cf36d",
    ],
)
def test_medium_urls_are_allowed(url: str) -> None:
    assert UrlPolicy().refusal(url) is None


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("javascript:alert(document.cookie)", "scheme"),
        ("data:text/html;base64,PHNjcmlwdD4=", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("ftp://medium.com/x", "scheme"),
        ("https://medium.com/" + "a" * 3000, "too_long"),
        ("https://evil.example/medium.com", "other_host"),
        ("https://medium.com.evil.example/tag/llm", "other_host"),
        ("https://notmedium.com/tag/llm", "other_host"),
        ("http://127.0.0.1:8123/tag/llm", "private_address"),  # no mirror configured
        ("http://localhost/admin", "private_address"),
        ("http://10.0.0.7/", "private_address"),
        ("http://192.168.1.1/", "private_address"),
        ("http://169.254.169.254/latest/meta-data/", "private_address"),
        ("http://[::1]:8080/", "private_address"),
        ("http://[::ffff:10.0.0.1]/", "private_address"),
        ("http://0.0.0.0/", "private_address"),
        ("http://2130706433/", "private_address"),
        ("http://0x7f000001/", "private_address"),
        ("http://printer.local/", "private_address"),
        ("http://[::1/", "bad_url"),
        ("https:///nohost", "bad_url"),
    ],
)
def test_hostile_urls_are_refused(url: str, reason: str) -> None:
    assert UrlPolicy().refusal(url) == reason


def test_a_vouched_custom_domain_is_allowed_but_never_a_private_one() -> None:
    policy = UrlPolicy()
    assert policy.refusal("https://wtfeconomy.com/wtf-e52ab9515573") == "other_host"
    assert policy.refusal("https://wtfeconomy.com/wtf-e52ab9515573", custom_domain=True) is None
    assert policy.refusal("http://10.1.2.3/x-e52ab9515573", custom_domain=True) == (
        "private_address"
    )


def test_private_host_helper() -> None:
    assert is_private_host("LOCALHOST.")
    assert is_private_host("100.64.0.1")  # carrier-grade NAT is not global
    assert not is_private_host("8.8.8.8")
    assert not is_private_host("medium.com")


def test_mirror_netloc() -> None:
    assert mirror_netloc(MIRROR) == "127.0.0.1:8123"
    assert mirror_netloc("https://medium.com") is None
    assert mirror_netloc(None) is None


def make_middleware(**settings: object) -> LinkSafetyMiddleware:
    crawler = get_crawler(Spider, settings)
    return LinkSafetyMiddleware.from_crawler(crawler)


def refused(middleware: LinkSafetyMiddleware, request: Request) -> UnsafeUrl:
    with pytest.raises(UnsafeUrl) as raised:
        middleware.process_request(request)
    return raised.value


def test_loopback_mirror_allows_only_its_own_host_and_port() -> None:
    middleware = make_middleware(MEDIUM_BASE_URL=MIRROR)
    assert middleware.process_request(Request(f"{MIRROR}/tag/llm")) is None
    assert middleware.process_request(Request("https://medium.com/tag/llm")) is None
    assert refused(middleware, Request("http://127.0.0.1:8124/tag/llm")).reason == (
        "private_address"
    )
    assert refused(middleware, Request("http://127.0.0.1/")).reason == "private_address"


def test_refusals_are_counted_logged_and_reported_as_unsafe_url(
    caplog: pytest.LogCaptureFixture,
) -> None:
    middleware = make_middleware()
    long_url = "https://medium.com/@ev/" + "x" * 5000
    with caplog.at_level(logging.WARNING, logger="topics_crawler.safety.links"):
        error = refused(middleware, Request(long_url))
        refused(middleware, Request("https://evil.example/"))
    assert error.reason == "too_long"
    assert download_failure_reason(Failure(error)) == "unsafe_url"
    stats = middleware.crawler.stats
    assert stats is not None
    assert stats.get_value("safety/refused/too_long") == 1
    assert stats.get_value("safety/refused/other_host") == 1
    assert "Refused other_host URL https://evil.example/" in caplog.text
    assert "(5023 chars)" in caplog.text
    assert len(caplog.text) < 2000  # the absurd URL is shortened in the log


def test_redirect_from_medium_to_a_private_address_is_not_followed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    middleware = make_middleware()
    redirect = Request(
        "http://169.254.169.254/latest/meta-data/",
        meta={"redirect_urls": ["https://medium.com/p/c9700a7cf36d"], "redirect_times": 1},
    )
    with caplog.at_level(logging.WARNING, logger="topics_crawler.safety.links"):
        assert refused(middleware, redirect).reason == "private_address"
    assert "redirected from https://medium.com/p/c9700a7cf36d" in caplog.text


def test_custom_domain_trust_is_not_inherited_by_a_redirect() -> None:
    middleware = make_middleware()
    vouched = Request(
        "https://wtfeconomy.com/wtf-e52ab9515573", meta={MEDIUM_CUSTOM_DOMAIN_META: 1}
    )
    assert middleware.process_request(vouched) is None
    robots = Request("https://wtfeconomy.com/robots.txt")  # robots.txt of a trusted domain
    assert middleware.process_request(robots) is None
    onward = Request(
        "https://elsewhere.example/",
        meta={MEDIUM_CUSTOM_DOMAIN_META: 1, "redirect_urls": [vouched.url]},
    )
    assert refused(middleware, onward).reason == "other_host"


def test_allowed_hosts_setting() -> None:
    middleware = make_middleware(LINK_SAFETY_ALLOWED_HOSTS=["cdn.example.org"])
    assert middleware.process_request(Request("https://cdn.example.org/a.png")) is None


def test_link_safety_runs_before_robots_and_the_mirror() -> None:
    from topics_crawler import settings

    position = settings.DOWNLOADER_MIDDLEWARES["topics_crawler.safety.links.LinkSafetyMiddleware"]
    assert position is not None
    assert position < 100  # RobotsTxtMiddleware
    assert (
        position
        < settings.DOWNLOADER_MIDDLEWARES[
            "topics_crawler.middlewares.mirror.MediumMirrorMiddleware"
        ]
    )
