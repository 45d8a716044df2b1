"""The dataset card a Hugging Face user can publish: its front matter is Hub metadata (a
licence the Hub takes, the stories' languages, a size category, one config per table with
rows), it says whose the texts are and what the rows say of people, and each of its loading
lines gives one current row per story in its reader (DuckDB, polars, pandas, ``datasets``
offline, the JSON lines twin), the stories of each tag too."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from tests.test_dataset import crawl
from tests.test_dataset_tools import CHANGES, ITEMS, hf_env
from topics_crawler.dataset.card_meta import (
    LICENSE,
    LICENSE_NAME,
    configs,
    front_matter,
    size_category,
)
from topics_crawler.items import Story

hub = pytest.importorskip("huggingface_hub", reason="dev dependency (requirements.txt)")
datasets_resources = pytest.importorskip("datasets.utils.resources", reason="dev dependency")
STORY_IDS = ["aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("card") / "dataset"
    crawl(directory, ITEMS, tags="ai")
    crawl(directory, CHANGES, tags="ai")
    return directory


def hub_values(name: str) -> list[str]:
    """A list of values the Hub accepts, as ``datasets`` ships it (``size_categories``…)."""
    text = resources.files(datasets_resources).joinpath(f"{name}.json").read_text("utf-8")
    values = json.loads(text)
    return list(values) if isinstance(values, dict) else values


def test_size_categories_are_the_hubs_bounds() -> None:
    sizes = {rows: size_category(rows) for rows in (0, 999, 1_000, 9_999, 10_000, 2_500_000)}
    assert sizes == {
        0: "n<1K", 999: "n<1K", 1_000: "1K<n<10K", 9_999: "1K<n<10K",
        10_000: "10K<n<100K", 2_500_000: "1M<n<10M",
    }  # fmt: skip
    assert set(sizes.values()) <= set(hub_values("size_categories"))


def manifest_of(**rows: int) -> dict[str, Any]:
    return {"tables": {f"{name}.parquet": [{"rows": n}] for name, n in rows.items()}}


def test_a_config_only_for_each_table_with_rows() -> None:
    manifest = manifest_of(stories=3, authors=0, responses=0, tag_stories=5)
    assert configs(manifest) == ["stories.parquet", "tag_stories.parquet"]
    matter = front_matter(manifest)
    assert "config_name: responses" not in matter
    assert "- config_name: stories\n  data_files:\n  - split: train\n" in matter
    assert matter.count("default: true") == 1
    authors_only = front_matter(manifest_of(authors=2))
    assert "- config_name: authors\n" in authors_only
    assert "default: true" in authors_only  # the first table with rows, without stories
    assert "configs:" not in front_matter(manifest_of(stories=0))


def test_the_card_is_hub_metadata(dataset: Path) -> None:
    card = hub.DatasetCard.load(dataset / "README.md")
    data = card.data.to_dict()
    assert data["license"] == LICENSE == "other"
    assert data["license_name"] == LICENSE_NAME
    assert re.fullmatch(r"[a-z0-9][a-z0-9.-]*", LICENSE_NAME)  # the Hub's form of an id
    assert data["license_link"].startswith("https://")
    assert data["language"] == ["en"]
    assert set(data["language"]) <= set(hub_values("languages"))
    assert data["size_categories"] == ["n<1K"]
    names = [config["config_name"] for config in data["configs"]]
    assert "responses" not in names  # no responses crawled
    assert {"stories", "tag_stories", "story_stats"} <= set(names)
    stories = next(config for config in data["configs"] if config["config_name"] == "stories")
    assert stories["data_files"] == [{"split": "train", "path": "stories.parquet/part-*.parquet"}]
    assert stories["default"] is True
    text = card.text
    assert "## Licence and copyright" in text
    assert "their authors' work" in text
    assert "## Personal data" in text
    assert "`full_with_session`" in text
    assert "| - (no rows) | `responses.parquet/part-*.parquet`" in text


def test_the_card_documents_every_column_and_the_runs(dataset: Path) -> None:
    card = (dataset / "README.md").read_text("utf-8")
    assert "| `published_at` | `timestamp[ms, tz=UTC]` | First publication time" in card
    assert "| `sections` | `list<item: struct<section: string, story_ids:" in card
    assert "*(identifies the entity; required)*" in card
    assert "## Columns of `tag_stories`" in card
    assert "| `first_seen` | `timestamp[ms, tz=UTC]` |" in card
    assert "## Crawl runs" in card


#: Runs each loading line of the card in the dataset's folder; prints, per line, the story
#: ids it gives (or the rows of a query naming other columns).
CARD_SCRIPT = """
import json, sys
import datasets, duckdb, pandas, polars
datasets.disable_progress_bars()
out = []
for line in json.loads(sys.argv[1]):
    value = eval(line)
    if isinstance(value, duckdb.DuckDBPyRelation):
        frame = value.df()
    elif isinstance(value, polars.DataFrame):
        frame = value.to_pandas()
    elif isinstance(value, datasets.Dataset):
        frame = value.to_pandas()
    elif isinstance(value, list):
        frame = pandas.DataFrame(value)
    else:
        frame = value
    if "story_id" in frame.columns:
        out.append(sorted(frame["story_id"]))
    else:
        out.append(sorted(map(list, frame.itertuples(index=False))))
