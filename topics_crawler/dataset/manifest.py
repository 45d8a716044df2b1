"""``manifest.json``: schema version, counts, crawl runs; and the checks made before a crawl.

The manifest is rewritten (atomically) at the end of every crawl into the dataset::

    {"schema_version": 2, "project_version": "0.1.0",
     "created_at": ..., "updated_at": ...,
     "counts": {"story": 120, "author": 80, "publication": 12, "tag_page": 3},
     "files": {"story": {"parquet": "stories.parquet", "jsonl": "stories.jsonl"}, ...},
     "tags": [every tag crawled into the dataset],
     "last_run": {run}, "runs": [{run}, ...]}

where a run is ``{"spider", "started_at", "finished_at", "finish_reason", "tags",
"arguments", "settings", "items"}`` (``items``: rows exported by that run per type), plus
``"history_sources"`` for a ``-a history`` run: the tags each listing gave
(``{"graphql": 2, "day_archive": 1}``).
"""

from __future__ import annotations

import json
import tempfile
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

from topics_crawler.dataset._atomic import atomic_target
from topics_crawler.dataset.errors import DatasetError
from topics_crawler.dataset.layout import ENTITIES, MANIFEST_NAME, data_files

#: Bump when a column is removed, renamed or retyped. Version 2: timestamps are
#: ``timestamp[s, tz=UTC]``, nested values ``list<struct>`` / ``map`` columns (version 1
#: kept them as text). The versions this one upgrades on its first commit (one log line,
#: every file rewritten in that commit, never mixed); others are refused.
SCHEMA_VERSION = 2
UPGRADABLE_VERSIONS = frozenset({1})
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
    previous: dict[str, Any] | None, run: dict[str, Any], counts: dict[str, int]
) -> dict[str, Any]:
    """The new manifest: ``previous`` runs plus ``run``, with the dataset's row ``counts``."""
    runs = [*(previous or {}).get("runs", []), run]
    tags = sorted({tag for r in runs for tag in r.get("tags") or []})
    return {
        "schema_version": SCHEMA_VERSION,
        "project_version": project_version(),
        "created_at": (previous or {}).get("created_at", run["started_at"]),
        "updated_at": run["finished_at"],
        "counts": counts,
        "files": {
            e.item_type: {"parquet": e.parquet_name, "jsonl": e.jsonl_name} for e in ENTITIES
        },
        "tags": tags,
        "last_run": run,
        "runs": runs,
    }


def write_manifest(directory: Path, manifest: dict[str, Any]) -> Path:
    """Write ``manifest.json`` atomically; returns its path."""
    path = directory / MANIFEST_NAME
    with atomic_target(path) as temp:
        temp.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return path
