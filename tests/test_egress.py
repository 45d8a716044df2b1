"""Egress the way Scrapy users expect: proxies through Scrapy's own ``HttpProxyMiddleware``
(with the address checks kept), Zyte API through scrapy-zyte-api (one setting), and
``DOWNLOAD_BIND_ADDRESS`` — each crawl against the local site through a test server of
``tests/egress_servers.py`` that records what reached it. The User-Agent stays the
project's own through every egress.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from scrapy.settings import Settings

from tests.crawl_helpers import CrawlRun, crawl_in_process
from tests.egress_servers import forward_proxy, zyte_api_stand_in
from topics_crawler import settings as project_settings
from topics_crawler.egress.zyte import ZyteApiEgress
from topics_crawler.errors import CrawlNotStarted
from topics_crawler.site.server import SiteView

pytestmark = pytest.mark.integration
TAG = "machine-learning"
ARGS = (f"tags={TAG}", "max_stories=3", "follow=stories")


def entity_keys(run: CrawlRun) -> set[tuple[str, str]]:
    return {
        (item["item_type"], item.get("story_id") or item.get("tag") or "") for item in run.items
    }


@pytest.fixture
def plain(site: SiteView, tmp_path: Path) -> CrawlRun:
    """The same crawl without any egress: what each egress must give too."""
    run = crawl_in_process(site.base_url, tmp_path / "plain", *ARGS)
    assert run.returncode == 0
    return run


def test_a_crawl_goes_through_the_proxy_of_the_environment(
    site: SiteView, plain: CrawlRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with forward_proxy() as (proxy, seen):
        monkeypatch.setenv("http_proxy", proxy)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        run = crawl_in_process(site.base_url, tmp_path / "proxied", *ARGS)
    assert run.returncode == 0
    assert entity_keys(run) == entity_keys(plain)
    proxied = {url for _, _, url in seen.requests}
    assert f"{site.base_url}/robots.txt" in proxied
    assert f"{site.base_url}/tag/{TAG}" in proxied
    assert len(seen.requests) == run.stats["downloader/request_count"]  # every one of them
    assert seen.user_agents == {project_settings.USER_AGENT}  # honest, through the proxy too


def test_a_proxied_name_resolving_to_a_private_address_never_reaches_the_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The proxy resolves the target, not us: the name is checked here first, as without."""
    mapping = {"medium.com": "127.0.0.1", "www.medium.com": "127.0.0.1"}
    with forward_proxy() as (proxy, seen):
        monkeypatch.setenv("https_proxy", proxy)
        monkeypatch.setenv("http_proxy", proxy)
        run = crawl_in_process(
            "https://medium.com",
            tmp_path,
            f"tags={TAG}",
            settings={
                "TWISTED_DNS_RESOLVER": "tests.dns_map.MappedResolver",
                "TEST_DNS_MAP": json.dumps(mapping),
            },
        )
    assert seen.requests == []
    assert run.stats.get("safety/refused/private_address_dns", 0) >= 1
    assert "resolves to 127.0.0.1" in run.log
    failures = [
        json.loads(line) for line in (tmp_path / "items.failures.jsonl").read_text().splitlines()
    ]
    assert [f["reason"] for f in failures] == ["unsafe_url"]


def test_download_bind_address_is_the_address_the_site_sees(site: SiteView, tmp_path: Path) -> None:
    """One egress address per worker: ``-s DOWNLOAD_BIND_ADDRESS=…`` (127.0.0.2 here, a
    loopback alias every Linux has); a front in the site's place records the client."""
    with forward_proxy(upstream=site.base_url) as (front, seen):
        run = crawl_in_process(
            front,
            tmp_path,
            f"tags={TAG}",
            "follow=none",
            settings={"DOWNLOAD_BIND_ADDRESS": "127.0.0.2"},
        )
        assert run.returncode == 0
        assert seen.clients == {"127.0.0.2"}
        default = crawl_in_process(front, tmp_path / "default", f"tags={TAG}", "follow=none")
    assert default.returncode == 0
    assert "127.0.0.1" in seen.clients  # without the setting: the machine's own choice


def test_zyte_api_is_one_setting_and_fetches_every_page(
    site: SiteView, plain: CrawlRun, tmp_path: Path
) -> None:
    with zyte_api_stand_in() as (endpoint, seen):
        run = crawl_in_process(
            site.base_url,
            tmp_path / "zyte",
            *ARGS,
            settings={"ZYTE_API_KEY": "test-key-0123", "ZYTE_API_URL": endpoint},
        )
    assert run.returncode == 0, run.log[-2000:]
    assert entity_keys(run) == entity_keys(plain)
    asked = {url for _, _, url in seen.requests}
    assert f"{site.base_url}/tag/{TAG}" in asked
    assert len(seen.requests) == run.stats["scrapy-zyte-api/success"]
    assert seen.authorizations
    assert all(a.startswith("Basic ") for a in seen.authorizations)
    assert run.stats.get("render/requests", 0) == 0  # nothing needed rendering here


def test_a_zyte_api_key_without_the_package_stops_before_the_crawl(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = Settings({"ZYTE_API_KEY": "test-key-0123"})
    monkeypatch.setitem(sys.modules, "scrapy_zyte_api", None)  # not installed
    with pytest.raises(CrawlNotStarted, match=r"pip install '\.\[zyte\]'"):
        ZyteApiEgress.preflight(settings)
    ZyteApiEgress.preflight(Settings())  # no key: nothing to check


def test_without_a_key_nothing_changes() -> None:
    settings = Settings({"DOWNLOAD_HANDLERS": dict(project_settings.DOWNLOAD_HANDLERS)})
    ZyteApiEgress().update_settings(settings)
    assert settings.getdict("DOWNLOAD_HANDLERS") == project_settings.DOWNLOAD_HANDLERS
    assert not settings.getbool("ZYTE_API_TRANSPARENT_MODE")
