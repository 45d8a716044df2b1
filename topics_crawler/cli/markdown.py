"""Write one Markdown file per story of a dataset, with YAML front matter, for Hugo or Jekyll."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from topics_crawler.cli._errors import CliError, NoDataError
from topics_crawler.dataset import ENTITIES, DatasetError, read_manifest
from topics_crawler.dataset.manifest import check_schema_version
from topics_crawler.dataset.parts import read_table
from topics_crawler.output.exporters import records_of
from topics_crawler.output.markdown_files import COLUMNS, LAYOUTS, export_stories, only_author

STORIES = next(entity for entity in ENTITIES if entity.item_type == "story")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset_dir", type=Path, help="dataset directory written by a crawl")
    parser.add_argument("out", type=Path, help="folder of the site (created when missing)")
    parser.add_argument(
        "--layout", choices=sorted(LAYOUTS), default="hugo", help="where files go (default hugo)"
    )
    parser.add_argument("--author", help="only this author's stories (username, without @)")


def dataset_stories(directory: Path) -> list[dict[str, Any]]:
    """The story rows of a dataset (the columns the export reads); raises CliError."""
    if not directory.is_dir():
        raise CliError(f"{directory}: no such directory")
    try:
        if read_manifest(directory) is None:
            raise CliError(f"{directory} is not a dataset (no manifest.json)")
        check_schema_version(directory)
    except DatasetError as exc:
        raise CliError(str(exc)) from exc
    return records_of(read_table(directory / STORIES.parquet_name, columns=list(COLUMNS)))


def run(args: argparse.Namespace) -> int:
    stories: list[Mapping[str, Any]] = list(dataset_stories(args.dataset_dir))
    if args.author:
        stories = list(only_author(stories, args.author))
    if not stories:
        who = f" by {args.author}" if args.author else ""
        raise NoDataError(f"{args.dataset_dir} holds no stories{who}")
    result = export_stories(stories, args.dataset_dir, args.out, LAYOUTS[args.layout])
    print(f"{args.out}: {result.summary()}")
    return 0
