"""The report as one self-contained web page: charts inline, top tables, crawl runs, failures.

Nothing on the page is fetched: the PNG charts are embedded as ``data:`` URIs and
the style is inline, so ``report.html`` can be mailed, attached or opened offline.
"""

from __future__ import annotations

import base64
import html
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from topics_crawler.report import summary
from topics_crawler.report.load import ReportData

if TYPE_CHECKING:
    from topics_crawler.report.charts import Chart

TOP = 10
STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;"
    "color:#222}h1{margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ddd}"
    "table{border-collapse:collapse;margin:.5em 0}th,td{padding:.25em .8em;text-align:left;"
    "border-bottom:1px solid #eee;vertical-align:top}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}thead th{background:#f4f4f4}img{max-width:100%}"
    ".tops{display:flex;flex-wrap:wrap;gap:2em}.caption{color:#555}"
)

Cell = str | int | float | None


def _cell(value: Cell) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f'<td class="n">{value:,}</td>'
    return f"<td>{html.escape('' if value is None else str(value))}</td>"


def table(headers: Sequence[str], rows: Iterable[Sequence[Cell]], empty: str = "none") -> str:
    """An HTML table; a table without rows gets one row saying ``empty``."""
    body = ["<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows]
    if not body:
        body = [f'<tr><td colspan="{len(headers)}">{html.escape(empty)}</td></tr>']
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    thead = f"<thead><tr>{head}</tr></thead>" if any(headers) else ""
    return f"<table>{thead}<tbody>{''.join(body)}</tbody></table>"


def embedded_image(chart: Chart) -> str:
    data = base64.b64encode(chart.path.read_bytes()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(chart.title)}">'


def top_tables(stories: Sequence[dict[str, Any]]) -> str:
    """Top authors, publications and tags, by stories (and claps)."""
    sections = []
    for noun, label_of in (
        ("Authors", summary.author_label),
        ("Publications", summary.publication_label),
    ):
        by_stories = summary.top_by_stories((label_of(s) for s in stories), TOP)
        claps = dict(summary.top_by_claps(stories, label_of, limit=len(stories)))
        rows = [(name, count, claps.get(name, 0)) for name, count in by_stories]
        sections.append(f"<div><h3>{noun}</h3>{table([noun[:-1], 'stories', 'claps'], rows)}</div>")
    tags = summary.stories_per_tag(stories)
    sections.append(f"<div><h3>Tags</h3>{table(['tag', 'stories'], tags.most_common(TOP))}</div>")
    return f'<div class="tops">{"".join(sections)}</div>'


def runs_table(manifest: dict[str, Any]) -> str:
    """One row per crawl run recorded in the manifest, newest first."""
    rows = []
    for run in reversed(manifest.get("runs") or []):
        items = run.get("items") or {}
        rows.append(
            (
                run.get("started_at"),
                run.get("finished_at"),
                run.get("finish_reason"),
                ", ".join(run.get("tags") or []),
                " ".join(f"{k}={v}" for k, v in sorted(items.items())) or "0",
            )
        )
    headers = ["started", "finished", "finish reason", "tags", "rows exported"]
    return table(headers, rows, empty="no run recorded")


def failures_table(failures: Counter[str]) -> str:
    rows = [(reason, count) for reason, count in failures.most_common()]
    return table(["reason", "pages"], rows, empty="no page failed")


def web_page(
    title: str,
    facts: Sequence[tuple[str, str]],
    data: ReportData,
    charts: Sequence[Chart],
    failures: Counter[str],
    *,
    topic_map: str = "",
) -> str:
    """The whole page as one HTML string (``topic_map``: its topic-graph section)."""
    esc = html.escape
    chart_sections = "".join(
        f"<section><h2>{esc(c.title)}</h2>{embedded_image(c)}"
        f'<p class="caption">{esc(c.caption)}</p></section>'
        for c in charts
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>\n"
        f"<h1>{esc(title)}</h1>\n"
        + table(["", ""], facts)
        + "\n<section><h2>Top</h2>"
        + top_tables(data.stories)
        + f"</section>\n{chart_sections}\n{topic_map}"
        + f"<section><h2>Crawl runs</h2>{runs_table(data.manifest)}</section>\n"
        + f"<section><h2>Failed pages by reason</h2>{failures_table(failures)}</section>\n"
        + "</body></html>\n"
    )
