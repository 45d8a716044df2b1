"""What a dataset directory holds: one Parquet file and one JSONL twin per entity type.

``<DATASET_DIR>/stories.parquet`` + ``stories.jsonl`` (likewise ``authors``,
``publications``, ``tag_pages``, ``responses``), ``manifest.json``, ``rejects.jsonl`` (validate
pipeline), ``.state/`` (dedupe pipeline) and ``.staging/<run>/`` while a crawl runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topics_crawler.items import (
    IDENTITY_FIELDS,
    Author,
    Item,
    Publication,
    Story,
    StoryResponse,
    TagPage,
    entity_keys,
)

MANIFEST_NAME = "manifest.json"
STAGING_NAME = ".staging"
LOCK_NAME = ".dataset.lock"


@dataclass(frozen=True)
class Entity:
    """One entity type of the dataset: its item class, file stem and identity fields.

    Two rows are the same entity when any of their identity keys match
    (:func:`~topics_crawler.items.entity_keys`: ``author_id``, or ``username`` when
    the id is unknown; compared trimmed and lowercased, as the dedupe pipeline does).
    """

    item_type: str
    item_class: type[Item]
    stem: str

    @property
    def parquet_name(self) -> str:
        return f"{self.stem}.parquet"

    @property
    def jsonl_name(self) -> str:
        return f"{self.stem}.jsonl"

    @property
    def keys(self) -> tuple[str, ...]:
        """The identity fields (``author_id``, ``username``)."""
        return IDENTITY_FIELDS[self.item_type]

    def key_values(self, row: dict[str, Any]) -> list[str]:
        """The identity of a row: its :func:`~topics_crawler.items.entity_keys`."""
        return entity_keys(self.item_type, row)


ENTITIES: tuple[Entity, ...] = (
    Entity("story", Story, "stories"),
    Entity("author", Author, "authors"),
    Entity("publication", Publication, "publications"),
    Entity("tag_page", TagPage, "tag_pages"),
    Entity("response", StoryResponse, "responses"),
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
