"""A dataset as data tools see it: DuckDB, polars and Hugging Face ``datasets`` load it
with typed columns, and the card's front matter gives ``datasets`` one config per file."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_dataset import crawl
from topics_crawler.items import Author, Story, TagPage

duckdb = pytest.importorskip("duckdb", reason="dev dependency (requirements.txt)")
polars = pytest.importorskip("polars", reason="dev dependency (requirements.txt)")

ITEMS = [
    Story(
        story_id="aaaaaaaaaaaa",
        url="https://medium.com/p/aaaaaaaaaaaa",
        title="One",
        claps=12,
        tags=["ai", "ml"],
        published_at="2025-01-02T03:04:05Z",
        scraped_at="2025-02-01T00:00:00Z",
    ),
    Story(story_id="bbbbbbbbbbbb", title="Two", scraped_at="2025-02-01T00:00:00Z"),
    Author(username="ada", followers=3),
    TagPage(
        tag="ai",
        sections={"latest_stories": ["aaaaaaaaaaaa", "bbbbbbbbbbbb"]},
        subtopics=[{"name": "LLM", "description": "Large models"}],
        who_to_follow=[{"kind": "author", "id": "a1", "username": "ada", "name": "Ada"}],
    ),
]


#: A second crawl changes story one and adds story three: the tables hold each once.
CHANGES = [
    Story(
        story_id="aaaaaaaaaaaa", title="One, edited", claps=40, scraped_at="2025-03-01T00:00:00Z"
    ),
    Story(story_id="cccccccccccc", title="Three", claps=3, scraped_at="2025-03-01T00:00:00Z"),
]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("tools") / "dataset"
    crawl(directory, ITEMS, tags="ai")
    crawl(directory, CHANGES, tags="ai")
    return directory


def test_duckdb_reads_typed_columns(dataset: Path) -> None:
    stories = str(dataset / "stories.parquet" / "*.parquet")
    relation = duckdb.sql(f"select published_at, tags, claps from '{stories}' order by story_id")
    assert [str(t) for t in relation.types] == ["TIMESTAMP WITH TIME ZONE", "VARCHAR[]", "BIGINT"]
    first = relation.fetchall()[0]
    assert first[1:] == (["ai", "ml"], 12), "the stored page's count beats a card's"
    assert first[0].isoformat() == "2025-01-02T03:04:05+00:00"
    tags = str(dataset / "tag_pages.parquet" / "*.parquet")
    sections = duckdb.sql(f"select sections[1].section, sections[1].story_ids from '{tags}'")
    assert sections.fetchall() == [("latest_stories", ["aaaaaaaaaaaa", "bbbbbbbbbbbb"])]
    username = duckdb.sql(f"select who_to_follow[1].username from '{tags}'").fetchall()
    assert username == [("ada",)]


def test_polars_reads_typed_columns(dataset: Path) -> None:
    stories = polars.read_parquet(dataset / "stories.parquet" / "*.parquet")
    assert stories.schema["published_at"] == polars.Datetime("ms", "UTC")
    assert stories.schema["tags"] == polars.List(polars.String)
    assert stories.schema["claps"] == polars.Int64
    tag_pages = polars.read_parquet(dataset / "tag_pages.parquet" / "*.parquet")
    subtopics = tag_pages.schema["subtopics"]
    assert isinstance(subtopics, polars.List)
    members = {"name": polars.String, "description": polars.String, "section": polars.String}
    assert subtopics.inner == polars.Struct(members)
    row = tag_pages.row(0, named=True)
    assert row["subtopics"] == [{"name": "LLM", "description": "Large models", "section": None}]


DATASETS_SCRIPT = """
import json, sys
from datasets import load_dataset
out = {}
for config in ("stories", "authors", "tag_pages"):
    table = load_dataset(sys.argv[1], config, split="train")
    features = {k: str(v) for k, v in table.features.items()}
    out[config] = {"rows": table.num_rows, "features": features}
