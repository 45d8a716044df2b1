"""Read what the report needs from a dataset directory (manifest and story columns)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from topics_crawler.dataset import ENTITIES, DatasetError, read_manifest
from topics_crawler.dataset.layout import ENTITY_OF, GONE_COLUMN
from topics_crawler.dataset.manifest import check_schema_version
from topics_crawler.dataset.parts import read_table, table_rows
from topics_crawler.output.exporters import records_of

#: Story columns the charts use (the body text is never loaded).
STORY_COLUMNS = (
    "story_id",
    "published_at",
    "author_id",
    "author_username",
    "author_name",
    "publication_slug",
    "publication_name",
    "reading_time_min",
    "claps",
    "tags",
)

STORIES = ENTITY_OF["story"]
TAG_STORIES = ENTITY_OF["tag_story"]
#: Snapshot columns the growth chart uses.
GROWTH_COLUMNS = ["story_id", "scraped_at", "claps", "responses", GONE_COLUMN]


class ReportInputError(Exception):
    """The directory cannot be reported on; the message says why in one line."""


@dataclass(frozen=True)
class ReportData:
    """A dataset as the report sees it."""

    directory: Path
    manifest: dict[str, Any]
    counts: dict[str, int]
    stories: list[dict[str, Any]]
    #: Snapshot rows of the stories (``story_stats``): id, ``scraped_at``, counts.
    story_stats: list[dict[str, Any]] = field(default_factory=list)


def load_dataset(directory: Path) -> ReportData:
    """Manifest, row counts and story columns of ``directory``; raises ReportInputError."""
    if not directory.is_dir():
        raise ReportInputError(f"{directory}: no such directory")
    try:
        manifest = read_manifest(directory)
        if manifest is None:
            raise ReportInputError(f"{directory} is not a dataset (no manifest.json)")
        check_schema_version(directory)
    except DatasetError as exc:
        raise ReportInputError(str(exc)) from exc
    try:
        counts = {e.item_type: table_rows(directory / e.parquet_name) for e in ENTITIES}
        if not counts["story"]:
            raise ReportInputError(f"{directory}: empty dataset (no stories to report on)")
        stories = read_table(directory / STORIES.parquet_name, columns=list(STORY_COLUMNS))
        growth = read_table(directory / str(STORIES.stats_name), columns=GROWTH_COLUMNS)
        listed = read_table(directory / TAG_STORIES.parquet_name, columns=["tag", "story_id"])
    except (OSError, ValueError) as exc:
        raise ReportInputError(f"{directory}: a table is not readable Parquet ({exc})") from exc
    rows = with_listed_tags(records_of(stories), records_of(listed))
    return ReportData(directory, manifest, counts, rows, records_of(growth))


def with_listed_tags(
    stories: list[dict[str, Any]], memberships: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The story rows, each with ``listed_tags``: the tags whose listings showed it
    (``tag_stories``), sorted."""
    listed: dict[str, set[str]] = {}
    for row in memberships:
        if row.get("story_id") and row.get("tag"):
            listed.setdefault(str(row["story_id"]), set()).add(str(row["tag"]))
    for story in stories:
        story["listed_tags"] = sorted(listed.get(str(story.get("story_id")), ()))
    return stories


def load_failures(directory: Path) -> Counter[str]:
    """Pages that failed for good, by reason, from the dataset's ``failures.jsonl``
    (empty when there is none); an unreadable line counts as ``unreadable_record``."""
    reasons: Counter[str] = Counter()
    path = directory / "failures.jsonl"
    if not path.is_file():
        return reasons
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            reason = record.get("reason") if isinstance(record, dict) else None
            reasons[str(reason) if reason else "unreadable_record"] += 1
    return reasons
