"""What a dataset directory holds: per entity type, a table of Parquet parts, its JSONL
twin and (for entities with counts) a snapshot table.

``<DATASET_DIR>/stories.parquet/part-*.parquet`` (a directory of parts: every current
story once, in exactly one part) + ``stories.jsonl`` (appended by each commit: the new and
changed records, the last line of an entity is its current record) + ``story_stats.parquet/``
(append-only: one row per story per crawl that saw it). Likewise ``authors``,
``publications``, ``tag_pages``, ``responses``, ``tag_edges``, ``tag_stories``. Also
``manifest.json`` (which parts make the current version), ``runs.jsonl`` (every run),
``README.md`` (the card), ``rejects.jsonl`` (validate pipeline), ``.state/`` (dedupe
pipeline), ``.lock`` (the crawl writing it, :mod:`.lock`), ``.staging/<run>/stage.sqlite``
while a crawl runs (:mod:`.stage`) and ``.<table>.next/`` while a commit writes (:mod:`.write`).

An entity type is one :class:`Entity` line in :data:`ENTITIES`; its columns come from its
item class's field declarations, its snapshot columns from its count fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
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
    TagStory,
    entity_keys,
)
from topics_crawler.items.fields import Kind, specs_of

MANIFEST_NAME = "manifest.json"
RUNS_NAME = "runs.jsonl"
STAGING_NAME = ".staging"
TABLE_SUFFIX = ".parquet"
#: Snapshot column saying the entity's page answered "gone" (404/410) at ``scraped_at``.
GONE_COLUMN = "gone"


@dataclass(frozen=True)
class Entity:
    """One entity type of the dataset: its item class, file stem and snapshot table.

    Two rows are the same entity when any of their identity keys match
    (:func:`~topics_crawler.items.entity_keys`: ``author_id``, or ``username`` when
    the id is unknown; compared trimmed and lowercased, as the dedupe pipeline does).
    """

    item_type: str
    item_class: type[Item]
    stem: str
    #: Stem of the snapshot table (``story_stats``); None: no snapshots.
    stats_stem: str | None = None

    @property
    def parquet_name(self) -> str:
        """The table: a directory of Parquet parts (``stories.parquet/``)."""
        return f"{self.stem}{TABLE_SUFFIX}"

    @property
    def jsonl_name(self) -> str:
        return f"{self.stem}.jsonl"

    @property
    def stats_name(self) -> str | None:
        return f"{self.stats_stem}{TABLE_SUFFIX}" if self.stats_stem else None

    @property
    def keys(self) -> tuple[str, ...]:
        """The identity fields (``author_id``, ``username``)."""
        return IDENTITY_FIELDS[self.item_type]

    def key_values(self, row: dict[str, Any]) -> list[str]:
        """The identity of a row: its :func:`~topics_crawler.items.entity_keys`."""
        return entity_keys(self.item_type, row)

    @cached_property
    def count_fields(self) -> tuple[str, ...]:
        """The fields a snapshot keeps: every count the item declares."""
        specs = specs_of(self.item_class)
        return tuple(name for name, declared in specs.items() if declared.kind is Kind.COUNT)

    @property
    def stats_fields(self) -> tuple[str, ...]:
        """Columns of a snapshot row: identity, ``scraped_at``, counts (then ``gone``)."""
        return (*self.keys, "scraped_at", *self.count_fields)


ENTITIES: tuple[Entity, ...] = (
    Entity("story", Story, "stories", "story_stats"),
    Entity("author", Author, "authors", "author_stats"),
    Entity("publication", Publication, "publications", "publication_stats"),
    Entity("tag_page", TagPage, "tag_pages", "tag_stats"),
    Entity("response", StoryResponse, "responses", "response_stats"),
    Entity("tag_edge", TagEdge, "tag_edges"),
    Entity("tag_story", TagStory, "tag_stories"),
)
ENTITY_OF: dict[str, Entity] = {entity.item_type: entity for entity in ENTITIES}


def table_names() -> list[str]:
    """Every table directory name of a dataset (entity tables, then snapshot tables)."""
    names = [entity.parquet_name for entity in ENTITIES]
    return names + [entity.stats_name for entity in ENTITIES if entity.stats_name]


def data_files(directory: Path) -> list[Path]:
    """The entity tables and twins (directories or legacy single files) in ``directory``."""
    names = [name for e in ENTITIES for name in (e.parquet_name, e.jsonl_name)]
    return [directory / name for name in names if (directory / name).exists()]
