"""The dataset card: ``<DATASET_DIR>/README.md``, written by every commit from the field
declarations and the manifest.

Its YAML front matter names one Hugging Face ``datasets`` config per table
(``load_dataset(DATASET_DIR, "stories")``); the body gives the one line that loads a
table in each reader (one row per entity: every current row is in exactly one part),
what each file holds, every column with its Parquet type and meaning (the field's
declared description), and the latest crawl runs. It is regenerated at each commit (its
size does not grow with the dataset): edit the declarations, not the card.
"""

from __future__ import annotations

from typing import Any

from topics_crawler.dataset.layout import ENTITIES, GONE_COLUMN, TABLE_SUFFIX, Entity, table_names
from topics_crawler.dataset.parts import PART_GLOB
from topics_crawler.items.fields import specs_of
from topics_crawler.output.exporters import arrow_schema

CARD_NAME = "README.md"
_ROW_OF = {
    "story": "story",
    "author": "author",
    "publication": "publication",
    "tag_page": "tag (topic) page",
    "response": "response (comment) to a story, in its thread",
    "tag_edge": "edge of the topic map a tag page shows",
    "tag_story": "story a listing of a tag showed (tag, story, how listed, rank, first/last seen)",
}


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def table_glob(table: str) -> str:
    """The files of a table, as readers glob them (``stories.parquet/*.parquet``)."""
    return f"{table}/{PART_GLOB}"


def front_matter() -> str:
    """The YAML header the Hugging Face ``datasets`` loader reads: one config per table."""
    lines = ["---", "pretty_name: Medium topics (topics_crawler)", "configs:"]
    for index, table in enumerate(table_names()):
        lines += [f"- config_name: {table.removesuffix(TABLE_SUFFIX)}"]
        lines += [f"  data_files: {table_glob(table)}"]
        if index == 0:
            lines.append("  default: true")
    lines.append("---")
    return "\n".join(lines)


def loading_lines() -> list[str]:
    """How to load the stories, one line per reader, run from the dataset's folder: each
    gives one row per story (and the JSON lines twin, its last record per story). From
    elsewhere, ``datasets.load_dataset("<this folder>", "stories")`` reads the configs."""
    stories = "stories.parquet"
    return [
        "```python",
        f"duckdb.sql(\"select * from '{table_glob(stories)}'\")",
        f'polars.read_parquet("{table_glob(stories)}")',
        f'pandas.read_parquet("{stories}")',
        f'datasets.load_dataset("parquet", data_files="{table_glob(stories)}", split="train")',
        "# the JSON lines twin: a changed story appears again below; its last line is current",
        'list({r["story_id"]: r for r in map(json.loads, open("stories.jsonl"))}.values())',
        "```",
    ]


def columns_table(entity: Entity) -> list[str]:
    """Markdown table of an entity's columns: name, Parquet type, description."""
    schema = arrow_schema(entity.item_class)
    rows = ["| column | type | description |", "|---|---|---|"]
    for name, declared in specs_of(entity.item_class).items():
        notes = []
        if declared.identity is not None:
            notes.append("identifies the entity")
        if declared.required or declared.one_of:
            notes.append("required" if declared.required else "required (or its alternative)")
        if declared.raw:
            notes.append(f"source text in `{declared.raw}`")
        tail = f" *({'; '.join(notes)})*" if notes else ""
        rows.append(
            f"| `{name}` | `{_cell(schema.field(name).type)}` | {_cell(declared.doc)}{tail} |"
        )
    return rows


def render_card(manifest: dict[str, Any]) -> str:
    """The card's text for a dataset whose new manifest is ``manifest``."""
    counts = manifest.get("counts", {})
    tags = ", ".join(f"`{tag}`" for tag in manifest.get("tags", [])) or "none"
    out = [
        front_matter(),
        "",
        "# Medium topics dataset",
        "",
        f"Written by topics_crawler {manifest.get('project_version')} (dataset schema version "
        f"{manifest.get('schema_version')}); created {manifest.get('created_at')}, updated "
        f"{manifest.get('updated_at')}. Tags crawled: {tags}.",
        "",
        "Each entity type is one table, a folder of Parquet parts (typed columns, zstd) that",
        "readers load as one: every entity is in exactly one part, once. Each commit appends",
        "the new and changed records to the table's JSON lines twin (timestamps as ISO 8601",
        "text, empty fields left out). From this folder:",
        "",
        *loading_lines(),
        "",
        "## Files",
        "",
        "| config | files | rows | one row per |",
        "|---|---|---|---|",
    ]
    for entity in ENTITIES:
        out.append(
            f"| `{entity.stem}` | `{table_glob(entity.parquet_name)}`, `{entity.jsonl_name}` | "
            f"{counts.get(entity.item_type, 0)} | {_ROW_OF[entity.item_type]} |"
        )
    for entity in ENTITIES:
        if entity.stats_name:
            columns = ", ".join(f"`{name}`" for name in (*entity.stats_fields, GONE_COLUMN))
            out.append(
                f"| `{entity.stats_stem}` | `{table_glob(entity.stats_name)}` | appended | "
                f"{_ROW_OF[entity.item_type]} seen by a crawl: {columns} |"
            )
    out += [
        "",
        "The `*_stats` tables keep what each crawl saw of the counts, so growth is one query",
        "(`select story_id, scraped_at, claps from 'story_stats.parquet/*.parquet'`); a row",
        "with `gone` true says the entity's page answered 404 or 410 then (its row above",
        "stays; its latest row with `gone` false is when it was last seen).",
        "",
        "Also: `manifest.json` (schema version, counts, the files of this version, the latest",
        "runs), `runs.jsonl` (every run), `rejects.jsonl` (items that failed validation, with",
        "reasons) and `failures.jsonl` (pages that failed).",
    ]
    for entity in ENTITIES:
        out += ["", f"## Columns of `{entity.stem}`", "", *columns_table(entity)]
    out += [
        "",
        "## Crawl runs",
        "",
        f"The latest {len(manifest.get('runs', []))} of {manifest.get('run_count', 0)} "
        "(every run: `runs.jsonl`).",
        "",
        "| run | started | finished | finish reason | tags | rows added |",
        "|---|---|---|---|---|---|",
    ]
    for run in manifest.get("runs", []):
        added = ", ".join(f"{t} {n}" for t, n in (run.get("items") or {}).items() if n)
        out.append(
            f"| `{_cell(run.get('run_id', '?'))}` | {run.get('started_at')} | "
            f"{run.get('finished_at')} | {_cell(run.get('finish_reason'))} | "
            f"{_cell(', '.join(run.get('tags') or []))} | {added or '-'} |"
        )
    return "\n".join(out) + "\n"
