"""Scrapy's debugging commands on any Medium URL with no spider argument: parse and shell.

Against the local site through ``MEDIUM_BASE_URL``, as a user would run them.
"""

from __future__ import annotations

import ast
import hashlib
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from topics_crawler.site.content import default_site
from topics_crawler.site.routes import resolve
from topics_crawler.site.server import SiteServer

ROOT = Path(__file__).resolve().parent.parent
CONTENT = default_site()
STORY = next(s for s in CONTENT.stories.values() if not CONTENT.publication_of(s))
AUTHOR = CONTENT.authors[STORY.author]
PUBLICATION = next(p for p in CONTENT.publications.values() if not p.domain)
TAG = next(iter(CONTENT.tags))
TAG_URL = f"https://medium.com/tag/{TAG}"
CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    with SiteServer(CONTENT) as server:
        yield server


def printed_items(stdout: str) -> list[dict[str, object]]:
    """The items ``scrapy parse`` prints (a pprint of dicts under ``# Scraped Items``)."""
    section = stdout.split("# Scraped Items", 1)[1].split("\n", 1)[1]
    return list(ast.literal_eval(section.split("# Requests", 1)[0].strip()))


def scrapy(site: SiteServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEDIUM_BASE_URL": site.base_url, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"https://medium.com/tag/{TAG}", {"tag_page": 1, "tag_edge": None, "tag_story": None}),
        (CONTENT.story_url(STORY), {"story": 1}),
        (AUTHOR.url, {"author": 1}),
        (f"https://medium.com/{PUBLICATION.slug}", {"publication": 1}),
        (f"https://medium.com/feed/@{AUTHOR.username}", {"author": 1, "story": None}),
        (  # a day of the tag's archive: its story, author and publication
            f"https://medium.com/tag/{TAG}/archive/2025/10/28",
            {"story": 1, "author": 1, "publication": 1},
        ),
    ],
    ids=["tag", "story", "author", "publication", "feed", "tag_archive"],
)
def test_scrapy_parse_any_medium_url_with_no_argument(
    site: SiteServer, url: str, expected: dict[str, int | None]
) -> None:
    process = scrapy(site, "parse", "--spider=topics", "--nocolour", url)
    assert process.returncode == 0, process.stderr[-3000:]
    assert "Traceback" not in process.stderr
    assert "Health check" not in process.stderr  # no crawl-level verdict on one page
    assert "One-page run: no crawl-level health checks" in process.stderr
    items = printed_items(process.stdout)
    counts = Counter(item["item_type"] for item in items)
    assert set(counts) == set(expected), counts
    for item_type, count in expected.items():
        assert count is None or counts[item_type] == count, counts
    assert all(str(item["url"]).startswith("https://") for item in items)
    if "story" in counts and "feed" not in url and "/archive/" not in url:
        assert items[0]["story_id"] == STORY.id


def test_scrapy_parse_picks_the_spider_from_the_url(site: SiteServer) -> None:
    process = scrapy(site, "parse", "--nocolour", AUTHOR.url)
    assert process.returncode == 0, process.stderr[-3000:]
    assert printed_items(process.stdout)[0]["username"] == AUTHOR.username


def test_scrapy_shell_gets_the_response_a_crawl_gets(site: SiteServer) -> None:
    url = CONTENT.story_url(STORY)
    code = (
        "(spider.name, response.url, response.status, response.meta.get('entity_kind'),"
        " __import__('hashlib').sha256(response.body).hexdigest())"
    )
    process = scrapy(site, "shell", url, "-c", code)
    assert process.returncode == 0, process.stderr[-3000:]
    served = resolve(CONTENT, urlsplit(url).path).body
    expected = ("topics", url, 200, "story", hashlib.sha256(served).hexdigest())
    assert process.stdout.strip() == repr(expected)


def test_scrapy_crawl_still_wants_a_tag(site: SiteServer) -> None:
    process = scrapy(site, "crawl", "topics")
    assert process.returncode == 2
    assert "give at least one tag" in process.stderr


@pytest.mark.browser
@pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason=f"Debian's chromium is not installed at {CHROMIUM} (make system-deps)",
)
def test_scrapy_parse_shows_a_page_the_browser_completes_at_depth_1() -> None:
    """A tag page whose "Who to follow" only its JavaScript adds is asked for again through
    the browser; ``scrapy parse`` fetches it within the first depth level, as a crawl uses it."""
    with SiteServer(default_site(), js_sections=True) as js_site:
        process = scrapy(js_site, "parse", "--spider=topics", "--nocolour", TAG_URL)
    assert process.returncode == 0, process.stderr[-3000:]
    assert "asking the browser" in process.stderr
    pages = [item for item in printed_items(process.stdout) if item["item_type"] == "tag_page"]
    assert len(pages) == 1
    assert pages[0]["who_to_follow"], "the rendered page's sections"
    requests = process.stdout.split("# Requests", 1)[1]
    assert "/tag/" not in requests, "the page itself is not left for a second level"
