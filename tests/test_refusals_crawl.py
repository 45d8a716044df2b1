"""Crawls of the local site behind Cloudflare's two refusals (``tests/site/refusals.py``).

* WAF mode (plain HTTP refused, browsers served): with ``RENDER_MODE=auto`` the first
  refusal switches the host to the browser, said once, and every entity still comes; with
  ``RENDER_MODE=never`` the crawl stops with one line naming the refusal and what helps,
  and exits 3, no refusal page among its items.
* Challenge mode (every page behind a managed challenge a browser clears): each page is
  retried in a fresh browser context and comes.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.crawl_helpers import CrawlRun, crawl_in_process, run_crawl
from tests.site.content import default_site
from tests.site.refusals import Refusals, ray_id
from tests.site.server import SiteServer, SiteView
from topics_crawler.errors import REFUSED_STAT, ExitCode

CHROMIUM = "/usr/bin/chromium"
needs_chromium = pytest.mark.skipif(
    shutil.which(CHROMIUM) is None,
    reason=f"Debian's chromium is not installed at {CHROMIUM} (make system-deps)",
)
pytestmark = pytest.mark.integration
TAG = "machine-learning"


@pytest.fixture
def waf_site() -> Iterator[SiteServer]:
    with SiteServer(default_site(), refusals=Refusals(waf=True)) as server:
        yield server


def entities(run: CrawlRun) -> dict[str, set[str]]:
    keys = {"tag_page": "tag", "story": "story_id", "author": "username", "publication": "slug"}
    return {kind: {item[key] for item in run.of_type(kind)} for kind, key in keys.items()}


def no_refusal_in(run: CrawlRun) -> None:
    for item in run.items:
        text = json.dumps(item)
        for marker in ("Sorry, you have been blocked", "Just a moment", "Attention Required"):
            assert marker not in text


def test_waf_mode_with_render_mode_never_stops_with_one_line_and_exit_3(
    waf_site: SiteServer, tmp_path: Path
) -> None:
    run = crawl_in_process(
        waf_site.base_url, tmp_path, f"tags={TAG}", settings={"RENDER_MODE": "never"}
    )
    assert run.returncode == ExitCode.REFUSED
    assert run.stats[REFUSED_STAT] == 1
    assert "health/failed" not in run.stats  # no verdict on a crawl the site refused
    lines = [line for line in run.log.splitlines() if "refused the crawl:" in line]
    assert len(lines) == 1
    assert [line for line in run.log.splitlines() if " ERROR: " in line] == lines
    assert "medium.com refused the crawl: a Cloudflare WAF refusal" in lines[0]
    assert f"Ray ID {ray_id('/tag/' + TAG)}" in lines[0]
    assert "RENDER_MODE=never" in lines[0]
    for helps in ("proxy", "Zyte API", "another address"):
        assert helps in lines[0]
    assert run.items == []  # never the refusal page as data
    failures = [json.loads(line) for line in (tmp_path / "failures.jsonl").read_text().splitlines()]
    assert [(f["url"], f["reason"], f["status"]) for f in failures] == [
        (f"https://medium.com/tag/{TAG}", "waf", 403)
    ]


def crawl(site: SiteServer, out: Path, *args: str, **settings: Any) -> CrawlRun:
    run = run_crawl(site.base_url, out, *args, settings=settings)
    assert run.returncode == 0, run.log[-3000:]
    return run


@pytest.mark.browser
@needs_chromium
def test_waf_mode_gets_every_entity_through_the_browser(
    waf_site: SiteServer, site: SiteView, tmp_path: Path
) -> None:
    unrefused = crawl_in_process(site.base_url, tmp_path / "plain", f"tags={TAG}")
    run = crawl(waf_site, tmp_path / "waf", f"tags={TAG}")
    assert entities(run) == entities(unrefused)  # what the same crawl gets unrefused
    assert all(entities(run).values())
    no_refusal_in(run)
    switched = [line for line in run.log.splitlines() if "refused plain HTTP" in line]
    zones = run.stats["render/switched_hosts"]  # medium.com, and each custom domain met
    assert len(switched) == zones >= 1
    assert "medium.com refused plain HTTP (a Cloudflare WAF refusal" in switched[0]
    assert REFUSED_STAT not in run.stats
    pages = run.stats["render/requests"]
    assert pages == sum(len(keys) for keys in entities(run).values())  # each page once
    assert run.stats["blocked/waf"] == zones  # one plain page refused per zone, no more
    assert run.stats.get("playwright/page_count/closed") == run.stats["playwright/page_count"]


@pytest.mark.browser
@needs_chromium
def test_challenge_mode_clears_through_fresh_browser_contexts(tmp_path: Path) -> None:
    with SiteServer(default_site(), refusals=Refusals(challenge=True)) as site:
        run = crawl(
            site, tmp_path, f"tags={TAG}", "max_stories=3", "follow=stories", RETRY_BACKOFF_BASE=0
        )
        statuses = [status for _, path, status in site.requests if path == f"/tag/{TAG}"]
    assert len(run.of_type("story")) == 3
    assert run.of_type("tag_page")[0]["related_tags"]
    no_refusal_in(run)
    pages = 1 + 3
    assert run.stats["blocked/challenge"] == pages  # each page's plain fetch, challenged
    assert run.stats["render/fresh_context"] == pages  # each retried in a fresh context
    assert "blocked/gave_up/challenge" not in run.stats
    assert statuses == [403, 403, 200]  # plain, the browser's first load, after the reload
    assert run.stats["playwright/context_count"] >= pages
