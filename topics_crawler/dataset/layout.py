"""What a dataset directory holds: one Parquet file and one JSONL twin per entity type.

``<DATASET_DIR>/stories.parquet`` + ``stories.jsonl`` (likewise ``authors``,
``publications``, ``tag_pages``, ``responses``, ``tag_edges``), ``manifest.json``,
``rejects.jsonl`` (validate pipeline), ``.state/`` (dedupe pipeline), ``.lock`` (the crawl
writing it, :mod:`.lock`) and ``.staging/<run>/stage.sqlite`` while a crawl runs
(:mod:`.stage`).
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
    TagEdge,
    TagPage,
    entity_keys,
)

MANIFEST_NAME = "manifest.json"
STAGING_NAME = ".staging"


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
    Entity("tag_edge", TagEdge, "tag_edges"),
)


def data_files(directory: Path) -> list[Path]:
    """The entity files (Parquet and JSONL) that exist in ``directory``."""
    names = [name for e in ENTITIES for name in (e.parquet_name, e.jsonl_name)]
    return [directory / name for name in names if (directory / name).exists()]
