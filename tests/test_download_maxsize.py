"""A page over DOWNLOAD_MAXSIZE is a recorded failure (failures.jsonl, stats), not a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.crawl_helpers import crawl_in_process
from topics_crawler import settings
from topics_crawler.site.server import SiteView

TAG = "distributed-training"


def test_the_shipped_limit_is_set_for_medium_pages() -> None:
    assert settings.DOWNLOAD_MAXSIZE == 32 * 1024 * 1024
    assert settings.DOWNLOAD_WARNSIZE < settings.DOWNLOAD_MAXSIZE


@pytest.mark.integration
def test_a_page_over_the_limit_is_a_recorded_failure(site: SiteView, tmp_path: Path) -> None:
    tag_size = len(site_body(site, f"/tag/{TAG}"))
    story_size = len(site_body(site, "/@varuntej"))
    assert story_size < tag_size
    limit = tag_size - 1  # robots.txt and every other page fit, the tag page does not
    run = crawl_in_process(
        site.base_url, tmp_path, f"tags={TAG}", "follow=stories",
        settings={"DOWNLOAD_MAXSIZE": limit, "HEALTH_ENABLED": False},
    )  # fmt: skip
    assert run.returncode == 0, run.log[-3000:]
    assert run.stats["finish_reason"] == "finished"
    assert "Traceback" not in run.log
    failures = [
        json.loads(line) for line in (tmp_path / "items.failures.jsonl").read_text().splitlines()
    ]
    too_large = [f for f in failures if f["reason"] == "too_large"]
    assert too_large, failures
    assert [(f["kind"], f["url"]) for f in too_large] == [("tag", f"https://medium.com/tag/{TAG}")]
    assert run.stats["failures/too_large"] == 1
    assert run.stats["fetch/failed/tag"] == 1


def site_body(site: SiteView, path: str) -> bytes:
    import urllib.request

    with urllib.request.urlopen(site.url(path)) as answer:
        return bytes(answer.read())