print(json.dumps(out))
"""


def card_lines(card: str) -> list[str]:
    """The card's loading lines, as written (comments and their trailing notes left out)."""
    block = card.split("```python\n", 1)[1].split("```", 1)[0]
    lines = [line.split("  # ", 1)[0] for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_the_card_one_liners_load_one_current_row_per_story_in_every_reader(
    dataset: Path, tmp_path: Path
) -> None:
    pytest.importorskip("datasets", reason="dev dependency (requirements.txt)")
    lines = card_lines((dataset / "README.md").read_text("utf-8"))
    readers = {line.split(".", 1)[0].split("(", 1)[0] for line in lines}
    assert readers == {"duckdb", "polars", "pandas", "datasets", "list"}
    done = subprocess.run(
        [sys.executable, "-c", CARD_SCRIPT, json.dumps(lines)], cwd=dataset,
        capture_output=True, text=True, env=hf_env(tmp_path), timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results = dict(zip(lines, json.loads(done.stdout.strip().splitlines()[-1]), strict=True))
    for line, result in results.items():
        if "tag_stories" in line:
            assert result == [["ai", "section", "One, edited"], ["ai", "section", "Two"]], line
        else:
            assert result == STORY_IDS, f"{line}: one current row per story"


def test_the_polars_twin_line_keeps_columns_that_start_late(tmp_path: Path) -> None:
    """History cards first (no tags, no language), a story page last: polars infers a
    twin's columns from its first 100 lines unless told otherwise."""
    cards = [Story(story_id=f"{n:012x}", title=f"Card {n}") for n in range(150)]
    page = Story(story_id="f" * 12, title="Page", tags=["ai"], language="en", claps=7)
    dataset = tmp_path / "data"
    crawl(dataset, [*cards, page])
    (line,) = [line for line in card_lines((dataset / "README.md").read_text()) if "ndjson" in line]
    done = subprocess.run(
        [sys.executable, "-c", "import json, polars\n"
         f"frame = {line}\n"
         "row = frame.filter(polars.col('story_id') == 'ffffffffffff').to_dicts()[0]\n"
         "naive = polars.read_ndjson('stories.jsonl')\n"
         "print(json.dumps([row['tags'], row['language'], frame.height, naive.columns]))"],
        cwd=dataset, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    tags, language, height, naive_columns = json.loads(done.stdout)
    assert (tags, language, height) == (["ai"], "en", 151)
    assert "language" not in naive_columns, "what the card's infer_schema_length=None avoids"


def test_the_languages_are_the_stories_and_an_older_manifest_learns_them(tmp_path: Path) -> None:
    dataset = tmp_path / "data"
    crawl(dataset, [Story(story_id="a" * 12, title="One", language="en")])
    path = dataset / "manifest.json"
    manifest = json.loads(path.read_text("utf-8"))
    assert manifest["languages"] == ["en"]
    del manifest["languages"]  # as a dataset written before the card named them
    path.write_text(json.dumps(manifest), "utf-8")
    crawl(dataset, [Story(story_id="b" * 12, title="Deux", language="fr")])
    assert json.loads(path.read_text("utf-8"))["languages"] == ["en", "fr"]
    card = hub.DatasetCard.load(dataset / "README.md")
    assert card.data.to_dict()["language"] == ["en", "fr"]
    assert card.data.to_dict()["multilinguality"] == "multilingual"
