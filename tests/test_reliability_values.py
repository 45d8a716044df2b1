"""Values that fit their columns or are refused, text that is text (issue 21).

A count past ``int64`` or a time that cannot be true is refused where it is read, and the
item goes to ``rejects.jsonl`` with its source text (never a commit failure, never a
301-digit integer); relative dates are read only against the moment a page was fetched;
control characters, terminal escapes and lone surrogates never reach an item; a lone
surrogate never breaks dedupe. The fuzz test throws absurd values of every kind at the
pipelines and holds every outcome to "valid and fits its Parquet column and strict JSON,
or rejected with a reason".
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from scrapy import Spider
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler

from topics_crawler.items import ITEM_CLASSES, Story, item_to_dict
from topics_crawler.items.fields import Kind, kinds
from topics_crawler.items.values import (
    COUNT_MAX,
    clean_body,
    clean_text,
    parse_count,
    parse_reading_time,
    parse_timestamp,
)
from topics_crawler.output.exporters import arrow_schema
from topics_crawler.pages._document import Document
from topics_crawler.pages.story import parse_story
from topics_crawler.pipelines.dedupe import DedupePipeline
from topics_crawler.pipelines.normalize import NormalizePipeline
from topics_crawler.pipelines.validate import ValidatePipeline

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
SCRAPED_AT = "2026-11-30T12:00:00Z"
POST_ID = "0123456789ab"
URL = f"https://medium.com/@writer/a-story-{POST_ID}"


class _Spider(Spider):
    name = "values-test"


def story_page(post: dict[str, Any], head: str = "") -> str:
    """A story page whose Apollo state holds ``post`` (``json.dumps`` writes a lone
    surrogate as ``\\udXXX``, as a hostile page would)."""
    post = {"__typename": "Post", "id": POST_ID, "title": "A title", **post}
    state = {
        "ROOT_QUERY": {f'postResult({{"id":"{POST_ID}"}})': {"__ref": f"Post:{POST_ID}"}},
        f"Post:{POST_ID}": post,
    }
    script = f"<script>window.__APOLLO_STATE__ = {json.dumps(state)}</script>"
    return f"<!DOCTYPE html><html><head>{head}</head><body>{script}</body></html>"


def parsed_story(html: str) -> Story:
    story = parse_story(Document(html, URL, scraped_at=NOW)).items[0]
    assert isinstance(story, Story)
    return story


class Pipelines:
    """normalize → validate → dedupe as a crawl runs them, rejects to ``tmp_path``."""

    def __init__(self, tmp_path: Path) -> None:
        self.rejects = tmp_path / "rejects.jsonl"
        crawler = get_crawler(_Spider, {"REJECTS_FILE": str(self.rejects)})
        self.stats = crawler.stats
        self.normalize = NormalizePipeline.from_crawler(crawler)
        self.validate = ValidatePipeline.from_crawler(crawler)
        self.dedupe = DedupePipeline.from_crawler(crawler)

    def run(self, item: Any, *, dedupe: bool = True) -> Any:
        """The item that leaves the pipelines, or None when one dropped it."""
        try:
            valid = self.validate.process_item(self.normalize.process_item(item))
            return self.dedupe.process_item(valid) if dedupe else valid
        except DropItem:
            return None

    def rejected(self) -> list[dict[str, Any]]:
        self.validate.close_spider()
        if not self.rejects.exists():
            return []
        return [json.loads(line) for line in self.rejects.read_text("utf-8").splitlines()]


# --- counts past int64 -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "raw"),
    [
        (1e30, "1e+30"),
        (1e300, "1e+300"),
        (float("inf"), "inf"),
        (2**63, str(2**63)),
        (10**400, str(10**400)),
        ("1e30", "1e30"),
        ("99999999999999999999", "99999999999999999999"),
        ("9999999999999999999K", "9999999999999999999K"),
    ],
)
def test_a_count_that_does_not_fit_int64_is_refused_with_its_source_text(
    value: Any, raw: str
) -> None:
    assert parse_count(value) == (None, raw)


def test_the_largest_int64_is_still_a_count() -> None:
    assert parse_count(COUNT_MAX) == (COUNT_MAX, None)
    assert parse_count(float(2**62)) == (2**62, None)


@pytest.mark.parametrize("value", [1e30, 1e300])
def test_a_story_whose_state_says_an_absurd_clap_count_is_rejected_with_its_raw_text(
    value: float, tmp_path: Path
) -> None:
    story = parsed_story(story_page({"clapCount": value}))
    assert story.claps is None
    assert story.claps_raw == repr(value)
    pipelines = Pipelines(tmp_path)
    assert pipelines.run(story) is None
    [reject] = pipelines.rejected()
    assert reject["reasons"] == ["claps:out_of_range"]
    assert reject["item"]["claps_raw"] == repr(value)
    assert pipelines.stats.get_value("validate/rejected/story/claps:out_of_range") == 1


def test_text_that_is_no_count_in_a_page_is_missing_not_a_reject(tmp_path: Path) -> None:
    story = parsed_story(story_page({"clapCount": "many"}))
    assert (story.claps, story.claps_raw) == (None, None)
    assert isinstance(Pipelines(tmp_path).run(story), Story)


def test_reading_times_that_are_no_finite_number_are_refused() -> None:
    assert parse_reading_time(float("inf")) is None
    assert parse_reading_time("inf") is None
    assert parse_reading_time(float("nan")) is None
    assert parse_reading_time(10**400) is None
    assert parse_reading_time("5 min read") == 5.0


# --- timestamps --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", [1, 946684799, 1e30, 253402300800000, "2090-01-01T00:00:00Z", "1969-12-31", -5]
)
def test_a_time_that_cannot_be_true_is_refused(value: Any) -> None:
    assert parse_timestamp(value, NOW) == (None, str(value))


def test_relative_dates_are_read_only_against_the_moment_of_the_fetch() -> None:
    assert parse_timestamp("yesterday") == (None, "yesterday")
    assert parse_timestamp("3 days ago") == (None, "3 days ago")
    assert parse_timestamp("Oct 29") == (None, "Oct 29")
    assert parse_timestamp("yesterday", NOW) == ("2026-11-29T12:00:00Z", "yesterday")


def test_an_unparseable_date_in_the_state_is_missing_and_json_ld_gives_the_date() -> None:
    json_ld = {"@type": "NewsArticle", "headline": "A title", "datePublished": "2024-03-01"}
    head = f'<script type="application/ld+json">{json.dumps(json_ld)}</script>'
    story = parsed_story(story_page({"firstPublishedAt": "yesterday"}, head))
    assert story.published_at == "2024-03-01T00:00:00Z"
    assert parsed_story(story_page({"firstPublishedAt": "yesterday"})).published_at is None


def test_an_absurd_epoch_in_the_state_is_missing_never_a_year_past_9999() -> None:
    story = parsed_story(story_page({"firstPublishedAt": 1e30, "latestPublishedAt": 10**20}))
    assert (story.published_at, story.updated_at) == (None, None)


# --- text --------------------------------------------------------------------------------------


def test_control_characters_escapes_and_lone_surrogates_leave_text() -> None:
    assert clean_text("Red \x1b[31malert\x1b[0m\x07 \ud83d done\x00") == "Red alert \ufffd done"
    assert clean_text("\x1b]0;pwned\x07Title") == "Title"
    assert clean_body("line one\n\x1b[2J\tcode\x08\nline \udc00three") == (
        "line one\n\tcode\nline \ufffdthree"
    )


def test_a_title_from_a_hostile_state_is_clean_and_the_item_is_exported(tmp_path: Path) -> None:
    title = "Broken \ud83d title \x1b[1mbold\x1b[0m\x00"
    story = parsed_story(story_page({"title": title}))
    assert story.title == "Broken \ufffd title bold"
    assert isinstance(Pipelines(tmp_path).run(story), Story)


def test_a_body_with_a_lone_surrogate_is_cleaned_by_the_normalize_guard(tmp_path: Path) -> None:
    story = Story(
        story_id=POST_ID, url=URL, title="T", text="a \ud800 b\x1b[0m", scraped_at=SCRAPED_AT
    )
    pipelines = Pipelines(tmp_path)
    out = pipelines.run(story)
    assert isinstance(out, Story)
    assert out.text == "a \ufffd b"
    assert pipelines.stats.get_value("normalize/cleaned/story") == 1
    json.dumps(item_to_dict(out), ensure_ascii=False).encode("utf-8")  # strict UTF-8


def test_dedupe_never_fails_on_a_lone_surrogate(tmp_path: Path) -> None:
    """With NORMALIZE_ENABLED off nothing cleans the text: dedupe still hashes it."""
    story = Story(story_id=POST_ID, url=URL, title="a \ud83d", scraped_at=SCRAPED_AT)
    dedupe = DedupePipeline.from_crawler(get_crawler(_Spider))
    assert dedupe.process_item(story) is story


# --- the fuzz ----------------------------------------------------------------------------------

#: Absurd values per kind: numbers past every column, times no clock shows, text no
#: terminal should print, and the wrong types.
ABSURD: dict[Kind, list[Any]] = {
    Kind.COUNT: [
        1e30, 1e300, -1e300, 2**63, 2**63 - 1, 10**400, -1, 1.5, float("nan"), float("inf"),
        "1e30", "1e+300", "99999999999999999999", "-3", "inf", "NaN", "∞", "", "1.2K", True,
    ],
    Kind.TIMESTAMP: [
        0, 1, -1, 1e30, 10**20, 253402300800000, float("nan"), float("inf"), "yesterday",
        "2090-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "1969-07-20",
        "Feb 30, 2020", "\x1b[31m2020-01-01", "2024-13-45T99:99:99Z", True, "",
    ],
    Kind.MINUTES: [float("inf"), float("nan"), 1e308, 10**400, -0.5, "inf", "nan", "1e400"],
    Kind.TEXT: [
        "\ud83d", "a\udfffb", "\x1b[2J\x1b[H", "\x00\x01\x02", "\x9b31m", "\u202e\u0000x",
        "x" * 10 + "\x1b]8;;http://evil/\x07link\x1b]8;;\x07", 12, ["a"],
    ],
    Kind.BODY: ["para\n\n\ud800\n\x1b[0m`code`\x07", "\x00" * 5],
}  # fmt: skip


def fuzz_cases() -> list[tuple[str, str, Any]]:
    """(item type, field, value) for every field of every kind above, in every item type."""
    cases = []
    for item_type in sorted(ITEM_CLASSES):
        for name, kind in kinds(ITEM_CLASSES[item_type]).items():
            for value in ABSURD.get(kind, []):
                cases.append((item_type, name, value))
    return cases


FUZZ_CASES = fuzz_cases()
#: Fields every item needs to be valid, per type (the fuzzed field replaces its own).
VALID_BASE: dict[str, dict[str, Any]] = {
    "story": {"story_id": POST_ID, "url": URL, "title": "T"},
    "author": {"username": "writer", "url": "https://medium.com/@writer"},
    "publication": {"slug": "pub", "url": "https://medium.com/pub"},
    "tag_page": {"tag": "ai", "url": "https://medium.com/tag/ai"},
    "response": {
        "response_id": "0123456789cd",
        "story_id": POST_ID,
        "parent_id": POST_ID,
        "depth": 1,
    },
    "tag_edge": {"edge_id": "ai>related>ml", "from_tag": "ai", "to": "ml", "kind": "related",
                 "rank": 1},
    "tag_story": {"membership_id": f"ai>history>{POST_ID}", "tag": "ai", "story_id": POST_ID,
                  "source": "history", "rank": 1, "first_seen": SCRAPED_AT,
                  "last_seen": SCRAPED_AT},
}  # fmt: skip


def fits_its_columns(item: Any) -> None:
    """The item as one Parquet row of its type's schema, and as strict UTF-8 JSON."""
    record = item_to_dict(item)
    schema = arrow_schema(type(item))
    for column in schema:
        value = record[column.name]
        if pa.types.is_timestamp(column.type):
            pa.array([value], type=pa.string()).cast(column.type)
        elif column.metadata is None:
            pa.array([value], type=column.type)
    json.dumps(record, ensure_ascii=False, allow_nan=False).encode("utf-8")
    for value in record.values():
        if isinstance(value, float):
            assert math.isfinite(value)


