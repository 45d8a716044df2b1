"""What a tag history covers: the time ranges its GraphQL requests ask for (``-a since`` /
``-a until``), the days a listed post must fall in, and the history's expected size, which
the progress line turns into a share done.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from scrapy.statscollectors import StatsCollector

from topics_crawler.extensions.progress import (
    HISTORY_CLAIMED_PREFIX,
    HISTORY_EXPECTED_STAT,
    HISTORY_SIZED_TAGS_STAT,
)
from topics_crawler.graphql import TimeRange
from topics_crawler.items.values import parse_timestamp
from topics_crawler.pages import PageResult
from topics_crawler.spiders._argument_values import FIRST_YEAR
from topics_crawler.spiders._arguments import CrawlOptions


def history_ranges(since: date | None, until: date | None, today: date) -> list[TimeRange]:
    """Time ranges covering the months of ``since`` to ``until`` (None: from Medium's first
    year / to today), newest first, in as few requests as possible: whole years, and months
    only for the part of the first and last years that is not a whole year (the current
    year counts as whole when the range runs to today: it has no later stories)."""
    if since is None and until is None:
        return [TimeRange.all_time()]
    first = since or date(FIRST_YEAR, 1, 1)
    last = min(until or today, today)
    open_end = until is None or until >= today
    ends_year = open_end or last.month == 12
    if first.year == last.year:
        if first.month == 1 and ends_year:
            return [TimeRange.in_year(first.year)]
        return [TimeRange.in_month(first.year, m) for m in range(last.month, first.month - 1, -1)]
    if ends_year:
        ranges = [TimeRange.in_year(last.year)]
    else:
        ranges = [TimeRange.in_month(last.year, m) for m in range(last.month, 0, -1)]
    ranges += [TimeRange.in_year(year) for year in range(last.year - 1, first.year, -1)]
    if first.month == 1:
        ranges.append(TimeRange.in_year(first.year))
    else:
        ranges += [TimeRange.in_month(first.year, m) for m in range(12, first.month - 1, -1)]
    return ranges


def in_history_days(node: dict[str, Any], since: date | None, until: date | None) -> bool:
    """A listed post published within the history's days (the time ranges are whole
    months: a ``since``/``until`` day inside one leaves some out); kept when undated."""
    if since is None and until is None:
        return True
    published = parse_timestamp(node.get("firstPublishedAt"))[0]
    if published is None:
        return True
    day = date.fromisoformat(published[:10])
    return (since is None or day >= since) and (until is None or day <= until)


def count_expected_history(
    stats: StatsCollector, result: PageResult, options: CrawlOptions
) -> None:
    """Add a tag page's story count (capped by ``options.max_stories``) to the history's
    known size, which the progress line turns into a share done and an ETA. Only for
    all-time histories: the count of a ``since``/``until`` range is not on the page."""
    if options.since is not None or options.until is not None:
        return
    for page in result.items_of("tag_page"):
        count = getattr(page, "story_count", None)
        if count:
            cap = options.max_stories
            expected = min(count, cap) if cap else count
            stats.inc_value(HISTORY_EXPECTED_STAT, expected)
            stats.inc_value(HISTORY_SIZED_TAGS_STAT)
            tag = getattr(page, "tag", None)
            if tag:  # the tag's listing, once ended, replaces its claim (extensions/progress)
                stats.set_value(f"{HISTORY_CLAIMED_PREFIX}{tag}", expected)