print(json.dumps(out))
"""


def test_hugging_face_datasets_loads_each_entity_type_as_its_own_config(
    dataset: Path, tmp_path: Path
) -> None:
    pytest.importorskip("datasets", reason="dev dependency (requirements.txt)")
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_DATASETS_CACHE": str(tmp_path / "hf" / "datasets"),
    }
    done = subprocess.run(
        [sys.executable, "-c", DATASETS_SCRIPT, str(dataset)],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded["stories"]["rows"] == 3
    assert loaded["authors"]["rows"] == 1
    features = loaded["stories"]["features"]
    assert "timestamp[ms, tz=UTC]" in features["published_at"]
    assert "List(Value('string'))" in features["tags"] or "string" in features["tags"]
    assert loaded["tag_pages"]["rows"] == 1


def test_the_card_documents_every_column_and_the_runs(dataset: Path) -> None:
    card = (dataset / "README.md").read_text("utf-8")
    assert card.startswith("---\n")
    assert (
        "- config_name: stories\n  data_files: stories.parquet/part-*.parquet\n  default: true"
        in card
    )
    assert "- config_name: story_stats\n  data_files: story_stats.parquet/part-*.parquet" in card
    assert "| `published_at` | `timestamp[ms, tz=UTC]` | First publication time" in card
    assert "| `sections` | `list<item: struct<section: string, story_ids:" in card
    assert "*(identifies the entity; required)*" in card
    assert "## Crawl runs" in card


def readme_lines() -> list[str]:
    """The ``.venv/bin/python -c`` lines of the README's Datasets section."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text("utf-8")
    section = readme.split("## Datasets", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith(".venv/bin/python -c ")]


def test_the_readme_one_liners_run_in_the_venv(dataset: Path, tmp_path: Path) -> None:
    lines = readme_lines()
    assert len(lines) == 7  # main's five, data_source counts, the completeness audit
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    env["HF_HOME"] = str(tmp_path / "hf")
    for line in lines:
        code = shlex.split(line)[2].replace("data/dist-training", str(dataset))
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=env,
            timeout=240,
            check=False,
        )
        assert done.returncode == 0, f"{line}\n{done.stderr[-2000:]}"
        assert done.stdout.strip()


CARD_READERS = {
    "duckdb": "import duckdb, json; rows = duckdb.sql({line!r}).fetchall(); "
    "names = [r[1] for r in rows]",
    "polars": "import polars, json; frame = {line}; names = frame['story_id'].to_list()",
    "pandas": "import pandas, json; frame = {line}; names = list(frame['story_id'])",
    "datasets": "import datasets, json; table = {line}; names = table['story_id']",
    "json": "import json; records = {line}; names = [r['story_id'] for r in records]",
}


def card_lines(card: str) -> dict[str, str]:
    """The card's loading lines, by reader, as written."""
    block = card.split("```python\n", 1)[1].split("```", 1)[0]
    lines = [line for line in block.splitlines() if line and not line.startswith("#")]
    readers = {}
    for line in lines:
        name = line.split(".", 1)[0].split("(", 1)[0]
        readers["json" if name == "list" else name] = line
    return readers


def test_the_card_one_liners_load_one_current_row_per_story_in_every_reader(
    dataset: Path, tmp_path: Path
) -> None:
    pytest.importorskip("datasets", reason="dev dependency (requirements.txt)")
    lines = card_lines((dataset / "README.md").read_text("utf-8"))
    assert set(lines) == set(CARD_READERS)
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    env["HF_HOME"] = str(tmp_path / "hf")
    for reader, line in lines.items():
        written = line
        if reader == "duckdb":  # the query as written, with the columns the check reads
            written = line.removeprefix("duckdb.sql(").removesuffix(")").strip('"')
            written = written.replace("select *", "select title, story_id")
        code = CARD_READERS[reader].format(line=written) + "; print(json.dumps(sorted(names)))"
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=dataset, capture_output=True, text=True, env=env,
            timeout=240, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"{reader}: {line}\n{done.stderr[-2000:]}"
        assert json.loads(done.stdout.strip().splitlines()[-1]) == [
            "aaaaaaaaaaaa",
            "bbbbbbbbbbbb",
            "cccccccccccc",
        ], f"{reader}: one current row per story"
