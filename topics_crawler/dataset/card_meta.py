"""The dataset card's YAML front matter: what the Hugging Face Hub and ``datasets`` read.

One ``datasets`` config per table that holds rows (a config of an empty table fails to
load: ``Instruction "train" corresponds to no data``), each naming its table's Parquet parts
as its ``train`` split, ``stories`` the default; the licence (``other``: the texts are
their authors', :data:`LICENSE_NAME`), the languages the stories state, the size
category of the largest table, and what the rows are (found on the web, not annotated).
Written from the manifest at each commit (:mod:`.card`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from topics_crawler.dataset.layout import TABLE_SUFFIX, table_names
from topics_crawler.dataset.parts import PART_GLOB

PRETTY_NAME = "Medium topics (topics_crawler)"
#: The Hub's licence value for a licence not on its list, with a name and a link of its own.
LICENSE = "other"
LICENSE_NAME = "medium-authors-rights"
#: Medium's terms: each writer keeps the rights to what they post.
LICENSE_LINK = "https://policy.medium.com/medium-terms-of-service-9db0094a1e0f"
#: ``size_categories`` bounds, as the Hub names them (``datasets``' size_categories.json).
SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
)
DEFAULT_CONFIG = "stories"


def table_glob(table: str) -> str:
    """The files of a table, as readers glob them (``stories.parquet/part-*.parquet``)."""
    return f"{table}/{PART_GLOB}"


def size_category(rows: int) -> str:
    """The Hub's size category of a table of ``rows`` rows (``1K<n<10K``)."""
    for bound, name in SIZE_CATEGORIES:
        if rows < bound:
            return name
    return "n>1B"


def table_rows(manifest: Mapping[str, Any]) -> dict[str, int]:
    """Rows of every table of the dataset (``stories.parquet`` → 1012), from the parts the
    manifest names; 0 for a table it does not name."""
    tables = manifest.get("tables") or {}
    return {
        name: sum(int(part.get("rows") or 0) for part in tables.get(name) or [])
        for name in table_names()
    }


def configs(manifest: Mapping[str, Any]) -> list[str]:
    """The tables with rows (``stories.parquet``…), in :func:`table_names` order."""
    return [name for name, rows in table_rows(manifest).items() if rows]


def _yaml_list(key: str, values: list[str]) -> list[str]:
    return [f"{key}:", *(f"- {json.dumps(value)}" for value in values)]


def front_matter(manifest: Mapping[str, Any]) -> str:
    """The YAML header of the card for a dataset whose manifest is ``manifest``."""
    rows = table_rows(manifest)
    largest = max(rows.values(), default=0)
    lines = ["---", f"pretty_name: {PRETTY_NAME}"]
    lines += [f"license: {LICENSE}", f"license_name: {LICENSE_NAME}"]
    lines += [f"license_link: {LICENSE_LINK}"]
    languages = [str(code) for code in manifest.get("languages") or []]
    if languages:
        lines += _yaml_list("language", languages)
        lines.append(f"multilinguality: {'multilingual' if len(languages) > 1 else 'monolingual'}")
    lines += _yaml_list("size_categories", [size_category(largest)])
    lines += _yaml_list("language_creators", ["found"])
    lines += _yaml_list("annotations_creators", ["no-annotation"])
    lines += _yaml_list("source_datasets", ["original"])
    lines += _yaml_list("tags", ["medium", "web-crawl", "blogs"])
    names = [table.removesuffix(TABLE_SUFFIX) for table in configs(manifest)]
    default = DEFAULT_CONFIG if DEFAULT_CONFIG in names else next(iter(names), None)
    lines += ["configs:"] if names else []
    for config in names:
        lines += [f"- config_name: {config}", "  data_files:", "  - split: train"]
        lines.append(f"    path: {table_glob(config + TABLE_SUFFIX)}")
        if config == default:
            lines.append("  default: true")
    lines.append("---")
    return "\n".join(lines)
