"""The completeness audit: for each tag, author and publication crawled, what Medium states
beside what the dataset holds, the share member-only, how the last run listed the tag, and
what is missing and why.

Read from the dataset alone (:func:`load_audit`): the stated figures are the rows' own
(``tag_pages.story_count`` and ``followers``, ``authors.followers``,
``publications.followers``), held stories are counted from ``stories`` (a tag's: the stories
carrying its slug in ``tags``, or listed under it in ``tag_stories`` where the dataset has
that table; a history listing's rows carry no tags), the stories a tag's listings showed
from ``tag_stories`` (``listed_stories``; None without that table), the listing source and
the caps from the arguments of the last run that crawled the tag (manifest ``runs``),
failed pages from ``failures.jsonl`` (the last run's). :func:`completeness` is pure; the
dataset extension writes its result into ``manifest.json`` as ``audit`` after each commit
and the report shows it (:mod:`topics_crawler.report.audit`).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from topics_crawler.dataset.parts import read_table
from topics_crawler.output.exporters import records_of

Row = Mapping[str, Any]
STORY_COLUMNS = ("story_id", "tags", "author_username", "publication_slug", "is_member_only")
LISTING_GRAPHQL = "graphql"
LISTING_FEED = "feed"
LISTING_TAG_PAGE = "tag page"


def listing_of(arguments: Mapping[str, Any]) -> str:
    """How a run listed its tags' stories: ``feed``, ``graphql`` (the tag's history), or the
    ``tag page`` alone."""
    if str(arguments.get("source") or "").lower() == "feed":
        return LISTING_FEED
    if arguments.get("history"):
        return LISTING_GRAPHQL
    return LISTING_TAG_PAGE


def _last_run_of(tag: str, runs: Sequence[Row]) -> Row | None:
    """The last run that named ``tag`` (else the last run: a related tag it walked to)."""
    for run in reversed(runs):
        if tag in (run.get("tags") or []):
            return run
    return runs[-1] if runs else None


#: Why a listing's stories may not count for their tag in a dataset without ``tag_stories``.
UNCOUNTED_LISTING = (
    "stories a history or feed listing gave carry no tags: without a tag_stories table the"
    " audit cannot count them for the tag"
)


def _tag_reasons(
    stated: int | None,
    held: int,
    arguments: Mapping[str, Any],
    failed: list[str],
    *,
    memberships: bool = False,
    listed: int | None = None,
) -> list[str]:
    """Why a tag's stories may be missing, from what the run was asked to do and what the
    tag's listings showed (``listed``: distinct stories in ``tag_stories``)."""
    reasons = [f"tag page failed ({reason})" for reason in failed]
    listing = listing_of(arguments)
    if listing != LISTING_TAG_PAGE and not memberships:
        reasons.append(UNCOUNTED_LISTING)
    if listed is not None and stated is not None and listed < stated:
        reasons.append(f"the tag's listings showed {listed:,} stories in all")
    if listing == LISTING_FEED:
        reasons.append("the feed lists only the latest ~10 stories")
    elif listing == LISTING_TAG_PAGE:
        reasons.append("the tag page lists only its first cards (-a history=newest pages all)")
    if arguments.get("since"):
        reasons.append(f"history from {arguments['since']} on only (-a since)")
    if arguments.get("max_stories"):
        reasons.append(f"at most {arguments['max_stories']} stories per tag (-a max_stories)")
    if arguments.get("access"):
        reasons.append(f"only {arguments['access']} stories (-a access)")
    if stated is not None and held >= stated:
        return []
    return reasons


def _share(member_only: int, known: int) -> float | None:
    return round(member_only / known, 4) if known else None


Held = Mapping[tuple[str, str], Mapping[str, int]]
"""``(kind, key)`` → ``{"held", "known", "member_only"}``: stories held for a tag, author or
publication, how many of them say whether they are member-only, how many are."""


