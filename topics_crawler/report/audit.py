"""The completeness audit (:mod:`topics_crawler.dataset.audit`) as the report's tables:
tags, the authors and publications holding most stories, and the pages that failed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Most authors and publications the report lists (the manifest keeps them all).
REPORT_ROWS = 20
Cell = str | int | float | None


def _percent(share: float | None) -> str:
    return "" if share is None else f"{share:.0%}"


def audit_tables(audit: Mapping[str, Any]) -> list[tuple[str, list[str], list[list[Cell]]]]:
    """``(title, headers, rows)`` of the report's completeness tables."""
    tags = [
        [
            row["tag"], row["stated_stories"], row["stated_followers"],
            row.get("listed_stories"), row["held_stories"], row["missing_stories"],
            _percent(row["member_only_share"]), row["listing"], "; ".join(row["why_missing"]),
        ]
        for row in audit.get("tags", [])
    ]  # fmt: skip
    authors = [
        [row["author"], row["stated_followers"], row["held_stories"],
         _percent(row["member_only_share"])]
        for row in audit.get("authors", [])[:REPORT_ROWS]
    ]  # fmt: skip
    publications = [
        [row["publication"], row["stated_followers"], row["held_stories"],
         _percent(row["member_only_share"])]
        for row in audit.get("publications", [])[:REPORT_ROWS]
    ]  # fmt: skip
    failures = [[key, count] for key, count in (audit.get("failures") or {}).items()]
    held = ["stated followers", "stories held", "member-only"]
    tag_headers = ["tag", "stories Medium states", "followers", "stories listed"]
    tag_headers += ["stories held", "missing"]
    tag_headers += ["member-only", "listing (last run)", "why missing"]
    return [
        ("Tags", tag_headers, tags),
        (f"Authors (top {REPORT_ROWS} by stories held)", ["author", *held], authors),
        (f"Publications (top {REPORT_ROWS} by stories held)", ["publication", *held], publications),
        ("Pages that failed for good (last run)", ["kind/reason", "pages"], failures),
    ]
