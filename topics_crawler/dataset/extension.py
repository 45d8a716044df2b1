"""The extension that merges a crawl's staging feeds into the dataset and writes the manifest.

Enabled by :class:`~topics_crawler.dataset.addon.DatasetAddon`. It records when the
spider opened and why it closed, and on ``feed_exporter_closed`` (every feed file is
complete) merges each staging file into the dataset under a file lock, rewrites
``manifest.json`` and removes the staging folder. A failed merge is logged, counted in
``dataset/merge_failed`` and leaves the dataset as it was and the staging folder in place.
"""

from __future__ import annotations

import fcntl
import json
import logging
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

import pyarrow.parquet as pq
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from topics_crawler.dataset.layout import ENTITIES, LOCK_NAME, Entity
from topics_crawler.dataset.manifest import (
    build_manifest,
    check_schema_version,
    write_manifest,
)
from topics_crawler.dataset.merge import MergeResult, merge_jsonl, merge_parquet
from topics_crawler.exporters import DEFAULT_ROW_GROUP_SIZE

logger = logging.getLogger(__name__)

#: Settings recorded in the manifest when DATASET_MANIFEST_SETTINGS is not set.
DEFAULT_MANIFEST_SETTINGS = ("BOT_NAME", "USER_AGENT", "ROBOTSTXT_OBEY")


def utc_now() -> str:
    """Current time as a Timestamp (``YYYY-MM-DDTHH:MM:SSZ``)."""
    return f"{datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}"


def spider_arguments(spider: Spider) -> dict[str, str]:
    """The ``-a`` arguments of a crawl: ``spider.arguments`` when the spider keeps them,
    else the public string attributes Scrapy set on the instance (``-a`` values are strings).
    """
    kept = getattr(spider, "arguments", None)
    if isinstance(kept, Mapping):
        return {str(key): str(value) for key, value in kept.items()}
    return {
        key: value
        for key, value in vars(spider).items()
        if isinstance(value, str) and not key.startswith("_") and key != "name"
    }


def spider_tags(spider: Spider, arguments: Mapping[str, str]) -> list[str]:
    """Tags the crawl started from: ``spider.tags`` (list or comma-separated), the tag
    slugs of ``spider.options.tag_urls`` (the ``topics`` spider), or ``-a tags``."""
    tag_urls = getattr(getattr(spider, "options", None), "tag_urls", None)
    tags = getattr(spider, "tags", None) or tag_urls or arguments.get("tags") or []
    if isinstance(tags, str):
        tags = tags.split(",")
    return [str(tag).strip() for tag in tags if str(tag).strip()]


def json_safe(value: Any) -> Any:
    """``value`` as JSON data: settings objects become dicts, unknown objects strings."""
    if hasattr(value, "copy_to_dict"):
        value = value.copy_to_dict()
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value


@contextmanager
def dataset_lock(directory: Path) -> Iterator[None]:
    """Exclusive lock on the dataset, so two crawls never merge into it at once."""
    with (directory / LOCK_NAME).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class DatasetExtension:
    """Merge the staging feeds into ``DATASET_DIR`` at the end of the crawl."""

    def __init__(self, crawler: Crawler, dataset_dir: Path, staging_dir: Path) -> None:
        self.crawler = crawler
        self.dataset_dir = dataset_dir
        self.staging_dir = staging_dir
        settings = crawler.settings
        self.row_group_size = settings.getint("PARQUET_ROW_GROUP_SIZE", DEFAULT_ROW_GROUP_SIZE)
        self.manifest_settings = settings.getlist(
            "DATASET_MANIFEST_SETTINGS", list(DEFAULT_MANIFEST_SETTINGS)
        )
        self.started_at: str | None = None
        self.finish_reason: str | None = None
        self.spider: Spider | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        dataset_dir = crawler.settings.get("DATASET_DIR")
        staging_dir = crawler.settings.get("DATASET_STAGING_DIR")
        if not dataset_dir or not staging_dir:
            raise NotConfigured  # enabled by DatasetAddon when DATASET_DIR is set
        extension = cls(crawler, Path(dataset_dir), Path(staging_dir))
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(extension.feed_exporter_closed, signal=signals.feed_exporter_closed)
        return extension

    def spider_opened(self, spider: Spider) -> None:
        self.spider = spider
        self.started_at = utc_now()

    def spider_closed(self, spider: Spider, reason: str) -> None:
        self.finish_reason = reason

    def feed_exporter_closed(self) -> None:
        try:
            self.merge()
        except Exception:
            self.crawler.stats.inc_value("dataset/merge_failed")
            logger.exception(
                "Dataset %s not updated; this crawl's files stay in %s",
                self.dataset_dir,
                self.staging_dir,
            )

    def merge(self) -> dict[str, MergeResult]:
        """Merge every staged entity file into the dataset, then rewrite the manifest."""
        with dataset_lock(self.dataset_dir):
            previous = check_schema_version(self.dataset_dir)
            results = {entity.item_type: self._merge_entity(entity) for entity in ENTITIES}
            counts = {item_type: result.rows for item_type, result in results.items()}
            run = self._run_record({t: r.added for t, r in results.items()})
            write_manifest(self.dataset_dir, build_manifest(previous, run, counts))
        self._remove_staging()
        self._record_stats(results)
        return results

    def _merge_entity(self, entity: Entity) -> MergeResult:
        parquet = self.staging_dir / entity.parquet_name
        jsonl = self.staging_dir / entity.jsonl_name
        target = self.dataset_dir / entity.parquet_name
        if not parquet.exists():
            return MergeResult(rows=_parquet_rows(target), added=0)
        result = merge_parquet(entity, parquet, target, self.row_group_size)
        if jsonl.exists():
            merge_jsonl(entity, jsonl, self.dataset_dir / entity.jsonl_name)
        return result

    def _remove_staging(self) -> None:
        """Delete this crawl's staging folder, and ``.staging`` itself once it is empty."""
        shutil.rmtree(self.staging_dir, ignore_errors=True)
        with suppress(OSError):
            self.staging_dir.parent.rmdir()

    def _run_record(self, added: dict[str, int]) -> dict[str, Any]:
        arguments = spider_arguments(self.spider) if self.spider else {}
        settings = self.crawler.settings
        return {
            "spider": self.spider.name if self.spider else None,
            "started_at": self.started_at or utc_now(),
            "finished_at": utc_now(),
            "finish_reason": self.finish_reason or self.crawler.stats.get_value("finish_reason"),
            "tags": spider_tags(self.spider, arguments) if self.spider else [],
            "arguments": arguments,
            "settings": {name: json_safe(settings.get(name)) for name in self.manifest_settings},
            "items": added,
        }

    def _record_stats(self, results: dict[str, MergeResult]) -> None:
        stats = self.crawler.stats
        for item_type, result in results.items():
            stats.set_value(f"dataset/rows/{item_type}", result.rows)
            stats.set_value(f"dataset/added/{item_type}", result.added)
        summary = ", ".join(f"{t} {r.rows} (+{r.added})" for t, r in results.items())
        logger.info("Dataset %s updated: %s", self.dataset_dir, summary)


def _parquet_rows(path: Path) -> int:
    """Rows of an existing dataset file, 0 when there is none."""
    if not path.exists():
        return 0
    return int(pq.ParquetFile(path).metadata.num_rows)
