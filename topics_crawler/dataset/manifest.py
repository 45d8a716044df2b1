"""``manifest.json``: schema version, counts, the parts of every table, the latest runs;
and the checks made before a crawl.

The manifest is replaced (atomically, by the commit, :mod:`.commit`) at the end of every
crawl that brought something::

    {"schema_version": 3, "project_version": "0.1.0",
     "created_at": ..., "updated_at": ...,
     "counts": {"story": 120, "author": 80, "publication": 12, "tag_page": 3, ...},
     "files": {"story": {"parquet": "stories.parquet", "jsonl": "stories.jsonl",
                         "stats": "story_stats.parquet"}, ...},
     "tables": {"stories.parquet": [{"name": "part-000001-000.parquet", "rows": 120,
                                     "bytes": 48213}], ...},
     "tags": [every tag crawled into the dataset],
     "languages": [every language a story states, ISO 639-1: "en", ...],
     "run_count": 7, "last_run": {run}, "runs": [the latest runs, oldest first]}

where a run is ``{"run_id", "spider", "started_at", "finished_at", "finish_reason",
"tags", "arguments", "settings", "items", "added", "changed", "snapshots"}`` (``items``:
rows the run wrote per type, new + changed). Every run is also a line of ``runs.jsonl``;
the manifest keeps the latest :data:`RECENT_RUNS`, so its size does not grow with the
dataset's history. ``tables`` names the files of this version: a reader that lists the
table directories while a commit moves its files may see a changed row twice for a few
milliseconds; one that reads these names never does. A ``-a history`` run also has
``"history_sources"``: the tags each listing gave (``{"graphql": 2, "day_archive": 1}``).
"""

from __future__ import annotations

import json
import tempfile
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

from topics_crawler.dataset.errors import DatasetError
from topics_crawler.dataset.layout import ENTITIES, ENTITY_OF, MANIFEST_NAME, data_files
from topics_crawler.dataset.parts import read_table

#: Bump when a column is removed, renamed or retyped, or the layout changes. Version 3:
#: each table a directory of parts, snapshot tables, ``runs.jsonl`` (version 2: one file
#: per table; version 1 kept timestamps and nested values as text). The versions this
#: one upgrades on its first commit (one log line; a table file of version 2 becomes the
#: first part of its table as it is, a version-1 file is rewritten); others are refused.
SCHEMA_VERSION = 3
UPGRADABLE_VERSIONS = frozenset({1, 2})
#: Runs the manifest keeps (every run is in ``runs.jsonl``).
RECENT_RUNS = 50
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def project_version() -> str:
    """Installed version of topics_crawler, else the one in pyproject.toml, else "unknown"."""
    try:
        return metadata.version("topics_crawler")
    except metadata.PackageNotFoundError:
        pass
    pyproject = PROJECT_ROOT / "pyproject.toml"
    if pyproject.is_file():
        project = tomllib.loads(pyproject.read_text("utf-8")).get("project", {})
        return str(project.get("version", "unknown"))
    return "unknown"


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """The manifest of ``directory``, or None when it has none."""
    path = directory / MANIFEST_NAME
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path} is not valid JSON ({exc.msg}, line {exc.lineno})") from exc
    if not isinstance(manifest, dict):
        raise DatasetError(f"{path} is not a dataset manifest (not a JSON object)")
    return manifest


def check_schema_version(directory: Path) -> dict[str, Any] | None:
    """The manifest of an existing dataset this version can append to (None: new dataset)."""
    manifest = read_manifest(directory)
    if manifest is None:
        existing = data_files(directory)
        if existing:
            raise DatasetError(
                f"{directory} holds {existing[0].name} but no {MANIFEST_NAME}: it was not "
                "written by topics_crawler; choose an empty or new DATASET_DIR"
            )
        return None
    version = manifest.get("schema_version")
    if version == SCHEMA_VERSION or version in UPGRADABLE_VERSIONS:
        return manifest
    if isinstance(version, int) and version > SCHEMA_VERSION:
        advice = "upgrade topics_crawler to append to it, or choose a new DATASET_DIR"
    else:
        advice = "choose a new DATASET_DIR (or move the old dataset away) and crawl again"
    raise DatasetError(
        f"{directory} was written with dataset schema version {version!r}; this "
        f"topics_crawler writes version {SCHEMA_VERSION}: {advice}"
    )


def check_writable(directory: Path) -> None:
    """Create ``directory`` if needed and prove a file can be written in it."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".write-probe-"):
            pass
    except OSError as exc:
        raise DatasetError(
            f"DATASET_DIR {directory} is not writable: {exc.strerror or exc}"
        ) from None


def build_manifest(
    previous: dict[str, Any] | None,
    run: dict[str, Any],
    counts: dict[str, int],
    tables: dict[str, list[dict[str, Any]]] | None = None,
    languages: list[str] | None = None,
) -> dict[str, Any]:
    """The new manifest: ``previous`` plus ``run``, with the dataset's row ``counts``, the
    parts of its ``tables`` and the ``languages`` its stories state."""
    previous = previous or {}
    runs = [*previous.get("runs", []), run][-RECENT_RUNS:]
    tags = sorted({*previous.get("tags", []), *(run.get("tags") or [])})
    files = {}
    for e in ENTITIES:
        files[e.item_type] = {"parquet": e.parquet_name, "jsonl": e.jsonl_name}
        if e.stats_name:
            files[e.item_type]["stats"] = e.stats_name
    return {
        "schema_version": SCHEMA_VERSION,
        "project_version": project_version(),
        "created_at": previous.get("created_at", run["started_at"]),
        "updated_at": run["finished_at"],
        "counts": counts,
        "files": files,
        "tables": tables or {},
        "tags": tags,
        "languages": sorted(languages or []),
        "run_count": previous.get("run_count", len(previous.get("runs", []))) + 1,
        "last_run": run,
        "runs": runs,
    }


def stated_languages(
    directory: Path, previous: dict[str, Any] | None, staged: list[str]
) -> list[str]:
    """The languages the stories state (the card's ``language``): the previous manifest's
    and the run's (``staged``); read from the stored stories once, for a dataset whose
    manifest has none yet (written before the card named them)."""
    known = (previous or {}).get("languages")
    if known is None:
        stories = read_table(directory / ENTITY_OF["story"].parquet_name, columns=["language"])
        known = stories.column("language").to_pylist() if stories.num_columns else []
    return sorted({str(code) for code in known if code} | set(staged))


def manifest_text(manifest: dict[str, Any]) -> str:
    """The text of ``manifest.json`` (what a commit writes, then renames into place)."""
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
