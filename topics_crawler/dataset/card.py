"""The dataset card: ``<DATASET_DIR>/README.md``, written by every commit from the field
declarations and the manifest.

Its YAML front matter names one Hugging Face ``datasets`` config per entity type
(``load_dataset(DATASET_DIR, "stories")``); the body says what each file holds, every
column with its Parquet type and meaning (the field's declared description), and the
crawl runs. It is regenerated whole at each commit: edit the declarations, not the card.
"""

from __future__ import annotations

from typing import Any

from topics_crawler.dataset.layout import ENTITIES, Entity
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
}


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def front_matter() -> str:
    """The YAML header the Hugging Face ``datasets`` loader reads: one config per file."""
    lines = ["---", "pretty_name: Medium topics (topics_crawler)", "configs:"]
    for index, entity in enumerate(ENTITIES):
        lines += [f"- config_name: {entity.stem}", f"  data_files: {entity.parquet_name}"]
        if index == 0:
            lines.append("  default: true")
    lines.append("---")
    return "\n".join(lines)


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
        "Each entity type is one Parquet file (typed columns, zstd) and its JSON lines twin",
        "(the same rows; timestamps as ISO 8601 text). One row per entity. With the Hugging",
        'Face `datasets` library: `load_dataset("<this folder>", "stories")`.',
        "",
        "## Files",
        "",
        "| config | files | rows | one row per |",
        "|---|---|---|---|",
    ]
    for entity in ENTITIES:
        out.append(
            f"| `{entity.stem}` | `{entity.parquet_name}`, `{entity.jsonl_name}` | "
            f"{counts.get(entity.item_type, 0)} | {_ROW_OF[entity.item_type]} |"
        )
    out += [
        "",
        "Also: `manifest.json` (schema version, counts, every run), `rejects.jsonl` (items",
        "that failed validation, with reasons) and `failures.jsonl` (pages that failed).",
    ]
    for entity in ENTITIES:
        out += ["", f"## Columns of `{entity.stem}`", "", *columns_table(entity)]
    out += [
        "",
        "## Crawl runs",
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
