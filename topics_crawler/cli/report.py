"""Write a report of a dataset directory: Markdown with PNG charts, or one web page (--html)."""

from __future__ import annotations

import argparse
from pathlib import Path

from topics_crawler.cli._errors import CliError
from topics_crawler.report import FORMATS, ReportInputError, build_report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset_dir", type=Path, help="dataset directory written by a crawl")
    parser.add_argument(
        "--out", type=Path, help="folder for the report and its charts (default: DATASET/report)"
    )
    parser.add_argument("--format", choices=FORMATS, default="md", help="report format")
    parser.add_argument(
        "--html", action="store_true", help="a self-contained web page (same as --format html)"
    )


def run(args: argparse.Namespace) -> int:
    try:
        path = build_report(args.dataset_dir, args.out, "html" if args.html else args.format)
    except ReportInputError as exc:
        raise CliError(str(exc)) from exc
    print(path)
    return 0
