"""Medium URL rules: canonical form, post ids, link kinds."""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

import pytest

from topics_crawler.urls import (
    MAX_URL_LENGTH,
    _join,
    canonical_url,
    classify_url,
    is_medium_domain,
    is_medium_host,
    post_id_from_url,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "http://Medium.com/@ev/Some-Post-9e53ca408c48?source=x#y",
            "https://medium.com/@ev/Some-Post-9e53ca408c48",
        ),
        ("https://www.medium.com/tag/ai/", "https://medium.com/tag/ai"),
        ("https://medium.com", "https://medium.com/"),
        ("https://medium.com//tag//ai", "https://medium.com/tag/ai"),
        (
            "https://humanparts.medium.com:443/x-c9700a7cf36d",
            "https://humanparts.medium.com/x-c9700a7cf36d",
        ),
        ("http://127.0.0.1:8080/tag/ai", "https://127.0.0.1:8080/tag/ai"),
        ("https://medium.com/%40ev", "https://medium.com/@ev"),
        (
            "https://medium.com/p/caf%C3%A9-%C3%A0-9e53ca408c48",
            "https://medium.com/p/caf%C3%A9-%C3%A0-9e53ca408c48",
        ),
        (
            "https://medium.com/p/café-à-9e53ca408c48",
            "https://medium.com/p/caf%C3%A9-%C3%A0-9e53ca408c48",
        ),
        ("https://medium.com/tag/c%2B%2B", "https://medium.com/tag/c++"),
        ("javascript:alert(1)", None),
        ("data:text/html,hi", None),
        ("mailto:a@b.c", None),
        ("", None),
        ("https://medium.com/" + "a" * MAX_URL_LENGTH, None),
    ],
)
def test_canonical_url(url: str, expected: str | None) -> None:
    assert canonical_url(url) == expected


def test_canonical_url_resolves_relative_links() -> None:
    assert (
        canonical_url("/@ev?source=card", base="https://medium.com/tag/ai")
        == "https://medium.com/@ev"
    )


@pytest.mark.parametrize(
    ("url", "post_id"),
    [
        ("https://medium.com/@kenmazaika/why-im-betting-on-elixir-7c8f847b58", "7c8f847b58"),
        (
            "https://medium.com/webpack/webpack-3-official-release-15fd2dd8f07b?source=x",
            "15fd2dd8f07b",
        ),
        ("https://medium.com/p/c9700a7cf36d", "c9700a7cf36d"),
        ("medium://p/9e53ca408c48", "9e53ca408c48"),
        (
            "https://medium.com/@ransu.massol/recherche-non-%C3%A0-une-loi-be507f7cf761",
            "be507f7cf761",
        ),
        ("https://medium.com/@user/twitter-adsense", None),
        ("https://medium.com/tag/machine-learning", None),
        ("https://medium.com/@user/deadbeef", None),
        ("http://[broken-ipv6/x-0123456789ab", None),  # a feed guid the fuzzer broke
    ],
)
def test_post_id_from_url(url: str, post_id: str | None) -> None:
    assert post_id_from_url(url) == post_id


@pytest.mark.parametrize(
    ("url", "kind", "key"),
    [
        ("https://medium.com/tag/Distributed-Training?source=topic", "tag", "distributed-training"),
        ("https://medium.com/tag/ai/archive/2020/01", "tag", "ai"),
        ("https://medium.com/@Ev?source=follow", "author", "ev"),
        ("https://medium.com/@ev/welcome-9e53ca408c48", "story", "9e53ca408c48"),
        ("https://medium.com/pinterest-engineering", "publication", "pinterest-engineering"),
        ("https://medium.com/pinterest-engineering/a-post-0123456789ab", "story", "0123456789ab"),
        ("https://ev.medium.com/welcome-to-medium-9e53ca408c48", "story", "9e53ca408c48"),
        ("https://medium.com/p/c9700a7cf36d", "story", "c9700a7cf36d"),
    ],
)
def test_classify_url(url: str, kind: str, key: str) -> None:
    link = classify_url(url)
    assert link is not None
    assert (link.kind, link.key) == (kind, key)
    assert "?" not in link.url


