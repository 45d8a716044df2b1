"""Crash-safe JOBDIR: a crawl killed with SIGKILL mid-way and started again finishes the job."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.crawl_helpers import crawl_command, run_crawl, start_crawl, without_read_times
from tests.services import wait_until
from topics_crawler.resume.journal import JOURNAL_NAME, CrawlJournal
from topics_crawler.site.content import default_site
from topics_crawler.site.scale import scale_page_count, scale_tag_slugs, with_scale_tags
from topics_crawler.site.server import SiteServer

pytestmark = pytest.mark.integration

N_TAGS = 10  # 10 tag pages, 200 stories, 25 authors
TAGS = "tags=" + ",".join(scale_tag_slugs(N_TAGS))
KEY_FIELDS = {"story": "story_id", "author": "username", "tag_page": "tag", "publication": "slug"}
KEY_FIELDS |= {"tag_edge": "edge_id", "tag_story": "membership_id"}


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    with SiteServer(with_scale_tags(default_site(), N_TAGS), latency=0.05) as server:
        yield server


def job_command(base_url: str, out_dir: Path) -> list[str]:
    """``scrapy crawl topics`` with a JOBDIR, appending items to ``out_dir/items.jsonl``."""
    settings = {
        "MEDIUM_BASE_URL": base_url,
        "JOBDIR": out_dir / "job",
        "LOG_FILE": out_dir / "crawl.log",
        "AUTOTHROTTLE_ENABLED": False,
    }
    return crawl_command(TAGS, settings=settings, output=out_dir / "items.jsonl")


def content_of(item: dict[str, Any]) -> str:
    return json.dumps(without_read_times(item), sort_keys=True)


def last_per_key(items: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """What a dataset keeps: the last record of each entity."""
    return {(i["item_type"], i[KEY_FIELDS[i["item_type"]]]): content_of(i) for i in items}


def done_paths(journal: Path) -> set[str]:
    with sqlite3.connect(journal) as db:
        urls = [row[0] for row in db.execute("SELECT url FROM requests WHERE done = 1")]
    return {urlsplit(url).path for url in urls}


def test_killed_crawl_resumes_to_the_same_items(site: SiteServer, tmp_path: Path) -> None:
    site.clear_log()
    reference = run_crawl(site.base_url, tmp_path / "reference", TAGS)
    assert reference.returncode == 0, reference.log[-2000:]
    total_pages = scale_page_count(N_TAGS)
    reference_pages = {path for _, path, _ in site.requests if path != "/robots.txt"}

    out = tmp_path / "job"
    out.mkdir()
    command = job_command(site.base_url, out)
    site.clear_log()
    first = start_crawl(command)
    try:
        wait_until(lambda: len(site.requests) >= total_pages // 3, 60, "a third of the pages")
    finally:
        first.kill()  # SIGKILL: no clean shutdown of anything
    first.wait(10)
    assert first.returncode == -9
    fetched_before = Counter(path for _, path, _ in site.requests if path != "/robots.txt")
    done = done_paths(out / "job" / JOURNAL_NAME)
    assert 0 < len(done) < total_pages, "kill the crawl mid-way"

    site.clear_log()
    second = start_crawl(command)
    assert second.wait(120) == 0
    fetched_after = Counter(path for _, path, _ in site.requests if path != "/robots.txt")
    log = (out / "crawl.log").read_text("utf-8")

    assert "Resuming the crawl in" in log
    assert done.isdisjoint(fetched_after), "a page processed before the kill was fetched again"
    assert set(fetched_before) | set(fetched_after) == reference_pages
    assert max((fetched_before + fetched_after).values()) <= 2
    lines = (out / "items.jsonl").read_text("utf-8").splitlines()
    items = [json.loads(line) for line in lines]  # every line whole, none cut by the kill
    contents = Counter(content_of(item) for item in items)
    assert [c for c, n in contents.items() if n > 1] == [], "duplicate items in the output"
    assert last_per_key(items) == last_per_key(reference.items)
    stories = Counter(item["story_id"] for item in items if item["item_type"] == "story")
    assert len(stories) == N_TAGS * 20
    assert max(stories.values()) == 1


def test_resuming_onto_an_overwriting_feed_is_refused(tmp_path: Path) -> None:
    jobdir = tmp_path / "job"
    CrawlJournal(jobdir / JOURNAL_NAME).close()  # an interrupted job
    kept = '{"item_type": "story", "story_id": "0123456789ab"}\n'
    (tmp_path / "items.jsonl").write_text(kept, "utf-8")
    run = run_crawl("http://127.0.0.1:9", tmp_path, "tags=llm", settings={"JOBDIR": jobdir})
    assert run.returncode != 0
    assert "error: crawl not started: resuming" in run.log
    assert "would overwrite" in run.log
    assert (tmp_path / "items.jsonl").read_text("utf-8") == kept
