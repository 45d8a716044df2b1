"""Which of its kind's core fields a parse found: the input of the drift alarm.

Every parser lists the core fields it could not fill in ``PageResult.missing``;
:data:`CORE_FIELDS` names them per page kind. The spider records each parse with
:func:`record_coverage` as stats (``coverage/<kind>/pages`` and
``coverage/<kind>/found/<field>``), and the crawl's health check
(:mod:`topics_crawler.extensions.health`) fails the crawl when a kind's pages stop
giving a field — what a Medium redesign looks like from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from topics_crawler.pages import author, publication, story, tag, tag_archive
from topics_crawler.pages._result import PageResult

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

#: Core fields per page kind (what the parser of that kind reports as ``missing``).
CORE_FIELDS: dict[str, tuple[str, ...]] = {
    "tag": tag.CORE_FIELDS,
    "story": story.CORE_FIELDS,
    "author": author.EXPECTED_FIELDS,
    "publication": publication.EXPECTED_FIELDS,
    "tag_archive": tag_archive.CORE_FIELDS,
}
PAGES_STAT = "coverage/{kind}/pages"
FOUND_STAT = "coverage/{kind}/found/{field}"


def fields_found(result: PageResult) -> list[str]:
    """The core fields of ``result``'s kind that the parse filled."""
    return [name for name in CORE_FIELDS.get(result.kind, ()) if name not in result.missing]


def record_coverage(stats: StatsCollector, kind: str, result: PageResult) -> None:
    """Count one parsed page of ``kind`` and each core field it gave (a page whose parser
    gave up counts with none)."""
    if kind not in CORE_FIELDS:
        return
    stats.inc_value(PAGES_STAT.format(kind=kind))
    found = fields_found(result) if result.kind == kind else []
    for name in CORE_FIELDS[kind]:
        stats.inc_value(FOUND_STAT.format(kind=kind, field=name), 1 if name in found else 0)
