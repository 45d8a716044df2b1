"""The dataset card: ``<DATASET_DIR>/README.md``, written by every commit from the field
declarations and the manifest.

Its YAML front matter (:mod:`.card_meta`) names one Hugging Face ``datasets`` config per
table with rows (``load_dataset(DATASET_DIR, "stories")``), the licence, languages and
size; the body gives the one line that loads a table in each reader (one row per entity:
every current row is in exactly one part), what each file holds, whose the texts are and
what the rows say of people, every column with its Parquet type and meaning (the field's
declared description), and the latest crawl runs. It is regenerated at each commit (its
size does not grow with the dataset): edit the declarations, not the card.
"""

from __future__ import annotations

from typing import Any

from topics_crawler.dataset.card_meta import front_matter, table_glob, table_rows
from topics_crawler.dataset.layout import ENTITIES, GONE_COLUMN, TABLE_SUFFIX, Entity
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
STORIES = f"stories{TABLE_SUFFIX}"
TAG_STORIES = f"tag_stories{TABLE_SUFFIX}"


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def loading_lines() -> list[str]:
    """How to load the stories, one line per reader, run from the dataset's folder: each
    gives one row per story (the JSON lines twin, its last record per story); then the
    stories of each tag (``tag_stories``). From elsewhere, ``datasets.load_dataset("<this
    folder>", "stories")`` reads the configs (``"."`` is no folder name to ``datasets``)."""
    stories, twin = table_glob(STORIES), "stories.jsonl"
    return [
        "```python",
        f"duckdb.sql(\"select * from '{stories}'\")",
        f'polars.read_parquet("{stories}")',
        f'pandas.read_parquet("{STORIES}")',
        f'datasets.load_dataset("parquet", data_dir="{STORIES}", split="train")',
        '# from elsewhere: datasets.load_dataset("<this folder>", "stories") (the configs above)',
        "# the JSON lines twin: a changed story appears again below; its last line is current",
        f'polars.read_ndjson("{twin}", infer_schema_length=None)'
        '.unique("story_id", keep="last", maintain_order=True)',
        f'list({{r["story_id"]: r for r in map(json.loads, open("{twin}"))}}.values())',
        "# the stories each tag listed, and how (one row per tag, story and listing source)",
        f"duckdb.sql(\"select tag, source, title from '{table_glob(TAG_STORIES)}' join"
        f" '{stories}' using (story_id)\")",
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


#: The data-rights note: whose the texts are, what the licence field says.
RIGHTS = (
    "## Licence and copyright",
    "",
    "The stories, responses, titles, bios and images are their authors' work: Medium's terms"
    " leave each writer the rights to what they post, and this crawl gives no licence to"
    " them. The card's `license: other` (`license_name: medium-authors-rights`) says so: the"
    " facts in the rows (ids, URLs, counts, dates, tags, which tag listed which story) are"
    " given as crawled; reuse of the texts is what your law allows without the authors'"
    " permission (quotation, text and data mining for research where an exception covers"
    " it), or what they permit. Keep the `url` of a row with anything you quote from it."
    " Remove a story (and its responses) when its author asks.",
)
#: Who is in the rows, and what that asks of a publisher.
PERSONAL_DATA = (
    "## Personal data",
    "",
    "The rows name people: authors' and responders' display names, usernames and Medium"
    " ids, bios, avatars and follower counts, and the texts may mention others. Medium"
    " shows them to any logged-out reader; they are personal data all the same (the GDPR"
    " and similar laws). Publish only what your purpose needs, build no profile of a"
    " person, and honour a request to be removed: drop the rows naming the person"
    " (`authors` by `author_id` or `username`, `stories` and `responses` by `author_id`)"
    " from every table and file before publishing again. A crawl reads what a logged-out"
    " reader sees; a row with `access` `full_with_session` is a member-only text read"
    " with your own Medium session: never publish it.",
)


def _files_table(manifest: dict[str, Any]) -> list[str]:
    """One line per table: its config (none while it has no rows), files and rows."""
    counts, rows = manifest.get("counts", {}), table_rows(manifest)
    out = ["| config | files | rows | one row per |", "|---|---|---|---|"]
    for entity in ENTITIES:
        config = f"`{entity.stem}`" if rows.get(entity.parquet_name) else "- (no rows)"
        out.append(
            f"| {config} | `{table_glob(entity.parquet_name)}`, `{entity.jsonl_name}` | "
            f"{counts.get(entity.item_type, 0)} | {_ROW_OF[entity.item_type]} |"
        )
    for entity in ENTITIES:
        if entity.stats_name and entity.stats_stem:
            config = f"`{entity.stats_stem}`" if rows.get(entity.stats_name) else "- (no rows)"
            columns = ", ".join(f"`{name}`" for name in (*entity.stats_fields, GONE_COLUMN))
            out.append(
                f"| {config} | `{table_glob(entity.stats_name)}` | "
                f"{rows.get(entity.stats_name, 0)} | {_ROW_OF[entity.item_type]} seen by a"
                f" crawl: {columns} |"
            )
    return out


def render_card(manifest: dict[str, Any]) -> str:
    """The card's text for a dataset whose new manifest is ``manifest``."""
    tags = ", ".join(f"`{tag}`" for tag in manifest.get("tags", [])) or "none"
    languages = ", ".join(f"`{code}`" for code in manifest.get("languages") or [])
    out = [
        front_matter(manifest),
        "",
        "# Medium topics dataset",
        "",
        f"Written by topics_crawler {manifest.get('project_version')} (dataset schema version "
        f"{manifest.get('schema_version')}); created {manifest.get('created_at')}, updated "
        f"{manifest.get('updated_at')}. Tags crawled: {tags}. Languages the stories state: "
        f"{languages or 'none stated'} (a listing card states none).",
        "",
        "Each entity type is one table, a folder of Parquet parts (typed columns, zstd) that",
        "readers load as one: every entity is in exactly one part, once. Each commit appends",
        "the new and changed records to the table's JSON lines twin (timestamps as ISO 8601",
        "text, empty fields left out). `tag_stories` says which tag each story came from. From",
        "this folder:",
        "",
        *loading_lines(),
        "",
        "## Files",
        "",
        *_files_table(manifest),
        "",
        "The `*_stats` tables keep what each crawl saw of the counts, so growth is one query",
        "(`select story_id, scraped_at, claps from 'story_stats.parquet/*.parquet'`); a row",
        "with `gone` true says the entity's page answered 404 or 410 then (its row above",
        "stays; its latest row with `gone` false is when it was last seen). A table without",
        "rows has no config (`datasets` cannot load an empty one).",
        "",
        "Also: `manifest.json` (schema version, counts, the files of this version, the latest",
        "runs), `runs.jsonl` (every run), `rejects.jsonl` (items that failed validation, with",
        "reasons) and `failures.jsonl` (pages that failed).",
        "",
        *RIGHTS,
        "",
        *PERSONAL_DATA,
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
