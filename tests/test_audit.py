"""The completeness audit: pure figures from rows, then a local crawl with known counts (the
manifest's ``audit`` and the report's section)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from tests.crawl_helpers import crawl_in_process
from topics_crawler.dataset.audit import (
    UNCOUNTED_LISTING,
    completeness,
    held_of_rows,
    held_of_table,
    listing_of,
)
from topics_crawler.report import build_report
from topics_crawler.report.audit import audit_tables
from topics_crawler.site.content import default_site, expected_entities
from topics_crawler.site.server import SiteServer

RUN = {"tags": ["llm"], "arguments": {"tags": "llm", "max_stories": "2"}}


def test_figures_from_rows() -> None:
    stories = [
        {"story_id": "a", "tags": ["llm", "ai"], "author_username": "Ada", "is_member_only": True},
        {"story_id": "b", "tags": ["llm"], "author_username": "ada", "is_member_only": False},
        {"story_id": "c", "tags": ["llm"], "publication_slug": "pub", "is_member_only": None},
    ]
    audit = completeness(
        held_of_rows(stories),
        tag_pages=[{"tag": "llm", "story_count": 10, "followers": 5}, {"tag": "ai"}],
        authors=[{"username": "ada", "followers": 7}],
        publications=[{"slug": "pub", "followers": 3}],
        runs=[RUN],
        failures=[
            {"url": "https://medium.com/tag/ai", "kind": "tag", "reason": "http_503"},
            {"url": "https://medium.com/p/x", "kind": "story", "reason": "timeout_error"},
        ],
    )
    llm, ai = audit["tags"][1], audit["tags"][0]
    assert llm == {
        "tag": "llm",
        "stated_stories": 10,
        "stated_followers": 5,
        "listed_stories": None,  # no tag_stories table
        "held_stories": 3,
        "member_only_share": 0.5,  # of the two whose access is known
        "missing_stories": 7,
        "listing": "tag page",
        "why_missing": [
            "the tag page lists only its first cards (-a history=newest pages all)",
            "at most 2 stories per tag (-a max_stories)",
        ],
    }
    assert (ai["held_stories"], ai["missing_stories"]) == (1, None)  # no stated count
    assert "tag page failed (http_503)" in ai["why_missing"]
    assert audit["authors"][0]["held_stories"] == 2  # usernames in any case
    assert audit["publications"][0]["held_stories"] == 1
    assert audit["failures"] == {"story/timeout_error": 1, "tag/http_503": 1}
    assert next(title for title, _, _ in audit_tables(audit)) == "Tags"


def test_a_history_listing_without_tag_stories_says_why_it_counts_short() -> None:
    run = {"tags": ["llm"], "arguments": {"tags": "llm", "history": "newest"}}
    pages = [{"tag": "llm", "story_count": 100}]
    held = held_of_rows([{"story_id": "a", "tags": ["llm"]}])
    audit = completeness(held, tag_pages=pages, authors=[], publications=[], runs=[run])
    assert audit["tags"][0]["why_missing"] == [UNCOUNTED_LISTING]
    counted = completeness(
        held, tag_pages=pages, authors=[], publications=[], runs=[run], memberships=True
    )
    assert counted["tags"][0]["why_missing"] == []


def test_the_listing_of_a_run() -> None:
    assert listing_of({"source": "feed"}) == "feed"
    assert listing_of({"history": "newest"}) == "graphql"
    assert listing_of({}) == "tag page"


@pytest.mark.integration
def test_a_local_crawl_audits_its_tags_against_the_site(tmp_path: Path) -> None:
    content = default_site()
    tag = "machine-learning"
    dataset = tmp_path / "dataset"
    with SiteServer(content) as site:
        run = crawl_in_process(site.base_url, tmp_path, f"tags={tag}",
                               settings={"DATASET_DIR": dataset})  # fmt: skip
    assert run.returncode == 0, run.log[-3000:]
    expected = expected_entities(content, [tag])["stories"]
    tagged = [sid for sid, story in expected.items() if tag in story["tags"]]
    member = [sid for sid in tagged if content.stories[sid].member_only]
    audit = json.loads((dataset / "manifest.json").read_text())["audit"]
    row = next(row for row in audit["tags"] if row["tag"] == tag)
    site_tag = content.tags[tag]
    assert row["stated_stories"] == site_tag.story_count
    assert row["stated_followers"] == site_tag.followers
    assert row["held_stories"] == len(tagged)
    assert row["missing_stories"] == site_tag.story_count - len(tagged)
    assert row["member_only_share"] == round(len(member) / len(tagged), 4)
    assert row["listing"] == "tag page"
    authors = {a["author"]: a for a in audit["authors"]}
    crawled = run.of_type("story")
    for author in run.of_type("author"):
        username = author["username"]
        held = sum(1 for story in crawled if story["author_username"] == username)
        assert authors[username]["stated_followers"] == content.authors[username].followers
        assert authors[username]["held_stories"] == held
    report = build_report(dataset, tmp_path / "report", "md").read_text()
    assert "## Completeness" in report
    assert (
        f"| {tag} | {site_tag.story_count:,} | {site_tag.followers:,} | {len(tagged)} |" in report
    )


def test_a_story_listed_under_a_tag_counts_for_it() -> None:
    """A history listing's rows carry no tags; a ``tag_stories`` row says the tag listed it."""
    stories = [{"story_id": "a", "tags": [], "is_member_only": True}, {"story_id": "b"}]
    pages = [{"tag": "llm", "story_count": 2}]
    without = completeness(
        held_of_rows(stories), tag_pages=pages, authors=[], publications=[], runs=[RUN]
    )
    assert without["tags"][0]["held_stories"] == 0
    listed = [{"tag": "llm", "story_id": "a"}, {"tag": "llm", "story_id": "b"}]
    audit = completeness(
        held_of_rows(stories, listed),
        tag_pages=pages,
        authors=[],
        publications=[],
        runs=[RUN],
        memberships=True,
    )
    row = audit["tags"][0]
    assert (row["held_stories"], row["missing_stories"], row["why_missing"]) == (2, 0, [])
    assert row["member_only_share"] == 1.0