def held_of_rows(stories: Iterable[Row], memberships: Iterable[Row] = ()) -> Held:
    """:data:`Held` of story rows (a story counts for a tag it carries in ``tags`` or that
    listed it: ``memberships`` rows ``{"tag", "story_id"}`` of a ``tag_stories`` table)."""
    held: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    listed: dict[str, set[str]] = defaultdict(set)
    for row in memberships:
        listed[str(row.get("story_id"))].add(str(row.get("tag")))
    for story in stories:
        member = story.get("is_member_only")
        story_tags = {str(tag) for tag in story.get("tags") or []}
        story_tags |= listed.get(str(story.get("story_id")), set())
        keys = [("tag", tag) for tag in sorted(story_tags)]
        if story.get("author_username"):
            keys.append(("author", str(story["author_username"]).lower()))
        if story.get("publication_slug"):
            keys.append(("publication", str(story["publication_slug"]).lower()))
        for key in keys:
            counts = held[key]
            counts["held"] += 1
            counts["known"] += member is not None
            counts["member_only"] += member is True
    return held


def held_of_table(stories: pa.Table, memberships: pa.Table | None = None) -> Held:
    """:func:`held_of_rows` of Arrow tables, in Arrow (no Python object per story: a commit
    of a large dataset reads five columns and groups them)."""
    rows = stories.num_rows
    if rows == 0:
        return {}
    index = pa.array(range(rows), pa.int64())
    member = _column(stories, "is_member_only", pa.bool_())
    pairs = []
    tags = _column(stories, "tags", pa.list_(pa.string())).combine_chunks()
    parents = pc.list_parent_indices(tags).cast(pa.int64())
    pairs.append(pa.table({"key": pc.list_flatten(tags), "row": parents}))
    if memberships is not None and memberships.num_rows and "tag" in memberships.column_names:
        ids = pa.table({"story_id": _column(stories, "story_id", pa.string()), "row": index})
        listed = memberships.select(["tag", "story_id"]).join(ids, "story_id", join_type="inner")
        pairs.append(pa.table({"key": listed["tag"], "row": listed["row"].cast(pa.int64())}))
    tag_rows = pa.concat_tables([t.cast(pairs[0].schema) for t in pairs])
    if len(pairs) > 1:  # a story carrying a tag may be listed under it too: count it once
        tag_rows = tag_rows.group_by(["key", "row"]).aggregate([])
    held: dict[tuple[str, str], dict[str, int]] = {}
    groups = [("tag", tag_rows)]
    for kind, column in (("author", "author_username"), ("publication", "publication_slug")):
        keys = pc.utf8_lower(_column(stories, column, pa.string()))
        groups.append((kind, pa.table({"key": keys, "row": index})))
    for kind, grouped in groups:
        table = grouped.filter(pc.is_valid(grouped["key"]))
        flags = pc.take(member, table["row"])
        counted = (
            pa.table(
                {
                    "key": table["key"],
                    "known": pc.is_valid(flags),
                    "yes": pc.fill_null(flags, False),
                }
            )
            .group_by("key")
            .aggregate([("key", "count"), ("known", "sum"), ("yes", "sum")])
        )
        for key, n, known, yes in zip(*(counted[c].to_pylist() for c in (
            "key", "key_count", "known_sum", "yes_sum")), strict=True):  # fmt: skip
            held[kind, key] = {"held": n, "known": known or 0, "member_only": yes or 0}
    return held


def listed_of_table(memberships: pa.Table) -> dict[str, int]:
    """Tag → distinct stories its listings showed (``tag_stories`` rows ``tag, story_id``)."""
    if not memberships.num_rows or "tag" not in memberships.column_names:
        return {}
    pairs = memberships.select(["tag", "story_id"]).group_by(["tag", "story_id"]).aggregate([])
    counted = pairs.group_by("tag").aggregate([("story_id", "count")])
    return dict(zip(counted["tag"].to_pylist(), counted["story_id_count"].to_pylist(), strict=True))


def _column(table: pa.Table, name: str, kind: pa.DataType) -> pa.ChunkedArray:
    """A column of ``table``, or nulls of ``kind`` when the table lacks it."""
    if name in table.column_names:
        return table[name]
    return pa.chunked_array([pa.nulls(table.num_rows, kind)])