def test_absurd_values_of_every_kind_are_valid_and_fit_or_are_rejected(tmp_path: Path) -> None:
    assert len(FUZZ_CASES) > 300
    pipelines = Pipelines(tmp_path)
    kept = 0
    for item_type, name, value in FUZZ_CASES:
        record = {"item_type": item_type, **VALID_BASE[item_type]}
        if "scraped_at" in kinds(ITEM_CLASSES[item_type]):  # a tag_stories row has first/last seen
            record["scraped_at"] = SCRAPED_AT
        record[name] = value
        out = pipelines.run(record, dedupe=False)
        if out is not None:
            kept += 1
            fits_its_columns(out)
    rejected = pipelines.rejected()
    assert kept + len(rejected) == len(FUZZ_CASES)
    for reject in rejected:
        assert reject["reasons"], reject
        json.dumps(reject, allow_nan=False)  # the rejects file is strict JSON too


# --- end to end: a dataset a bad number cannot poison ------------------------------------------


@pytest.mark.integration
def test_absurd_clap_counts_are_rejected_and_the_dataset_is_written(tmp_path: Path) -> None:
    """The site says two stories have 1e30 and 1e300 claps: both go to rejects.jsonl with
    their source text, every other story is committed, and the next crawl into the same
    dataset does its job too (on main the commit raised OverflowError and wrote nothing)."""
    import pyarrow.parquet as pq

    from tests.crawl_helpers import run_crawl
    from topics_crawler.site.content import default_site
    from topics_crawler.site.server import SiteServer

    content = default_site()
    tag = "distributed-training"
    tagged = [s for s in content.stories.values() if any(t.slug == tag for t in s.tags)]
    poisoned = {tagged[0].id: 1e30, tagged[1].id: 1e300}
    for story in tagged[:2]:
        story.claps = poisoned[story.id]  # type: ignore[assignment]
    dataset = tmp_path / "data"
    with SiteServer(content) as site:
        runs = [
            run_crawl(site.base_url, tmp_path / name, f"tags={tag}", "follow=stories",
                      settings={"DATASET_DIR": dataset,  # 2 rejects of a few stories' items
                                "HEALTH_MAX_REJECT_RATIO": 0.5})
            for name in ("first", "again")
        ]  # fmt: skip
    for run in runs:
        assert run.returncode == 0, run.log[-3000:]
        assert "Traceback" not in run.log
    stored = set(pq.read_table(dataset / "stories.parquet")["story_id"].to_pylist())
    assert stored
    assert not stored & set(poisoned)
    rejects = [json.loads(line) for line in (dataset / "rejects.jsonl").read_text().splitlines()]
    stories = [r for r in rejects if r["item_type"] == "story"]
    assert {r["item"]["story_id"] for r in stories} == set(poisoned)
    assert all(r["reasons"] == ["claps:out_of_range"] for r in stories)
    for story_id, claps in poisoned.items():  # the story page's state: its source text
        raws = {r["item"]["claps_raw"] for r in stories if r["item"]["story_id"] == story_id}
        assert repr(claps) in raws