def test_the_arrow_count_is_the_row_count() -> None:
    """What a commit computes in Arrow equals the plain count, nulls, cases and doubles
    (a tag both carried and listed) included."""
    stories = [
        {"story_id": "a", "tags": ["llm", "ai"], "author_username": "Ada",
         "publication_slug": "Pub", "is_member_only": True},
        {"story_id": "b", "tags": [], "author_username": "ada", "is_member_only": False},
        {"story_id": "c", "tags": None, "author_username": None, "is_member_only": None},
        {"story_id": "d", "tags": ["ai"], "publication_slug": "pub", "is_member_only": None},
    ]  # fmt: skip
    listed = [{"tag": "llm", "story_id": "a"}, {"tag": "llm", "story_id": "b"},
              {"tag": "gpu", "story_id": "zzz"}]  # fmt: skip
    table = pa.Table.from_pylist(
        [{"publication_slug": None} | story for story in stories],
        schema=pa.schema([("story_id", pa.string()), ("tags", pa.list_(pa.string())),
                          ("author_username", pa.string()), ("publication_slug", pa.string()),
                          ("is_member_only", pa.bool_())]),
    )  # fmt: skip
    rows = {key: dict(counts) for key, counts in held_of_rows(stories, listed).items()}
    arrow = held_of_table(table, pa.Table.from_pylist(listed))
    normalised = {key: {k: v for k, v in counts.items() if v} for key, counts in arrow.items()}
    assert normalised == rows
    assert arrow["tag", "llm"] == {"held": 2, "known": 2, "member_only": 1}
