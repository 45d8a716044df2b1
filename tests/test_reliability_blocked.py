"""Challenge pages, WAF refusals and sign-in walls are recognised (:func:`detect_block`): in
responses, in the real captures and in our own refusal pages; ordinary pages, and every other
capture and fixture, are not. The middleware's retries are in
``tests/test_reliability_blocked_retry.py`` and ``tests/test_reliability_blocked_waf.py``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.blocked_pages import CLOUDFLARE_PAGE, NORMAL_PAGE, SIGNIN_BODY, STORY, WAF_PAGE
from tests.fixture_cases import FIXTURES
from topics_crawler.pages._blocked import detect_block, is_signin_url
from topics_crawler.site.refusals import challenge_page, ray_id, waf_page
from topics_crawler.site.routes import Response as SiteResponse


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
