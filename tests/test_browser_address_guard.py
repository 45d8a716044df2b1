"""What Chromium fetches passes the address check too: private addresses, odd ports, names
resolving to loopback or metadata addresses are aborted; the mirror is the one allowance."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from topics_crawler.browser.address_guard import BrowserAddressGuard

NAMES = {
    "medium.com": ["162.159.152.4"],
    "cdn.example": ["93.184.215.14"],
    "evil.medium.com": ["127.0.0.1"],
    "metadata.nip.io": ["169.254.169.254"],
    "split.example": ["93.184.215.14", "10.0.0.8"],  # one private address is enough
}


@dataclass
class FakeRequest:
    url: str
    resource_type: str = "document"


async def fake_resolve(host: str) -> list[str]:
    if host not in NAMES:
        raise OSError(f"{host}: no such name")
    return NAMES[host]


def guard(inner: object = None) -> BrowserAddressGuard:
    return BrowserAddressGuard(inner, mirror="127.0.0.1:8123", resolve=fake_resolve)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("url", "aborted"),
    [
        ("https://medium.com/tag/llm", False),
        ("https://cdn.example/app.js", False),
        ("data:image/png;base64,AAAA", False),
        ("http://127.0.0.1:8123/tag/llm", False),  # the mirror
        ("http://127.0.0.1:6379/", True),  # loopback, not the mirror
        ("http://169.254.169.254/latest/meta-data/", True),
        ("http://[::1]/", True),
        ("https://evil.medium.com/", True),
        ("https://metadata.nip.io/", True),
        ("https://split.example/", True),
        ("https://medium.com:8443/", True),
        ("file:///etc/passwd", True),
        ("https://unknown.example/", False),  # unresolvable: Chromium fails on its own
    ],
)
def test_the_browser_fetches_public_addresses_only(url: str, aborted: bool) -> None:
    assert asyncio.run(guard()(FakeRequest(url))) is aborted


def test_what_the_configured_predicate_aborts_needs_no_lookup() -> None:
    looked_up: list[str] = []

    async def counting(host: str) -> list[str]:
        looked_up.append(host)
        return await fake_resolve(host)

    predicate = BrowserAddressGuard(
        lambda request: request.resource_type == "image", resolve=counting
    )
    assert asyncio.run(predicate(FakeRequest("https://cdn.example/a.png", "image")))
    assert looked_up == []
    assert not asyncio.run(predicate(FakeRequest("https://cdn.example/a.js", "script")))
    assert looked_up == ["cdn.example"]
