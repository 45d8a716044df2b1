"""The report's PNG charts, drawn with matplotlib's object API on the Agg canvas.

Each ``*_chart`` function takes story rows and an output folder, writes one PNG and
returns a :class:`Chart` (None when the dataset has nothing to draw for it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.dates import date2num
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from topics_crawler.report import summary
from topics_crawler.report.summary import Row

DPI = 110
BAR_COLOR = "#1a8917"  # Medium green
SECOND_COLOR = "#3b6ea5"


@dataclass(frozen=True)
class Chart:
    """One written chart: its file, a title and a one-line caption."""

    path: Path
    title: str
    caption: str


def _save(figure: Figure, path: Path) -> Path:
    FigureCanvasAgg(figure)
    figure.tight_layout()
    figure.savefig(path, dpi=DPI)
    return path


def compact_number(value: float) -> str:
    """``1200`` → ``1.2K``, ``3000000`` → ``3M`` (axis labels)."""
    for factor, suffix in ((1e6, "M"), (1e3, "K")):
        if abs(value) >= factor:
            return f"{value / factor:.1f}".rstrip("0").rstrip(".") + suffix
    return f"{value:g}"


def stories_per_month_chart(stories: Sequence[Row], out: Path) -> Chart | None:
    months = summary.stories_per_month(stories)
    if not months:
        return None
    figure = Figure(figsize=(9, 3.6))
    axes = figure.add_subplot()
    axes.bar(range(len(months)), [count for _, count in months], color=BAR_COLOR)
    step = max(1, math.ceil(len(months) / 16))
    ticks = list(range(0, len(months), step))
    axes.set_xticks(ticks, [months[i][0] for i in ticks], rotation=45, ha="right")
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_ylabel("stories")
    axes.set_title("Stories per month (publication date)")
    total = sum(count for _, count in months)
    caption = f"{total} dated stories from {months[0][0]} to {months[-1][0]}."
    return Chart(_save(figure, out / "stories_per_month.png"), "Stories per month", caption)


def _ranked_bars(axes: Axes, ranking: list[tuple[str, int]], title: str, color: str) -> None:
    labels = [_shorten(label) for label, _ in reversed(ranking)]
    axes.barh(labels, [value for _, value in reversed(ranking)], color=color)
    axes.set_title(title)
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: compact_number(value)))
    axes.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=5))


def _shorten(label: str, width: int = 28) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def _top_chart(
    stories: Sequence[Row], label_of: summary.LabelOf, noun: str, out: Path
) -> Chart | None:
    by_stories = summary.top_by_stories(label_of(s) for s in stories)
    if not by_stories:
        return None
    by_claps = summary.top_by_claps(stories, label_of)
    figure = Figure(figsize=(11, 4.2))
    left, right = figure.subplots(1, 2)
    _ranked_bars(left, by_stories, f"Top {noun}s by stories", BAR_COLOR)
    if by_claps:
        _ranked_bars(right, by_claps, f"Top {noun}s by claps", SECOND_COLOR)
    else:
        right.set_axis_off()
        right.text(0.5, 0.5, "no clap counts in the dataset", ha="center", va="center")
    leader, count = by_stories[0]
    caption = f"{leader} leads with {count} stories."
    path = _save(figure, out / f"top_{noun}s.png")
    return Chart(path, f"Top {noun}s", caption)


def top_authors_chart(stories: Sequence[Row], out: Path) -> Chart | None:
    return _top_chart(stories, summary.author_label, "author", out)


def top_publications_chart(stories: Sequence[Row], out: Path) -> Chart | None:
    return _top_chart(stories, summary.publication_label, "publication", out)


def distributions_chart(stories: Sequence[Row], out: Path) -> Chart | None:
    minutes = summary.numeric_values(stories, "reading_time_min")
    claps = summary.numeric_values(stories, "claps")
    if not minutes and not claps:
        return None
    figure = Figure(figsize=(11, 3.8))
    left, right = figure.subplots(1, 2)
    if minutes:
        cap = float(min(60, max(30, math.ceil(max(minutes)))))
        clipped = [min(m, cap) for m in minutes]
        left.hist(clipped, bins=int(cap), range=(0, cap), color=BAR_COLOR, edgecolor="white")
        left.set_xlabel(f"reading time, minutes (longer ones counted at {cap:g})")
    left.set_title("Reading time")
    left.set_ylabel("stories")
    if claps:
        top = max(claps) + 1
        bins = [10 ** (math.log10(top) * k / 30) for k in range(31)] if top > 1 else [1, 2]
        right.hist([c + 1 for c in claps], bins=bins, color=SECOND_COLOR, edgecolor="white")
        right.set_xscale("log")
        right.xaxis.set_major_formatter(FuncFormatter(lambda v, _: compact_number(v)))
        right.set_xlabel("claps + 1 (log scale)")
    right.set_title("Claps")
    for axes in (left, right):
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    median = sorted(minutes)[len(minutes) // 2] if minutes else None
    caption = f"Median reading time {median:.1f} min." if median is not None else ""
    return Chart(_save(figure, out / "distributions.png"), "Reading time and claps", caption)


def tag_cooccurrence_chart(stories: Sequence[Row], out: Path) -> Chart | None:
    tags, matrix = summary.tag_cooccurrence(stories)
    if len(tags) < 2:
        return None
    size = 3 + 0.45 * len(tags)
    figure = Figure(figsize=(size + 1.5, size))
    axes = figure.add_subplot()
    image = axes.imshow(matrix, cmap="Greens")
    axes.set_xticks(range(len(tags)), tags, rotation=60, ha="right")
    axes.set_yticks(range(len(tags)), tags)
    peak = max(max(row) for row in matrix) or 1
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            if value:
                color = "white" if value > peak / 2 else "black"
                axes.text(j, i, str(value), ha="center", va="center", fontsize=7, color=color)
    figure.colorbar(image, ax=axes, label="stories with both tags")
    axes.set_title("Tag co-occurrence (diagonal: stories per tag)")
    caption = (
        f"The {len(tags)} most used tags; each cell counts stories carrying both (a story"
        " counts for a tag it carries or that listed it: tag_stories)."
    )
    return Chart(_save(figure, out / "tag_cooccurrence.png"), "Tag co-occurrence", caption)


def growth_chart(stats: Sequence[Row], out: Path) -> Chart | None:
    """Claps over time of the stories that grew most, from the ``story_stats`` snapshots."""
    series = summary.growth(stats)
    if not series:
        return None
    figure = Figure(figsize=(9, 3.8))
    axes = figure.add_subplot()
    for story_id, points in series:
        times = date2num(
            [datetime.fromisoformat(when.replace("Z", "+00:00")) for when, _ in points]
        )
        axes.plot(times, [value for _, value in points], marker="o", label=story_id)
    axes.xaxis_date()
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: compact_number(value)))
    axes.set_ylabel("claps")
    axes.set_title("Claps over time (snapshots of each crawl)")
    axes.legend(fontsize=7, loc="upper left")
    figure.autofmt_xdate()
    crawls = len({when for _, points in series for when, _ in points})
    caption = f"The {len(series)} stories whose claps grew most, over {crawls} crawl times."
    return Chart(_save(figure, out / "growth.png"), "Growth", caption)


CHARTS = (
    stories_per_month_chart,
    top_authors_chart,
    top_publications_chart,
    distributions_chart,
    tag_cooccurrence_chart,
)


def draw_all(stories: Sequence[Row], out: Path, story_stats: Sequence[Row] = ()) -> list[Chart]:
    """Every chart that has data, in report order (the growth chart last)."""
    charts = [chart for draw in CHARTS if (chart := draw(stories, out)) is not None]
    growth = growth_chart(story_stats, out)
    return [*charts, growth] if growth is not None else charts
