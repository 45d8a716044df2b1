"""A dataset as data tools see it: DuckDB, polars, pandas and Hugging Face ``datasets``
(offline) load every table with typed columns, ``datasets`` by the card's configs (one per
table with rows) and by ``data_dir``; the README's one-liners run."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_dataset import crawl
from topics_crawler.dataset.layout import ENTITIES, table_names
from topics_crawler.dataset.parts import table_rows
from topics_crawler.items import Author, Story, TagPage, TagStory

duckdb = pytest.importorskip("duckdb", reason="dev dependency (requirements.txt)")
polars = pytest.importorskip("polars", reason="dev dependency (requirements.txt)")
pandas = pytest.importorskip("pandas", reason="dev dependency (requirements.txt)")

SEEN = "2025-02-01T00:00:00Z"
ITEMS = [
    Story(
        story_id="aaaaaaaaaaaa",
        url="https://medium.com/p/aaaaaaaaaaaa",
        title="One",
        claps=12,
        tags=["ai", "ml"],
        language="en",
        published_at="2025-01-02T03:04:05Z",
        scraped_at=SEEN,
    ),
    Story(story_id="bbbbbbbbbbbb", title="Two", scraped_at=SEEN),
    Author(username="ada", followers=3),
    TagPage(
        tag="ai",
        sections={"latest_stories": ["aaaaaaaaaaaa", "bbbbbbbbbbbb"]},
        subtopics=[{"name": "LLM", "description": "Large models"}],
        who_to_follow=[{"kind": "author", "id": "a1", "username": "ada", "name": "Ada"}],
        scraped_at=SEEN,
    ),
    *(
        TagStory(
            membership_id=f"ai>section>{story_id}", tag="ai", story_id=story_id,
            source="section", section="latest_stories", rank=rank, first_seen=SEEN,
            last_seen=SEEN,
        )
        for rank, story_id in enumerate(("aaaaaaaaaaaa", "bbbbbbbbbbbb"), 1)
    ),
]  # fmt: skip


#: A second crawl changes story one and adds story three: the tables hold each once.
CHANGES = [
    Story(
        story_id="aaaaaaaaaaaa", title="One, edited", claps=40, scraped_at="2025-03-01T00:00:00Z"
    ),
    Story(story_id="cccccccccccc", title="Three", claps=3, scraped_at="2025-03-01T00:00:00Z"),
]
HF_OFFLINE = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}


def hf_env(tmp_path: Path) -> dict[str, str]:
    """``datasets`` offline, its caches in ``tmp_path``."""
    home = tmp_path / "hf"
    return {**os.environ, **HF_OFFLINE, "HF_HOME": str(home), "HF_DATASETS_CACHE": str(home / "d")}


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


def tables_with_rows(dataset: Path) -> dict[str, int]:
    """``stories.parquet`` → rows, for every table of the dataset that has rows."""
    rows = {name: table_rows(dataset / name) for name in table_names()}
    return {name: count for name, count in rows.items() if count}


def test_every_table_loads_in_duckdb_polars_and_pandas(dataset: Path) -> None:
    tables = tables_with_rows(dataset)
    assert {"stories.parquet", "authors.parquet", "tag_stories.parquet"} <= set(tables)
    assert "responses.parquet" not in tables  # no responses crawled
    assert set(tables) <= {e.parquet_name for e in ENTITIES} | set(table_names())
    for name, rows in tables.items():
        glob = str(dataset / name / "*.parquet")
        assert duckdb.sql(f"select count(*) from '{glob}'").fetchall() == [(rows,)], name
        assert polars.read_parquet(glob).height == rows, name
        assert len(pandas.read_parquet(dataset / name)) == rows, name
    memberships = duckdb.sql(
        f"select tag, source, rank, first_seen from '{dataset}/tag_stories.parquet/*.parquet'"
        " order by rank"
    )
    assert [str(t) for t in memberships.types] == [
        "VARCHAR", "VARCHAR", "BIGINT", "TIMESTAMP WITH TIME ZONE"
    ]  # fmt: skip
    assert [row[:3] for row in memberships.fetchall()] == [
        ("ai", "section", 1),
        ("ai", "section", 2),
    ]


DATASETS_SCRIPT = """
import json, sys
from datasets import load_dataset
directory, configs, tables = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
out = {"configs": {}, "data_dir": {}}
for config in configs:
    table = load_dataset(directory, config, split="train")
    features = {k: str(v) for k, v in table.features.items()}
    out["configs"][config] = {"rows": table.num_rows, "features": features}
for name in tables:
    table = load_dataset("parquet", data_dir=f"{directory}/{name}", split="train")
    out["data_dir"][name] = table.num_rows
try:
    load_dataset(directory, "responses", split="train")
    out["responses"] = "loaded"
except ValueError as exc:  # no such config: the table has no rows
    out["responses"] = str(exc).splitlines()[0]
print(json.dumps(out))
"""


def test_hugging_face_datasets_loads_every_table_by_config_and_by_data_dir(
    dataset: Path, tmp_path: Path
) -> None:
    pytest.importorskip("datasets", reason="dev dependency (requirements.txt)")
    tables = tables_with_rows(dataset)
    configs = [name.removesuffix(".parquet") for name in tables]
    done = subprocess.run(
        [sys.executable, "-c", DATASETS_SCRIPT, str(dataset), json.dumps(configs),
         json.dumps(list(tables))],
        capture_output=True, text=True, env=hf_env(tmp_path), timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert {c: v["rows"] for c, v in loaded["configs"].items()} == {
        name.removesuffix(".parquet"): rows for name, rows in tables.items()
    }
    assert loaded["data_dir"] == tables
    assert "responses" in loaded["responses"]  # not a config: "train" would hold no data
    features = loaded["configs"]["stories"]["features"]
    assert "timestamp[ms, tz=UTC]" in features["published_at"]
    assert "List(Value('string'))" in features["tags"] or "string" in features["tags"]
    assert "timestamp[ms, tz=UTC]" in loaded["configs"]["tag_stories"]["features"]["last_seen"]


def readme_lines() -> list[str]:
    """The ``.venv/bin/python -c`` lines of the README's Datasets section."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text("utf-8")
    section = readme.split("## Datasets", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith(".venv/bin/python -c ")]


def test_the_readme_one_liners_run_in_the_venv(dataset: Path, tmp_path: Path) -> None:
    lines = readme_lines()
    assert len(lines) == 8  # main's five, data_source counts, the audit, tag_stories
    for line in lines:
        code = shlex.split(line)[2].replace("data/dist-training", str(dataset))
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True,
            env=hf_env(tmp_path), timeout=240, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"{line}\n{done.stderr[-2000:]}"
        assert done.stdout.strip()
