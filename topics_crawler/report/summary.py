"""Aggregates behind the charts: pure functions over story rows (dicts of Story fields)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import combinations
from typing import Any

Row = dict[str, Any]
LabelOf = Callable[[Row], str | None]


def month_range(first: str, last: str) -> list[str]:
    """Every ``YYYY-MM`` from ``first`` to ``last`` inclusive."""
    year, month = int(first[:4]), int(first[5:7])
    months = []
    while f"{year:04d}-{month:02d}" <= last:
        months.append(f"{year:04d}-{month:02d}")
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return months


def story_tags(story: Row) -> list[str]:
    """A story's tags: those it carries (its page's), then those whose listings showed it
    (``listed_tags``, from ``tag_stories``), each once."""
    return list(dict.fromkeys([*(story.get("tags") or []), *(story.get("listed_tags") or [])]))


def stories_per_tag(stories: Iterable[Row]) -> Counter[str]:
    """Stories per tag (:func:`story_tags`): a tag's listings count, not only the tags a
    story page names (a history listing's cards name none)."""
    return Counter(tag for story in stories for tag in story_tags(story))


def stories_per_month(stories: Iterable[Row]) -> list[tuple[str, int]]:
    """(``YYYY-MM``, stories published that month), gaps filled with 0; [] without dates."""
    counts = Counter(s["published_at"][:7] for s in stories if s.get("published_at"))
    if not counts:
        return []
    return [(month, counts[month]) for month in month_range(min(counts), max(counts))]


def author_label(story: Row) -> str | None:
    """How a story's author is shown: display name, else @username, else the id."""
    if story.get("author_name"):
        return str(story["author_name"])
    if story.get("author_username"):
        return f"@{story['author_username']}"
    return story.get("author_id")


def publication_label(story: Row) -> str | None:
    """How a story's publication is shown: its name, else its slug; None outside one."""
    return story.get("publication_name") or story.get("publication_slug")


def top_by_stories(labels: Iterable[str | None], limit: int = 10) -> list[tuple[str, int]]:
    """The ``limit`` most frequent labels with their story counts (None is skipped)."""
    return Counter(label for label in labels if label).most_common(limit)


def top_by_claps(
    stories: Iterable[Row], label_of: LabelOf, limit: int = 10
) -> list[tuple[str, int]]:
    """The ``limit`` labels with the most claps summed over their stories."""
    claps: Counter[str] = Counter()
    for story in stories:
        label = label_of(story)
        if label and story.get("claps") is not None:
            claps[label] += int(story["claps"])
    return [(label, total) for label, total in claps.most_common(limit) if total > 0]


def numeric_values(stories: Iterable[Row], field: str) -> list[float]:
    """The non-null values of a numeric story field."""
    return [float(s[field]) for s in stories if s.get(field) is not None]


def tag_cooccurrence(stories: Iterable[Row], limit: int = 15) -> tuple[list[str], list[list[int]]]:
    """The ``limit`` most used tags (:func:`story_tags`) and a symmetric matrix of stories
    sharing each pair.

    The diagonal holds the number of stories with that tag.
    """
    tag_lists = [story_tags(s) for s in stories]
    top = [tag for tag, _ in Counter(t for tags in tag_lists for t in tags).most_common(limit)]
    index = {tag: i for i, tag in enumerate(top)}
    matrix = [[0] * len(top) for _ in top]
    for tags in tag_lists:
        present = sorted(index[t] for t in tags if t in index)
        for i in present:
            matrix[i][i] += 1
        for i, j in combinations(present, 2):
            matrix[i][j] += 1
            matrix[j][i] += 1
    return top, matrix


def date_span(stories: Sequence[Row]) -> tuple[str, str] | None:
    """First and last publication day of the stories, or None when none is dated."""
    days = sorted(s["published_at"][:10] for s in stories if s.get("published_at"))
    return (days[0], days[-1]) if days else None


def growth(
    stats: Iterable[Row], field: str = "claps", limit: int = 8
) -> list[tuple[str, list[tuple[str, int]]]]:
    """The ``limit`` stories whose ``field`` grew the most across snapshots (at least two
    sightings with a value): (story id, [(``scraped_at``, value), ...] in time order)."""
    series: dict[str, list[tuple[str, int]]] = {}
    for row in stats:
        if row.get(field) is not None and row.get("scraped_at") and not row.get("gone"):
            series.setdefault(str(row["story_id"]), []).append((row["scraped_at"], int(row[field])))
    grown = []
    for story_id, points in series.items():
        points.sort()
        if len(points) >= 2:
            grown.append((points[-1][1] - points[0][1], story_id, points))
    grown.sort(key=lambda item: (-item[0], item[1]))
    return [(story_id, points) for _, story_id, points in grown[:limit]]
