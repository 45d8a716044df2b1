"""What a dataset directory holds: one Parquet file and one JSONL twin per entity type.

``<DATASET_DIR>/stories.parquet`` + ``stories.jsonl`` (likewise ``authors``,
``publications``, ``tag_pages``), ``manifest.json``, ``rejects.jsonl`` (validate
pipeline), ``.state/`` (dedupe pipeline) and ``.staging/<run>/`` while a crawl runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topics_crawler.items import Author, Item, Publication, Story, TagPage

MANIFEST_NAME = "manifest.json"
STAGING_NAME = ".staging"
LOCK_NAME = ".dataset.lock"


@dataclass(frozen=True)
class Entity:
    """One entity type of the dataset: its item class, file stem and identity keys.

    Two rows are the same entity when any of their non-empty ``keys`` values are
    equal (``author_id``, or ``username`` when the id is unknown); the later row wins.
    """

    item_type: str
    item_class: type[Item]
    stem: str
    keys: tuple[str, ...]

    @property
    def parquet_name(self) -> str:
        return f"{self.stem}.parquet"

    @property
    def jsonl_name(self) -> str:
        return f"{self.stem}.jsonl"

    def key_values(self, row: dict[str, Any]) -> list[tuple[str, Any]]:
        """The identity of a row: (key, value) for each key holding a non-empty string."""
        return [(key, row[key]) for key in self.keys if isinstance(row.get(key), str) and row[key]]


ENTITIES: tuple[Entity, ...] = (
    Entity("story", Story, "stories", ("story_id",)),
    Entity("author", Author, "authors", ("author_id", "username")),
    Entity("publication", Publication, "publications", ("publication_id", "slug")),
    Entity("tag_page", TagPage, "tag_pages", ("tag",)),
)


def data_files(directory: Path) -> list[Path]:
    """The entity files (Parquet and JSONL) that exist in ``directory``."""
    names = [name for e in ENTITIES for name in (e.parquet_name, e.jsonl_name)]
    return [directory / name for name in names if (directory / name).exists()]


def staging_feeds(staging_dir: Path) -> dict[str, dict[str, Any]]:
    """``FEEDS`` entries writing each entity type to Parquet and JSONL in ``staging_dir``."""
    feeds: dict[str, dict[str, Any]] = {}
    for entity in ENTITIES:
        class_path = f"{entity.item_class.__module__}.{entity.item_class.__qualname__}"
        common = {"item_classes": [class_path], "overwrite": True, "store_empty": True}
        feeds[(staging_dir / entity.parquet_name).as_uri()] = {
            "format": "parquet",
            "item_export_kwargs": {"item_class": class_path},
            **common,
        }
        feeds[(staging_dir / entity.jsonl_name).as_uri()] = {"format": "jsonlines", **common}
    return feeds
