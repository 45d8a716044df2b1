"""Write the report page: Markdown next to its PNG charts, or one self-contained HTML page."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from topics_crawler.dataset import ENTITIES
from topics_crawler.dataset.audit import load_audit
from topics_crawler.report import summary
from topics_crawler.report.audit import audit_tables
from topics_crawler.report.load import ReportData, load_failures
from topics_crawler.report.topic_graph import NO_EDGES, TopicGraph, caption, load_topic_graph, svg
from topics_crawler.report.web import table, web_page

if TYPE_CHECKING:
    from topics_crawler.report.charts import Chart

TITLE = "Dataset report"
GRAPH_TITLE = "Topic graph"
GRAPH_FILE = "topic_graph.svg"
AUDIT_TITLE = "Completeness"
AUDIT_CAPTION = (
    "What Medium states (a tag page's story count, followers) beside what the dataset holds;"
    " the member-only share of the stories held whose access is known; how the last run"
    " listed each tag; and why stories may be missing (the listing, the run's caps, failed"
    " pages)."
)


def facts(data: ReportData) -> list[tuple[str, str]]:
    """The summary table: what is in the dataset and where it came from."""
    manifest = data.manifest
    span = summary.date_span(data.stories)
    counts = ", ".join(f"{data.counts[e.item_type]} {e.stem.replace('_', ' ')}" for e in ENTITIES)
    last_run = manifest.get("last_run") or {}
    return [
        ("Dataset", str(data.directory)),
        ("Rows", counts),
        ("Published", f"{span[0]} to {span[1]}" if span else "no dates"),
        ("Tags crawled", ", ".join(manifest.get("tags") or []) or "none recorded"),
        ("Crawls", str(len(manifest.get("runs") or []))),
        ("Last crawl", f"{last_run.get('started_at')} to {last_run.get('finished_at')}"),
        ("Schema version", str(manifest.get("schema_version"))),
    ]


def _md_cell(text: str) -> str:
    return text.replace("|", r"\|")


def topic_graph_of(data: ReportData) -> TopicGraph | None:
    """The crawled tags and their edges (None: the dataset has no tag edges)."""
    return load_topic_graph(data.directory, data.manifest.get("tags") or [])


def completeness_of(data: ReportData) -> dict[str, Any]:
    """The completeness audit of the dataset (:mod:`topics_crawler.dataset.audit`)."""
    return load_audit(data.directory, data.manifest)


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        cells = ["" if v is None else f"{v:,}" if isinstance(v, int) else str(v) for v in row]
        lines.append("| " + " | ".join(_md_cell(cell) for cell in cells) + " |")
    return lines if rows else [*lines, "| none |" + " |" * (len(headers) - 1)]


def markdown(data: ReportData, charts: Sequence[Chart], graph: TopicGraph | None = None) -> str:
    lines = [f"# {TITLE}", "", "| | |", "|---|---|"]
    lines += [f"| {name} | {_md_cell(value)} |" for name, value in facts(data)]
    lines += ["", f"## {AUDIT_TITLE}", "", AUDIT_CAPTION]
    for title, headers, rows in audit_tables(completeness_of(data)):
        lines += ["", f"### {title}", "", *_md_table(headers, rows)]
    for chart in charts:
        lines += ["", f"## {chart.title}", "", f"![{chart.title}]({chart.path.name})", ""]
        if chart.caption:
            lines.append(chart.caption)
    lines += ["", f"## {GRAPH_TITLE}", ""]
    if graph is None:
        lines.append(NO_EDGES)
    else:
        lines += [f"![{GRAPH_TITLE}]({GRAPH_FILE})", "", caption(graph)]
    return "\n".join(lines) + "\n"


def html_page(data: ReportData, charts: Sequence[Chart], graph: TopicGraph | None = None) -> str:
    """The self-contained web page (see :mod:`topics_crawler.report.web`)."""
    esc = html.escape
    if graph is None:
        topic_map = f"<p>{esc(NO_EDGES)}</p>"
    else:
        topic_map = f'{svg(graph)}<p class="caption">{esc(caption(graph))}</p>'
    section = f"<section><h2>{GRAPH_TITLE}</h2>{topic_map}</section>\n"
    audit = "".join(
        f"<h3>{esc(title)}</h3>{table(headers, rows)}"
        for title, headers, rows in audit_tables(completeness_of(data))
    )
    section += (
        f'<section><h2>{AUDIT_TITLE}</h2><p class="caption">{esc(AUDIT_CAPTION)}</p>'
        f"{audit}</section>\n"
    )
    return web_page(
        TITLE, facts(data), data, charts, load_failures(data.directory), topic_map=section
    )


def write_report(data: ReportData, charts: Sequence[Chart], out: Path, fmt: str) -> Path:
    """Write ``report.md`` (with ``topic_graph.svg`` beside it) or ``report.html`` into
    ``out``; returns its path."""
    graph = topic_graph_of(data)
    if fmt == "html":
        path, text = out / "report.html", html_page(data, charts, graph)
    else:
        path, text = out / "report.md", markdown(data, charts, graph)
        if graph is not None:
            (out / GRAPH_FILE).write_text(svg(graph), "utf-8")
    path.write_text(text, "utf-8")
    return path
