"""A page plain HTTP gives only in part, and a browser that cannot render it (Chromium
missing or crashed): the page's plain-HTTP data is kept, said once and counted — never the
page lost with the render."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.crawl_helpers import crawl_in_process
from topics_crawler.settings import PLAYWRIGHT_LAUNCH_OPTIONS
from topics_crawler.site.content import default_site
from topics_crawler.site.server import SiteServer

pytestmark = pytest.mark.integration

TAG = "machine-learning"


def test_a_tag_page_the_browser_cannot_render_keeps_what_plain_http_gave(tmp_path: Path) -> None:
    launch = {**PLAYWRIGHT_LAUNCH_OPTIONS, "executable_path": str(tmp_path / "no-chromium")}
    with SiteServer(default_site(), js_sections=True) as site:
        run = crawl_in_process(
            site.base_url, tmp_path, f"tags={TAG}", "follow=none",
            settings={"PLAYWRIGHT_LAUNCH_OPTIONS": json.dumps(launch)},
        )  # fmt: skip
        plain_requests = site.count(f"/tag/{TAG}")
    assert run.returncode == 0, run.log[-3000:]
    (page,) = run.of_type("tag_page")
    assert page["tag"] == TAG
    assert page["name"]  # what plain HTTP shows
    assert page["who_to_follow"] == []  # what only the browser shows
    assert run.stats["render/browser_failed/tag"] == 1
    assert run.log.count("The browser could not render") == 1
    assert "still lacks" not in run.log
    assert plain_requests == 2  # once, then once more after the browser failed
    assert not run.stats.get("failures/listed")
