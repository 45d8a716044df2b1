"""The dataset report: summary table and PNG charts as a Markdown or HTML page.

:func:`build_report` is what ``python -m topics_crawler report`` runs.
"""

from __future__ import annotations

from pathlib import Path

from topics_crawler.report.load import ReportInputError, load_dataset
from topics_crawler.report.render import write_report

FORMATS = ("md", "html")

__all__ = ["FORMATS", "ReportInputError", "build_report"]


def build_report(dataset_dir: Path, out: Path | None = None, fmt: str = "md") -> Path:
    """Write the report of ``dataset_dir`` into ``out`` (default ``<dataset>/report``).

    Raises :class:`ReportInputError` for a missing, foreign or empty dataset, or an
    output folder that cannot be written.
    """
    if fmt not in FORMATS:
        raise ReportInputError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    try:  # matplotlib is the report extra's, loaded only to draw
        from topics_crawler.report.charts import draw_all  # noqa: PLC0415
    except ImportError as exc:
        raise ReportInputError(
            f"the report needs {exc.name or 'matplotlib'}: pip install 'topics_crawler[report]'"
        ) from exc
    data = load_dataset(dataset_dir)
    out = out if out is not None else dataset_dir / "report"
    try:
        out.mkdir(parents=True, exist_ok=True)
        charts = draw_all(data.stories, out, data.story_stats)
        return write_report(data, charts, out, fmt)
    except OSError as exc:
        raise ReportInputError(f"cannot write the report to {out}: {exc.strerror or exc}") from exc
