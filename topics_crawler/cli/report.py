"""Write a Markdown/HTML report with charts for a dataset directory (not written yet)."""

from __future__ import annotations

import argparse

from topics_crawler.cli._errors import CliError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset_dir", help="dataset directory written by a crawl")


def run(args: argparse.Namespace) -> int:
    raise CliError("report is not written yet")
