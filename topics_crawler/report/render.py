"""Write the report page (Markdown or HTML) next to its PNG charts."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from topics_crawler.dataset import ENTITIES
from topics_crawler.report import summary
from topics_crawler.report.load import ReportData

if TYPE_CHECKING:
    from topics_crawler.report.charts import Chart

TITLE = "Dataset report"


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


def markdown(data: ReportData, charts: Sequence[Chart]) -> str:
    lines = [f"# {TITLE}", "", "| | |", "|---|---|"]
    lines += [f"| {name} | {_md_cell(value)} |" for name, value in facts(data)]
    for chart in charts:
        lines += ["", f"## {chart.title}", "", f"![{chart.title}]({chart.path.name})", ""]
        if chart.caption:
            lines.append(chart.caption)
    return "\n".join(lines) + "\n"


def html_page(data: ReportData, charts: Sequence[Chart]) -> str:
    esc = html.escape
    table = "\n".join(
        f"<tr><th>{esc(name)}</th><td>{esc(value)}</td></tr>" for name, value in facts(data)
    )
    sections = "\n".join(
        f'<section><h2>{esc(c.title)}</h2><img src="{esc(c.path.name)}" alt="{esc(c.title)}">'
        f"<p>{esc(c.caption)}</p></section>"
        for c in charts
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{TITLE}</title><style>"
        "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
        "th{text-align:left;padding-right:1em}img{max-width:100%}"
        f"</style></head><body>\n<h1>{TITLE}</h1>\n<table>\n{table}\n</table>\n"
        f"{sections}\n</body></html>\n"
    )


def write_report(data: ReportData, charts: Sequence[Chart], out: Path, fmt: str) -> Path:
    """Write ``report.md`` or ``report.html`` into ``out``; returns its path."""
    if fmt == "html":
        path, text = out / "report.html", html_page(data, charts)
    else:
        path, text = out / "report.md", markdown(data, charts)
    path.write_text(text, "utf-8")
    return path
