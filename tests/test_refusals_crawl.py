"""Crawls of the local site behind Cloudflare's two refusals (``site/refusals.py``), and
of a host that left Medium.

* WAF mode (plain HTTP refused, browsers served): with ``RENDER_MODE=auto`` the first
  refusal switches the host to the browser, said once, and every entity still comes; with
  ``RENDER_MODE=never`` the crawl stops with one line naming the refusal and what helps,
  and exits 3, no refusal page among its items.
* Challenge mode (every page behind a managed challenge a browser clears): each page is
  retried in a fresh browser context and comes.
* A custom domain that left Medium (a WordPress site now): its first page fails by the
  host's name, once; its other links are not fetched; the tag page's cards are kept.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.test import get_crawler

from tests.crawl_helpers import CrawlRun, crawl_in_process
from topics_crawler.errors import REFUSED_STAT, ExitCode
from topics_crawler.items import Story
from topics_crawler.site.content import default_site
from topics_crawler.site.refusals import Refusals, ray_id
from topics_crawler.site.server import SiteServer, SiteView
from topics_crawler.spiders.topics import TopicsSpider
from topics_crawler.urls import MediumLink

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
    waf_site: SiteServer, site: SiteView, tmp_path: Path
) -> None:
    jobdir = str(tmp_path / "job")
    settings = {"RENDER_MODE": "never", "JOBDIR": jobdir}
    run = crawl_in_process(waf_site.base_url, tmp_path, f"tags={TAG}", settings=settings)
    assert run.returncode == ExitCode.REFUSED
    assert run.stats[REFUSED_STAT] == 1
    assert "health/failed" not in run.stats  # no verdict on a crawl the site refused
    lines = [line for line in run.log.splitlines() if " ERROR: " in line]
    assert len(lines) == 1
    assert "refused the crawl:" in lines[0]
    refusal = lines[0].partition(" ERROR: ")[2]  # and the run's last lines say it once more
    assert f"  exit 3 (refused by the site): {refusal}" in run.log.splitlines()
    assert "medium.com refused the crawl: a Cloudflare WAF refusal" in lines[0]
    assert f"Ray ID {ray_id('/tag/' + TAG)}" in lines[0]
    assert "RENDER_MODE=never" in lines[0]
    for helps in ("proxy", "Zyte API", "another address"):
        assert helps in lines[0]
    assert run.items == []  # never the refusal page as data
    failures = tmp_path / "items.failures.jsonl"
    assert not failures.exists() or not failures.read_text()  # not failed: kept for next time

    # The same command from another address (the refusal gone) finishes the job.
    again = crawl_in_process(site.base_url, tmp_path, f"tags={TAG}", settings=settings, append=True)
    assert again.returncode == 0, again.log[-2000:]
    unrefused = crawl_in_process(site.base_url, tmp_path / "plain", f"tags={TAG}")
    assert entities(again) == entities(unrefused)


def crawl(site: SiteServer, out: Path, *args: str, **settings: Any) -> CrawlRun:
    run = crawl_in_process(site.base_url, out, *args, settings=settings)
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


def test_a_host_that_left_medium_fails_once_by_name_and_its_cards_are_kept(
    tmp_path: Path,
) -> None:
    content = default_site()
    content.left_medium = frozenset({"tensorbeat.example"})  # WordPress now
    moved = {s.id for s in content.stories_in("tensorbeat")}
    with SiteServer(content) as site:
        run = crawl_in_process(site.base_url, tmp_path, f"tags={TAG}")
    assert run.returncode == 0
    named = [line for line in run.log.splitlines() if "tensorbeat.example is no Medium" in line]
    assert len(named) == 1
    assert run.stats["left_medium/hosts"] == 1
    pages = run.stats["left_medium/pages"]  # those asked for before the first answer came
    failures = [
        json.loads(line) for line in (tmp_path / "items.failures.jsonl").read_text().splitlines()
    ]
    assert [f["reason"] for f in failures] == ["left_medium"] * pages
    stories = {s["story_id"]: s for s in run.of_type("story")}
    listed = moved & set(stories)
    assert listed  # the tag page's cards of its stories are kept, not lost
    assert all(stories[sid]["title"] for sid in listed)
    no_refusal_in(run)
    assert not any("This site moved" in json.dumps(item) for item in run.items)


def test_links_to_a_host_known_to_have_left_are_not_followed() -> None:
    crawler = get_crawler(TopicsSpider)
    spider = crawler._create_spider(tags=TAG)
    spider.build_parts()
    spider.left_medium.record("tensorbeat.example", "https://tensorbeat.example/a-1ca69de01a98")
    card = Story(story_id="6a4d65019068", title="Kept", scraped_at="2026-09-16T12:00:00Z")
    gone = MediumLink("story", "6a4d65019068", "https://tensorbeat.example/b-6a4d65019068")
    assert list(spider.follow_entity(gone, known=card)) == [card]  # the card, no request
    here = MediumLink("story", "6a4d65019068", "https://medium.com/@ada/b-6a4d65019068")
    assert [type(r).__name__ for r in spider.follow_entity(here, known=card)] == ["Request"]
    assert crawler.stats.get_value("left_medium/skipped") == 1