@pytest.mark.parametrize(
    "url",
    [
        "https://medium.com/m/signin?redirect=x",
        "https://medium.com/me/settings",
        "https://medium.com/plans",
        "https://medium.com/search?q=ai",
        "https://medium.com/_/graphql",
        "https://medium.com/@ev/followers/extra",
        "https://miro.medium.com/v2/resize:fill:88:88/1*abc.png",
        "https://help.medium.com/hc/en-us",
        "https://example.com/some-post-0123456789ab",
        "http://10.0.0.1/tag/ai",
        "https://medium.com.evil.com/tag/ai",
        "javascript:void(0)",
    ],
)
def test_classify_url_refuses_non_entities(url: str) -> None:
    assert classify_url(url) is None


def test_custom_domains_only_when_declared() -> None:
    url = "https://wtfeconomy.com/wtf-whats-the-future-e52ab9515573"
    assert classify_url(url) is None
    link = classify_url(url, custom_domains=["wtfeconomy.com"])
    assert link is not None
    assert link.kind == "story"
    assert link.key == "e52ab9515573"
    home = classify_url("https://wtfeconomy.com/", custom_domains=["wtfeconomy.com"])
    assert home is not None
    assert home.kind == "publication"


def test_is_medium_host() -> None:
    assert is_medium_host("medium.com")
    assert is_medium_host("WWW.Medium.com")
    assert is_medium_host("humanparts.medium.com")
    assert not is_medium_host("miro.medium.com")
    assert not is_medium_host("notmedium.com")
    assert not is_medium_host("medium.com.evil.com")


JOIN_BASES = [
    "https://medium.com/tag/x",
    "https://medium.com",
    "https://medium.com/a/b?q#f",
    "http://127.0.0.1:8080/x",
    "https://medium.com?x=1",
    "HTTPS://Medium.com/a",
    "https://medium.com/a/b/",
]
JOIN_HREFS = ["/@u?source=1", "/", "c", "//other.com/x", "https://x.com/y", "?q=1", "#f",
              "/a/../b", "/./x", "../up", "/a/.hidden", "/tag/comp%C3%A9tition"]  # fmt: skip


@pytest.mark.parametrize("base", JOIN_BASES)
@pytest.mark.parametrize("href", JOIN_HREFS)
def test_fast_join_agrees_with_urljoin(base: str, href: str) -> None:
    # The scheme's case aside (urlsplit lowercases it), the fast path is urljoin.
    ours, theirs = urlsplit(_join(base, href)), urlsplit(urljoin(base, href))
    assert ours._replace(scheme="") == theirs._replace(scheme="")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://user:pw@Medium.com:8080/a", "https://medium.com:8080/a"),
        ("http://medium.com@evil.com/x", "https://evil.com/x"),
        ("http://medium.com:99999/x", None),
        ("http://medium.com:abc/x", None),
        ("http://medium.com:/x", "https://medium.com/x"),
        ("HTTP://MEDIUM.COM./tag/AI", "https://medium.com/tag/AI"),
        ("https://medium.com/a\tb", "https://medium.com/ab"),
        ("http://[::1/x", None),
        ("https:///nohost", None),
    ],
)
def test_canonical_url_of_unusual_shapes(url: str, expected: str | None) -> None:
    assert canonical_url(url, base="https://medium.com/@x/y-0123456789ab") == expected


def test_a_medium_looking_user_info_does_not_make_a_medium_link() -> None:
    assert classify_url("http://medium.com@evil.com/tag/ai") is None


def test_is_medium_domain() -> None:
    assert is_medium_domain("medium.com")
    assert is_medium_domain("miro.medium.com")
    assert not is_medium_domain("notmedium.com")
    assert not is_medium_domain("medium.com.evil.com")
