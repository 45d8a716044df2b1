"""Links stay on Medium after DNS too: names resolving to private addresses, odd ports,
redirects to either — refused; the configured mirror is the one loopback allowance.

Names are mapped to 127.0.0.1 by a test resolver (:mod:`tests.dns_map`), which
keeps the project's address check and never asks the real DNS.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from scrapy import Request, Spider
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from tests.crawl_helpers import ROOT
from tests.dns_map import MappedResolver
from tests.services import serving
from topics_crawler.safety.links import UrlPolicy
from topics_crawler.safety.resolver import UnsafeAddress, is_public_address, mirror_host
from topics_crawler.safety.secrets import MediumCookieMiddleware, is_medium_request

SID = "1:c2Vzc2lvbi1vZi1hLXRlc3Qtb25seQ"


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.215.14", True),
        ("2606:4700::6810:84e5", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.9", False),
        ("192.168.0.1", False),
        ("169.254.169.254", False),  # cloud metadata
        ("100.64.0.1", False),  # carrier-grade NAT
        ("0.0.0.0", False),
        ("::", False),
        ("::1", False),
        ("fe80::1", False),
        ("fd00::1", False),
        ("::ffff:127.0.0.1", False),
        ("224.0.0.1", False),
        ("not an address", False),
    ],
)
def test_public_addresses(address: str, public: bool) -> None:
    assert is_public_address(address) is public


def resolver(mapping: dict[str, str], mirror: str | None = None) -> MappedResolver:
    from twisted.internet import reactor

    return MappedResolver(reactor, mapping, [mirror_host(mirror)] if mirror else [])  # type: ignore[list-item,arg-type]


def resolved(resolver: MappedResolver, name: str) -> str | Failure:
    results: list[str | Failure] = []
    resolver.getHostByName(name).addBoth(results.append)
    return results[0]


def test_names_resolving_to_private_addresses_are_refused() -> None:
    names = {
        "medium.com": "127.0.0.1",
        "evil.medium.com": "127.0.0.1",
        "attacker.example": "10.0.0.5",
        "metadata.nip.io": "169.254.169.254",
        "ok.medium.com": "162.159.152.4",
    }
    dns = resolver(names, mirror="http://mirror.lan:8080")
    for name in ("medium.com", "evil.medium.com", "attacker.example", "metadata.nip.io"):
        outcome = resolved(dns, name)
        assert isinstance(outcome, Failure), name
        assert isinstance(outcome.value, UnsafeAddress)
        assert names[name] in str(outcome.value)
    assert resolved(dns, "ok.medium.com") == "162.159.152.4"


def test_only_the_configured_mirror_may_resolve_to_loopback() -> None:
    dns = resolver({"mirror.lan": "127.0.0.1", "other.lan": "127.0.0.1"}, "http://mirror.lan:81")
    assert resolved(dns, "mirror.lan") == "127.0.0.1"
    refused = resolved(dns, "other.lan")
    assert isinstance(refused, Failure)
    assert isinstance(refused.value, UnsafeAddress)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://evil.medium.com:6379/", "port"),
        ("https://medium.com:8443/tag/llm", "port"),
        ("http://medium.com:22/", "port"),
        ("https://medium.com:443/tag/llm", None),
        ("http://medium.com:80/tag/llm", None),
        ("http://127.0.0.1:6379/", "private_address"),  # loopback, not the mirror's port
        ("http://127.0.0.1:8123/tag/llm", None),  # the mirror itself
    ],
)
def test_ports_other_than_80_and_443_are_refused(url: str, reason: str | None) -> None:
    assert UrlPolicy(allowed_netlocs=["127.0.0.1:8123"]).refusal(url) == reason


def test_a_configured_port_is_allowed() -> None:
    assert UrlPolicy(allowed_ports=[8443]).refusal("https://medium.com:8443/x") is None


@pytest.mark.parametrize(
    ("url", "gets_cookie"),
    [
        ("https://medium.com/tag/llm", True),
        ("https://medium.com:443/tag/llm", True),
        ("https://humanparts.medium.com/x", True),
        ("http://medium.com/tag/llm", False),  # plain HTTP: the cookie would travel in clear
        ("https://evil.medium.com:6379/", False),
        ("https://medium.com:8443/", False),
        ("https://wtfeconomy.com/x", False),
    ],
)
def test_the_session_goes_to_medium_over_https_on_its_default_port(
    url: str, gets_cookie: bool
) -> None:
    assert is_medium_request(url) is gets_cookie
    middleware = MediumCookieMiddleware.from_crawler(get_crawler(Spider, {"MEDIUM_SID": SID}))
    request = Request(url)
    middleware.process_request(request)
    assert (b"sid=" in (request.headers.get("Cookie") or b"")) is gets_cookie


class RedirectingHandler(BaseHTTPRequestHandler):
    """``/tag/<slug>`` redirects to the hostile URL named for the slug; every request is kept."""

    targets: dict[str, str] = {}  # noqa: RUF012 - set once per test, read by handler threads
    seen: list[tuple[str, str, str]] = []  # noqa: RUF012 - (Host, path, Cookie)

    def do_GET(self) -> None:
        self.seen.append((self.headers.get("Host", ""), self.path, self.headers.get("Cookie", "")))
        target = self.targets.get(self.path.rsplit("/", 1)[-1])
        if self.path.startswith("/tag/") and target:
            self.send_response(302)
            self.send_header("Location", target)
        else:
            self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def redirecting_server() -> Iterator[int]:
    RedirectingHandler.seen = []
    with serving(RedirectingHandler) as url:
        yield int(url.rsplit(":", 1)[1])


def crawl(tmp_path: Path, tags: str, settings: dict[str, str]) -> tuple[int, dict, str]:
    stats_path, log_path = tmp_path / "stats.json", tmp_path / "crawl.log"
    command = [sys.executable, "-m", "scrapy", "crawl", "topics", "-a", f"tags={tags}"]
    command += ["-O", str(tmp_path / "items.jsonl")]
    all_settings = {
        "STATS_FILE": str(stats_path),
        "LOG_FILE": str(log_path),
        "FAILURES_FILE": str(tmp_path / "failures.jsonl"),
        "TWISTED_DNS_RESOLVER": "tests.dns_map.MappedResolver",
        "RETRY_TIMES": "0",
        "AUTOTHROTTLE_ENABLED": "False",
        **settings,
    }
    for name, value in all_settings.items():
        command += ["-s", f"{name}={value}"]
    env = {**os.environ, "MEDIUM_SID": SID}
    env.pop("MEDIUM_BASE_URL", None)
    process = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    stats = json.loads(stats_path.read_text("utf-8")) if stats_path.exists() else {}
    log = (log_path.read_text("utf-8") if log_path.exists() else "") + process.stderr
    return process.returncode, stats, log


@pytest.mark.integration
def test_medium_itself_resolving_to_loopback_is_never_fetched(
    redirecting_server: int, tmp_path: Path
) -> None:
    """No mirror configured: medium.com mapped to 127.0.0.1 must not be connected to."""
    mapping = {"medium.com": "127.0.0.1", "www.medium.com": "127.0.0.1"}
    returncode, stats, log = crawl(
        tmp_path, "llm", {"TEST_DNS_MAP": json.dumps(mapping), "LINK_SAFETY_ALLOWED_PORTS": ""}
    )
    assert returncode == 1, log[-2000:]  # nothing fetched: the health check fails the crawl
    assert stats.get("safety/refused/private_address_dns", 0) >= 1, stats
    assert stats.get("downloader/response_count", 0) == 0
    assert "resolves to 127.0.0.1" in log
    failures = [json.loads(line) for line in (tmp_path / "failures.jsonl").read_text().splitlines()]
    assert [f["reason"] for f in failures] == ["unsafe_url"]
    assert RedirectingHandler.seen == []


@pytest.mark.integration
def test_redirects_to_hostile_places_are_refused(redirecting_server: int, tmp_path: Path) -> None:
    port = redirecting_server
    RedirectingHandler.targets = {
        # allowed host and port by configuration, but its name resolves to loopback
        "alpha": f"http://attacker.example:{port}/stolen-alpha",
        "bravo": "https://evil.medium.com:6379/stolen-bravo",  # a Medium name, odd port
        "charlie": f"http://127.0.0.1:{port + 1}/stolen-charlie",  # loopback, not the mirror
        "delta": f"http://localhost:{port}/stolen-delta",
        "echo": "http://169.254.169.254/latest/meta-data/",
        "foxtrot": f"http://metadata.nip.io:{port}/stolen-foxtrot",
    }
    mapping = {
        "attacker.example": "127.0.0.1",
        "evil.medium.com": "127.0.0.1",
        "metadata.nip.io": "169.254.169.254",
    }
    returncode, stats, log = crawl(
        tmp_path,
        ",".join(RedirectingHandler.targets),
        {
            "MEDIUM_BASE_URL": f"http://127.0.0.1:{port}",
            "TEST_DNS_MAP": json.dumps(mapping),
            "LINK_SAFETY_ALLOWED_HOSTS": "attacker.example,metadata.nip.io",
            "LINK_SAFETY_ALLOWED_PORTS": str(port),
        },
    )
    assert returncode == 1, log[-2000:]
    paths = [path for _host, path, _cookie in RedirectingHandler.seen]
    assert sorted(p for p in paths if p.startswith("/tag/")) == sorted(
        f"/tag/{slug}" for slug in RedirectingHandler.targets
    )
    assert not [p for p in paths if "stolen" in p], paths
    assert all(host == f"127.0.0.1:{port}" for host, _path, _cookie in RedirectingHandler.seen)
    # alpha and foxtrot, each with the robots.txt of its host
    assert stats.get("safety/refused/private_address_dns") == 4, stats
    for stolen in (
        "stolen-alpha: attacker.example resolves to 127.0.0.1",
        "stolen-foxtrot: metadata.nip.io resolves to 169.254.169.254",
    ):
        assert stolen in log
    assert stats.get("safety/refused/port") == 1, stats  # bravo
    assert stats.get("safety/refused/private_address") == 3, stats  # charlie, delta, echo
    assert SID not in log
