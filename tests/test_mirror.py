"""MEDIUM_BASE_URL: requests go to the mirror, everything else sees canonical URLs."""

from __future__ import annotations

import pytest
from scrapy import Request, Spider
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from topics_crawler.fingerprint import CanonicalUrlFingerprinter
from topics_crawler.middlewares.mirror import (
    MEDIUM_CUSTOM_DOMAIN_META,
    MediumMirrorMiddleware,
    MirrorMap,
)

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
    spider = Spider("s")
    request = Request("https://medium.com/tag/ai", meta={"entity_kind": "tag"})
    mirrored = middleware.process_request(request, spider)
    assert isinstance(mirrored, Request)
    assert mirrored.url == f"{BASE}/tag/ai"
    assert mirrored.dont_filter
    assert mirrored.meta["entity_kind"] == "tag"
    assert middleware.process_request(mirrored, spider) is None  # not rewritten twice
    response = HtmlResponse(mirrored.url, body=b"<html></html>", request=mirrored)
    back = middleware.process_response(mirrored, response, spider)
    assert back.url == "https://medium.com/tag/ai"


def test_redirect_location_into_the_mirror_is_mapped_back() -> None:
    middleware = make_middleware()
    spider = Spider("s")
    mirrored = middleware.process_request(Request("https://medium.com/p/0123456789ab"), spider)
    assert isinstance(mirrored, Request)
    for location in (b"/@ev/a-0123456789ab", f"{BASE}/@ev/a-0123456789ab".encode()):
        response = HtmlResponse(
            mirrored.url, status=301, headers={"Location": location}, request=mirrored
        )
        back = middleware.process_response(mirrored, response, spider)
        assert back.headers[b"Location"] == b"https://medium.com/@ev/a-0123456789ab"


def test_custom_domain_requests_need_the_spider_flag() -> None:
    middleware = make_middleware()
    spider = Spider("s")
    plain = Request("https://wtfeconomy.com/a-0123456789ab")
    assert middleware.process_request(plain, spider) is None
    flagged = Request(plain.url, meta={MEDIUM_CUSTOM_DOMAIN_META: True})
    mirrored = middleware.process_request(flagged, spider)
    assert isinstance(mirrored, Request)
    assert mirrored.url == f"{BASE}/_host/wtfeconomy.com/a-0123456789ab"


def test_fingerprint_is_that_of_the_canonical_url() -> None:
    middleware = make_middleware()
    fingerprinter = CanonicalUrlFingerprinter()
    canonical = Request("https://medium.com/@ev")
    mirrored = middleware.process_request(canonical, Spider("s"))
    assert isinstance(mirrored, Request)
    assert fingerprinter.fingerprint(mirrored) == fingerprinter.fingerprint(canonical)
    # A copy to another URL (a redirect) no longer claims the old canonical URL.
    moved = mirrored.replace(url=f"{BASE}/@someone-else")
    assert fingerprinter.fingerprint(moved) != fingerprinter.fingerprint(canonical)
