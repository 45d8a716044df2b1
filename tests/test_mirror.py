"""MEDIUM_BASE_URL: requests go to the mirror, everything else sees canonical URLs."""

from __future__ import annotations

import pytest
from scrapy import Request, Spider
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from topics_crawler.middlewares.mirror import MediumMirrorMiddleware, MirrorMap
from topics_crawler.scheduling.fingerprint import CANONICAL_URL_META, CanonicalUrlFingerprinter
from topics_crawler.urls import MEDIUM_CUSTOM_DOMAIN_META

BASE = "http://127.0.0.1:8123"


def make_middleware(base: str = BASE) -> MediumMirrorMiddleware:
    crawler = get_crawler(Spider, {"MEDIUM_BASE_URL": base})
    return MediumMirrorMiddleware.from_crawler(crawler)


def test_off_when_base_is_medium() -> None:
    with pytest.raises(NotConfigured):
        make_middleware("https://medium.com/")


def test_bad_base_url_is_refused_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="MEDIUM_BASE_URL must be an http"):
        MirrorMap("ftp://mirror")


@pytest.mark.parametrize(
    ("canonical", "mirror", "custom"),
    [
        ("https://medium.com/tag/ai?x=1", f"{BASE}/tag/ai?x=1", False),
        ("https://medium.com/@ev", f"{BASE}/@ev", False),
        (
            "https://humanparts.medium.com/a-0123456789ab",
            f"{BASE}/_host/humanparts.medium.com/a-0123456789ab",
            False,
        ),
        (
            "https://wtfeconomy.com/a-0123456789ab",
            f"{BASE}/_host/wtfeconomy.com/a-0123456789ab",
            True,
        ),
    ],
)
def test_mirror_map_round_trip(canonical: str, mirror: str, custom: bool) -> None:
    mapping = MirrorMap(BASE)
    assert mapping.to_mirror(canonical, custom_domain=custom) == mirror
    assert mapping.to_canonical(mirror) == canonical


def test_mirror_map_leaves_other_hosts_alone() -> None:
    mapping = MirrorMap(BASE)
    assert mapping.to_mirror("https://wtfeconomy.com/a-0123456789ab") is None
    assert mapping.to_mirror("https://example.org/") is None
    assert mapping.to_canonical("https://example.org/x") == "https://example.org/x"


def test_mirror_with_path_prefix() -> None:
    mapping = MirrorMap("https://archive.example/medium/")
    assert mapping.to_mirror("https://medium.com/@ev") == "https://archive.example/medium/@ev"
    assert mapping.to_canonical("https://archive.example/medium/@ev") == "https://medium.com/@ev"


def test_request_rewritten_and_response_handed_back_canonical() -> None:
    middleware = make_middleware()
    request = Request("https://medium.com/tag/ai", meta={"entity_kind": "tag"})
    mirrored = middleware.process_request(request)
    assert isinstance(mirrored, Request)
    assert mirrored.url == f"{BASE}/tag/ai"
    assert mirrored.dont_filter
    assert mirrored.meta["entity_kind"] == "tag"
    assert middleware.process_request(mirrored) is None  # not rewritten twice
    response = HtmlResponse(mirrored.url, body=b"<html></html>", request=mirrored)
    back = middleware.process_response(mirrored, response)
    assert back.url == "https://medium.com/tag/ai"


def test_redirect_inside_the_mirror_keeps_canonical_identity() -> None:
    middleware = make_middleware()
    fingerprinter = CanonicalUrlFingerprinter()
    mirrored = middleware.process_request(Request("https://medium.com/p/0123456789ab"))
    assert isinstance(mirrored, Request)
    # RedirectMiddleware copies the meta of the redirected request to the new URL.
    redirected = mirrored.replace(url=f"{BASE}/@ev/a-0123456789ab")
    assert middleware.process_request(redirected) is None
    assert redirected.meta[CANONICAL_URL_META] == "https://medium.com/@ev/a-0123456789ab"
    canonical = Request("https://medium.com/@ev/a-0123456789ab")
    assert fingerprinter.fingerprint(redirected) == fingerprinter.fingerprint(canonical)
    response = HtmlResponse(redirected.url, body=b"<html></html>", request=redirected)
    assert middleware.process_response(redirected, response).url == canonical.url


def test_custom_domain_is_mirrored_once_not_again_and_again() -> None:
    middleware = make_middleware()
    flagged = Request(
        "https://tensorbeat.example/a-0123456789ab", meta={MEDIUM_CUSTOM_DOMAIN_META: True}
    )
    mirrored = middleware.process_request(flagged)
    assert isinstance(mirrored, Request)
    assert mirrored.url == f"{BASE}/_host/tensorbeat.example/a-0123456789ab"
    assert middleware.process_request(mirrored) is None
    robots = Request(f"{BASE}/robots.txt")  # robots.txt of the mirror, as RobotsTxt asks
    assert middleware.process_request(robots) is None


def test_custom_domain_requests_need_the_spider_flag() -> None:
    middleware = make_middleware()
    plain = Request("https://wtfeconomy.com/a-0123456789ab")
    assert middleware.process_request(plain) is None
    flagged = Request(plain.url, meta={MEDIUM_CUSTOM_DOMAIN_META: True})
    mirrored = middleware.process_request(flagged)
    assert isinstance(mirrored, Request)
    assert mirrored.url == f"{BASE}/_host/wtfeconomy.com/a-0123456789ab"


def test_fingerprint_is_that_of_the_canonical_url() -> None:
    middleware = make_middleware()
    fingerprinter = CanonicalUrlFingerprinter()
    canonical = Request("https://medium.com/@ev")
    mirrored = middleware.process_request(canonical)
    assert isinstance(mirrored, Request)
    assert fingerprinter.fingerprint(mirrored) == fingerprinter.fingerprint(canonical)
    # A copy to another URL (a redirect) no longer claims the old canonical URL.
    moved = mirrored.replace(url=f"{BASE}/@someone-else")
    assert fingerprinter.fingerprint(moved) != fingerprinter.fingerprint(canonical)
