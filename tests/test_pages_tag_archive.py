"""The tag archive parser (``pages/tag_archive.py``) on the real 2026 day archive and our own
variants: every fact of each page, checked against an independent reading of its payload
(``tests/archive_facts.py``), and the pitfalls the real page sets."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.archive_facts import archive_cases, expected_facts, parsed_facts, payload_of, score
from tests.fixture_cases import FIXTURES, Case
from topics_crawler.items import Story
from topics_crawler.pages import detect_kind, parse_page
from topics_crawler.pages._document import Document
from topics_crawler.pages.tag_archive import ArchiveBucket, read_tag_archive
from topics_crawler.urls import TagArchiveAddress, parse_tag_archive_url

REAL = "archive_tag_python_2026-09-10__2scraper-2026-trimmed.html"
REAL_URL = "https://medium.com/tag/python/archive/2026/09/10"
OWN = FIXTURES / "own" / "tag_archive"
SCRAPED = datetime(2026, 11, 30, 12, tzinfo=UTC)


@pytest.mark.parametrize("case", archive_cases(), ids=lambda c: c.name)
def test_every_fact_of_the_page_comes_out(case: Case) -> None:
    right, count, wrong = score(case)
    assert wrong == []
    assert right == count > 30


def test_the_real_day_archive_gives_its_six_stories(real_pages: Path) -> None:
    result = parse_page((real_pages / REAL).read_bytes(), REAL_URL, scraped_at=SCRAPED)
    assert result.kind == "tag_archive"
    assert result.errors == []
    assert result.missing == []
    stories = {s.story_id: s for s in result.items if isinstance(s, Story)}
    assert list(stories) == [
        "c2a4db010fd3", "3e7d4b4b6c72", "fe99be1cb5bb", "d373fe2c96b7", "31ac27306adb",
        "3e81821c0173",
    ]  # fmt: skip
    scatter = stories["c2a4db010fd3"]
    assert scatter.claps == 248  # virtuals.totalClapCount; recommends beside it is 25
    assert scatter.url == (
        "https://medium.com/data-science-collective/your-scatter-plot-is-boring-make-it-"
        "interactive-and-force-directed-for-exploration-and-questioning-c2a4db010fd3"
    )
    # A custom-domain publication, and a story cross-posted to Substack: rebuilt on Medium.
    assert stories["3e7d4b4b6c72"].url.startswith("https://python.plainenglish.io/8-python-")
    assert stories["d373fe2c96b7"].url == (
        "https://medium.com/@fixture-author-1/the-fraud-test-cannot-make-up-its-mind-d373fe2c96b7"
    )
    assert [link.kind for link in result.links].count("story") == 6
    day = [c for c in result.cursors if c.listing == "archive_day" and c.cursor["hasStories"]]
    assert [c.url for c in day][-1] == "https://medium.com/tag/python/archive/2026/09/16"
    assert not [c for c in result.cursors if c.listing == "archive_page"]  # paging: {}


def test_claps_are_never_the_retired_recommend_count() -> None:
    """A story with ``totalClapCount`` 0 and ``recommends`` 12 has 0 claps."""
    case = OWN / "rust_2025-03-14_day_page2"
    payload = payload_of((case / "input.html").read_text("utf-8"))
    (allocator,) = [p for p in payload["references"]["Post"].values() if "allocator" in p["slug"]]
    assert (allocator["virtuals"]["totalClapCount"], allocator["virtuals"]["recommends"]) == (0, 12)
    url = json.loads((case / "meta.json").read_text())["url"]
    result = parse_page((case / "input.html").read_bytes(), url)
    story = next(s for s in result.items if isinstance(s, Story) and s.story_id == allocator["id"])
    assert story.claps == 0


def test_a_day_split_over_two_pages_names_its_next_page() -> None:
    first = parse_page((OWN / "rust_2025-03-14_day_page1" / "input.html").read_bytes(),
                       "https://medium.com/tag/rust/archive/2025/03/14")  # fmt: skip
    (following,) = [c for c in first.cursors if c.listing == "archive_page"]
    assert following.url == "https://medium.com/tag/rust/archive/2025/03/14?page=2"
    assert following.cursor == {"page": 2, "limit": 3}
    second_url = "https://medium.com/tag/rust/archive/2025/03/14?page=2"
    second = parse_page((OWN / "rust_2025-03-14_day_page2" / "input.html").read_bytes(), second_url)
    assert not [c for c in second.cursors if c.listing == "archive_page"]
    ids = [s.story_id for r in (first, second) for s in r.items if isinstance(s, Story)]
    assert len(ids) == len(set(ids)) == 5


def test_the_page_says_which_buckets_lead_on() -> None:
    html = (OWN / "rust_2025-03_month_after_redirect" / "input.html").read_bytes()
    page = read_tag_archive(Document(html, "https://medium.com/tag/rust/archive/2025/03"))
    assert page.address == TagArchiveAddress("rust", 2025, 3)
    assert page.current == ArchiveBucket("month", 2025, 3, None, True)
    assert [(b.year, b.month, b.day) for b in page.children("day")] == [
        (2025, 3, 2), (2025, 3, 14)
    ]  # fmt: skip
    assert [b.year for b in page.children("year")] == [2023, 2025]
    assert [b.month for b in page.children("month")] == [3]
    assert page.next_page is None


@pytest.mark.parametrize(
    ("url", "address"),
    [
        (REAL_URL, TagArchiveAddress("python", 2026, 9, 10)),
        ("https://medium.com/tag/python/archive", TagArchiveAddress("python")),
        ("https://medium.com/tag/Python/archive/2026/", TagArchiveAddress("python", 2026)),
        ("https://medium.com/tag/python/archive/2026/09?x=1", TagArchiveAddress("python", 2026, 9)),
        (REAL_URL + "?page=3", TagArchiveAddress("python", 2026, 9, 10, 3)),
        ("https://medium.com/tag/python/archive/2026/02/30", None),
        ("https://medium.com/tag/python/archive/2026/13", None),
        ("https://medium.com/tag/python/archive/26", None),
        ("https://medium.com/tag/python/archive/2026/09/10/11", None),
        ("https://medium.com/tag/python", None),
        ("https://medium.com/tag/python/latest", None),
        (REAL_URL + "?page=0", None),
    ],
)
def test_archive_addresses(url: str, address: TagArchiveAddress | None) -> None:
    assert parse_tag_archive_url(url) == address
    if address is not None:
        assert parse_tag_archive_url(address.url) == address


def test_archive_urls_are_detected_as_archive_pages() -> None:
    assert detect_kind(Document(b"<html></html>", REAL_URL)) == "tag_archive"
    assert detect_kind(Document(b"<html></html>", "https://medium.com/tag/python")) == "tag"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"<html><body>Sorry, you have been blocked</body></html>", "no archive payload"),
        (b'<script>window["obvInit"]({"references": {}, "streamItems": []})</script>',
         "archive payload without archiveIndex"),
        (b'<script>window["obvInit"]({"archiveIndex": {"yearlyBuckets": [{"year": "20x6"}]},'
         b' "streamItems": [{"postPreview": {"postId": "0123456789ab"}}]})</script>',
         "unreadable bucket"),
    ],
)  # fmt: skip
def test_a_page_that_is_not_a_readable_archive_says_so(body: bytes, error: str) -> None:
    result = parse_page(body, REAL_URL)
    assert result.kind == "tag_archive"
    assert any(error in problem for problem in result.errors), result.errors
    assert not [i for i in result.items if isinstance(i, Story)]


def test_the_independent_reading_sees_a_wrong_parse() -> None:
    """The facts check can fail: a tag-page parse of the same page gets almost none."""
    html = (OWN / "rust_2025-03-14_day_page1" / "input.html").read_bytes()
    facts = expected_facts(html.decode())
    as_tag = parse_page(html, "https://medium.com/tag/rust/archive/2025/03/14", kind="tag")
    got = parsed_facts(as_tag)
    assert sum(got.get(k) == v for k, v in facts.items()) < len(facts) // 4
