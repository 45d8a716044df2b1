"""One line at the end of every run: what it found per entity, where the data is, the verdict.

    Run summary: story 12 new, 3 changed, 40 unchanged, 1 failed; author 9 new;
    data in data/llm; exit 0 (done)

Per item type, from the run's stats: **new** (first seen by any run: ``dedupe/new``),
**changed** (seen by an earlier run, with other content: ``dedupe/changed``),
**unchanged** (already known: :func:`~topics_crawler.extensions.health.known_already`:
unchanged since the last run, in the dataset already for a feed, done before a
resume), **failed** (pages of the kind that failed for good or did not parse, items of
the type validation rejected). Types with nothing to say are left out; a run that found
nothing says so. **Where**: ``DATASET_DIR``, else the local feed files, else "no
output". **Exit**: the status ``scrapy crawl`` will exit with
(:func:`topics_crawler.errors.exit_code`).

The line is logged (INFO) after the health checks and kept as the stat
``summary/line``, so it is in ``STATS_FILE`` too; ``scrapy crawl`` ends with a few lines
built from the same counts on stderr, whatever the log settings
(:mod:`topics_crawler.extensions.closing`). ``SUMMARY_ENABLED=False`` turns both off.

A crawl with no output at all (no ``-o``/``-O``, ``FEEDS`` or ``DATASET_DIR``) is warned
about as it starts, in one line saying how to keep its items (:data:`NO_OUTPUT_WARNING`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self

from scrapy import Spider, signals
from scrapy.exceptions import NotConfigured

from topics_crawler import settings as defaults
from topics_crawler.errors import NOTHING_TO_DO_STAT, TAG_NOT_FOUND_STAT, ExitCode, exit_code
from topics_crawler.extensions.health import known_already
from topics_crawler.items import ITEM_CLASSES

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

SUMMARY_STAT = "summary/line"
#: The page kind whose failures count against each item type.
PAGE_KIND = {"tag_page": "tag"}
VERDICTS = {
    ExitCode.DONE: "done",
    ExitCode.FAILED: "failed",
    ExitCode.USAGE: "bad usage",
    ExitCode.REFUSED: "refused by the site",
}


#: How to keep a crawl's items.
KEEP_ITEMS = "-o items.jsonl (-O to replace the file) or -s DATASET_DIR=data/<name>"
#: The warning at the start of a crawl whose items go nowhere.
NO_OUTPUT_WARNING = (
    f"No output configured: this crawl's items go nowhere; keep them with {KEEP_ITEMS}"
)


def output_places(settings: BaseSettings) -> list[str]:
    """Where the crawl writes its items: the dataset directory, else its feeds' URIs (``-o``/
    ``-O``, ``FEEDS``); none when its items go nowhere."""
    dataset = settings.get("DATASET_DIR")
    return [str(dataset)] if dataset else [str(uri) for uri in settings.getdict("FEEDS")]


def has_output(settings: BaseSettings) -> bool:
    """The crawl writes its items somewhere: a feed (``-o``/``-O``, ``FEEDS``) or a dataset."""
    return bool(output_places(settings))


def entity_counts(item_type: str, stats: Mapping[str, Any]) -> dict[str, int]:
    """``{"new", "changed", "unchanged", "failed"}`` counts of one item type."""
    kind = PAGE_KIND.get(item_type, item_type)
    failures = (f"fetch/failed/{kind}", f"parse/failed/{kind}", f"validate/rejected/{item_type}")
    failed = sum(int(stats.get(key, 0)) for key in failures)
    return {
        "new": int(stats.get(f"dedupe/new/{item_type}", 0)),
        "changed": int(stats.get(f"dedupe/changed/{item_type}", 0)),
        "unchanged": sum(known_already(item_type, stats).values())
        + int(stats.get(f"dedupe/unchanged_emitted/{item_type}", 0)),
        "failed": failed,
    }


def where_the_data_is(settings: BaseSettings) -> str:
    """``data in <DATASET_DIR>``, else ``data in <feed>, <feed>``, else ``no output``."""
    places = output_places(settings)
    if places:
        return f"data in {', '.join(places)}"
    return "no output (give -o FILE or -s DATASET_DIR=…)"


def found_text(stats: Mapping[str, Any]) -> str:
    """What the run found per entity (``story 12 new, 3 changed; author 9 new``), and the
    given tags that do not exist."""
    parts = []
    for item_type in ITEM_CLASSES:
        counts = entity_counts(item_type, stats)
        said = [f"{count} {what}" for what, count in counts.items() if count]
        if said:
            parts.append(f"{item_type} {', '.join(said)}")
    found = "; ".join(parts) or (
        "nothing to do" if stats.get(NOTHING_TO_DO_STAT) else "nothing found"
    )
    missing = stats.get(TAG_NOT_FOUND_STAT)
    return f"{found}; {tags_not_found(missing)}" if missing else found


def tags_not_found(slugs: list[str]) -> str:
    """``tag not found: a`` / ``tags not found: a, b``."""
    return f"tag{'s' if len(slugs) > 1 else ''} not found: {', '.join(slugs)}"


def summary_line(stats: Mapping[str, Any], settings: BaseSettings) -> str:
    """The one line (see the module docstring)."""
    code = exit_code(stats)
    return (
        f"Run summary: {found_text(stats)}; {where_the_data_is(settings)}; "
        f"exit {code} ({VERDICTS[code]})"
    )


class RunSummary:
    """Extension logging :func:`summary_line` when the spider closes."""

    def __init__(self, stats: StatsCollector, settings: BaseSettings) -> None:
        self.stats = stats
        self.settings = settings

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        if not crawler.settings.getbool("SUMMARY_ENABLED", defaults.SUMMARY_ENABLED):
            raise NotConfigured("SUMMARY_ENABLED is off")
        assert crawler.stats is not None
        extension = cls(crawler.stats, crawler.settings)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self, spider: Spider) -> None:
        if not getattr(spider, "one_page_run", False) and not has_output(self.settings):
            logger.warning("%s", NO_OUTPUT_WARNING)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if getattr(spider, "one_page_run", False):  # scrapy parse / shell: no run to sum up
            return
        stats = {**self.stats.get_stats(), "finish_reason": reason}
        line = summary_line(stats, self.settings)
        self.stats.set_value(SUMMARY_STAT, line)
        logger.info("%s", line)