def completeness(
    held: Held,
    *,
    tag_pages: Iterable[Row],
    authors: Iterable[Row],
    publications: Iterable[Row],
    runs: Sequence[Row],
    failures: Iterable[Row] = (),
    memberships: bool = False,
    listed: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The audit as JSON data: ``tags``, ``authors``, ``publications`` (one record each) and
    ``failures`` (the last run's pages that failed for good, by kind and reason), from the
    stories ``held`` (:func:`held_of_rows`, :func:`held_of_table`); ``memberships``: the
    counts include what the listings listed (a ``tag_stories`` table); ``listed``: tag →
    distinct stories its listings showed (:func:`listed_of_table`)."""
    failed_tags: dict[str, list[str]] = defaultdict(list)
    failed: Counter[str] = Counter()
    for failure in failures:
        kind, reason = str(failure.get("kind")), str(failure.get("reason"))
        failed[f"{kind}/{reason}"] += 1
        url = str(failure.get("url") or "")
        if kind == "tag" and "/tag/" in url:
            failed_tags[url.rstrip("/").rsplit("/", 1)[-1]].append(reason)

    def counts_of(kind: str, key: str) -> dict[str, Any]:
        counts: Mapping[str, int] = held.get((kind, key)) or Counter()
        return {
            "held_stories": counts["held"],
            "member_only_share": _share(counts["member_only"], counts["known"]),
        }

    tags = []
    for page in tag_pages:
        slug = str(page.get("tag") or "")
        run = _last_run_of(slug, runs) or {}
        arguments = run.get("arguments") or {}
        stated = page.get("story_count")
        numbers = counts_of("tag", slug)
        missing = max(0, stated - numbers["held_stories"]) if stated is not None else None
        shown = listed.get(slug, 0) if listed is not None else None
        tags.append(
            {
                "tag": slug,
                "stated_stories": stated,
                "stated_followers": page.get("followers"),
                "listed_stories": shown,
                **numbers,
                "missing_stories": missing,
                "listing": listing_of(arguments),
                "why_missing": _tag_reasons(
                    stated,
                    numbers["held_stories"],
                    arguments,
                    failed_tags.get(slug, []),
                    memberships=memberships,
                    listed=shown,
                ),
            }
        )
    last = (runs[-1].get("arguments") or {}) if runs else {}
    archive_note = [] if last.get("author_stories") else [
        "a profile lists only its latest stories (-a author_stories=N pages the archive)"
    ]  # fmt: skip
    author_rows = [
        {
            "author": str(author.get("username") or author.get("author_id") or ""),
            "stated_followers": author.get("followers"),
            **counts_of("author", str(author.get("username") or "").lower()),
            "why_missing": archive_note,
        }
        for author in authors
    ]
    publication_rows = [
        {
            "publication": str(pub.get("slug") or pub.get("domain") or ""),
            "stated_followers": pub.get("followers"),
            **counts_of("publication", str(pub.get("slug") or "").lower()),
        }
        for pub in publications
    ]
    return {
        "tags": sorted(tags, key=lambda row: row["tag"]),
        "authors": sorted(author_rows, key=lambda row: (-row["held_stories"], row["author"])),
        "publications": sorted(
            publication_rows, key=lambda row: (-row["held_stories"], row["publication"])
        ),
        "failures": dict(sorted(failed.items())),
    }


# --- from a dataset directory --------------------------------------------------------------


def _rows(path: Path, columns: Sequence[str]) -> list[dict[str, Any]]:
    """The ``columns`` (those the table has) of a dataset table; none when it is absent."""
    return records_of(read_table(path, columns=list(columns)))


def read_failures(path: Path) -> list[dict[str, Any]]:
    """The records of a ``failures.jsonl`` (unreadable lines skipped)."""
    if not path.is_file():
        return []
    records = []
    for line in path.read_text("utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def load_audit(directory: Path, manifest: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`completeness` of the dataset at ``directory`` with its ``manifest``."""
    stories = read_table(directory / "stories.parquet", columns=list(STORY_COLUMNS))
    listed = read_table(directory / "tag_stories.parquet", columns=["tag", "story_id"])
    return completeness(
        held_of_table(stories, listed),
        tag_pages=_rows(directory / "tag_pages.parquet", ("tag", "story_count", "followers")),
        authors=_rows(directory / "authors.parquet", ("username", "author_id", "followers")),
        publications=_rows(directory / "publications.parquet", ("slug", "domain", "followers")),
        runs=manifest.get("runs") or [],
        failures=read_failures(directory / "failures.jsonl"),
        memberships=listed.num_rows > 0,
        listed=listed_of_table(listed) if listed.num_rows else None,
    )
