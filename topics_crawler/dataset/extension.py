"""The extension that stages a crawl's items and commits them into the dataset.

Enabled by :class:`~topics_crawler.dataset.addon.DatasetAddon` (which has finished or
rolled back a commit a killed crawl left before the crawl starts). On ``spider_opened``
(the dataset's lock is held since the crawl started) the stages killed crawls left are
carried into this crawl's (one log line each), to be committed with it; each scraped item
is then staged (:mod:`.stage`), and each sighting of an entity, changed or not (the
dedupe pipeline's drops of what did not change included), kept for the snapshot tables,
as are the entity pages that answered "gone"; on ``spider_closed`` the stage is
committed (:mod:`.commit`). A commit that fails, for any reason, is one error line naming
the cause and makes the crawl exit non-zero; the dataset stays as it was and the stage
stays for the next crawl, which tries it again (and fails again, loudly, if the cause
remains). A run that brought nothing writes nothing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

import pyarrow.parquet as pq
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from topics_crawler.dataset import lock
from topics_crawler.dataset.audit import load_audit
from topics_crawler.dataset.commit import commit_stage, decode_rows, utc_now
from topics_crawler.dataset.layout import ENTITIES, ENTITY_OF, MANIFEST_NAME, STAGING_NAME
from topics_crawler.dataset.manifest import check_schema_version, manifest_text, read_manifest
from topics_crawler.dataset.snapshots import gone_sighting, sighting
from topics_crawler.dataset.stage import STAGE_NAME, Stage
from topics_crawler.dataset.write import MergeResult
from topics_crawler.errors import record_write_failure
from topics_crawler.extensions.failures import GONE, failure_reason
from topics_crawler.items import record_of
from topics_crawler.output.exporters import DEFAULT_ROW_GROUP_SIZE
from topics_crawler.pipelines.dedupe import SeenAgain
from topics_crawler.signals import page_failed

logger = logging.getLogger(__name__)

#: Settings recorded in the manifest when DATASET_MANIFEST_SETTINGS is not set.
DEFAULT_MANIFEST_SETTINGS = ("BOT_NAME", "USER_AGENT", "ROBOTSTXT_OBEY")
_ITEM_TYPES = frozenset(entity.item_type for entity in ENTITIES)


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


def history_sources(stats: Mapping[str, Any]) -> dict[str, Any]:
    """``{"history_sources": {"graphql": 2, "day_archive": 1}}``: how many tags' histories
    each listing gave in this run (``history/source/*`` stats); {} for a run without one."""
    prefix = "history/source/"
    sources = {k.removeprefix(prefix): int(v) for k, v in stats.items() if k.startswith(prefix)}
    return {"history_sources": dict(sorted(sources.items()))} if sources else {}


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


def record_audit(dataset_dir: Path) -> None:
    """Put the completeness audit of the committed dataset into its manifest (``audit``);
    derived data, so a failure is one warning and the dataset stays as committed."""

    path = dataset_dir / MANIFEST_NAME
    temporary = path.with_name(f".{path.name}.audit")
    try:
        manifest = read_manifest(dataset_dir) or {}
        manifest["audit"] = {"computed_at": utc_now(), **load_audit(dataset_dir, manifest)}
        temporary.write_text(manifest_text(manifest), "utf-8")
        os.replace(temporary, path)  # whole or not at all
    except (OSError, ValueError) as exc:
        logger.warning("Dataset %s: completeness audit not recorded: %s", dataset_dir, exc)


def leftover_stages(dataset_dir: Path, own: Path) -> list[Path]:
    """Staging folders of other (killed) crawls, oldest first."""
    staging = dataset_dir / STAGING_NAME
    if not staging.is_dir():
        return []
    return sorted(p for p in staging.iterdir() if p.is_dir() and p != own.parent)


def stage_of_folder(folder: Path) -> Stage:
    """The stage of a leftover staging folder; a schema-1 folder (per-type Parquet feeds)
    is read into a new stage first."""
    stage = Stage.open(folder / STAGE_NAME)
    for entity in ENTITIES:
        old = folder / entity.parquet_name
        if old.exists() and old.stat().st_size:
            try:
                rows = decode_rows(pq.read_table(old))
            except Exception:  # a feed cut short by the kill has no footer
                logger.warning("Skipped %s: not a complete Parquet file", old)
                continue
            for row in rows:
                stage.put(entity.item_type, row)
            old.unlink()
    return stage


class DatasetExtension:
    """Stage the crawl's items in ``DATASET_STAGE``; commit them into ``DATASET_DIR``."""

    def __init__(self, crawler: Crawler, dataset_dir: Path, stage_path: Path) -> None:
        self.crawler = crawler
        self.dataset_dir = dataset_dir
        self.stage_path = stage_path
        settings = crawler.settings
        self.row_group_size = settings.getint("PARQUET_ROW_GROUP_SIZE", DEFAULT_ROW_GROUP_SIZE)
        self.manifest_settings = settings.getlist(
            "DATASET_MANIFEST_SETTINGS", list(DEFAULT_MANIFEST_SETTINGS)
        )
        self.jobdir = settings.get("JOBDIR") if not settings.get("REDIS_URL") else None
        self.stage: Stage | None = None
        self.failed: str | None = None
        self.started_at: str | None = None
        self.spider: Spider | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        dataset_dir = crawler.settings.get("DATASET_DIR")
        stage_path = crawler.settings.get("DATASET_STAGE")
        if not dataset_dir or not stage_path:
            raise NotConfigured  # enabled by DatasetAddon when DATASET_DIR is set
        extension = cls(crawler, Path(dataset_dir), Path(stage_path))
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(extension.item_dropped, signal=signals.item_dropped)
        crawler.signals.connect(extension.page_failed, signal=page_failed)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    # --- the crawl ----------------------------------------------------------------------

    def spider_opened(self, spider: Spider) -> None:
        self.spider = spider
        self.started_at = utc_now()
        lock.acquire(self.dataset_dir)
        try:
            resumed = self.stage_path.exists()
            self.stage = Stage.open(self.stage_path)
            for entity in ENTITIES if resumed else ():
                count = self.stage.count(entity.item_type)
                self.crawler.stats.set_value(f"dataset/resumed/{entity.item_type}", count)
            self.carry_leftovers(self.stage)
        except (OSError, sqlite3.Error) as exc:
            self._fail(exc, self.dataset_dir)
            return
        if self.jobdir:
            from topics_crawler.resume.journal import CrawlJournal  # noqa: PLC0415 (optional)

            CrawlJournal.for_jobdir(self.jobdir).add_commit_hook(self._before_checkpoint)

    def item_scraped(self, item: Any) -> None:
        self._stage(item, changed=True)

    def item_dropped(self, item: Any, exception: BaseException) -> None:
        """An entity the dedupe pipeline found unchanged was still seen: a snapshot row."""
        if isinstance(exception, SeenAgain):
            self._stage(item, changed=False)

    def _stage(self, item: Any, changed: bool) -> None:
        record = record_of(item)
        item_type = record.get("item_type") if record else None
        if self.stage is None or record is None or item_type not in _ITEM_TYPES:
            return
        try:
            if changed:
                self.stage.put(str(item_type), record)
            seen = sighting(ENTITY_OF[str(item_type)], record)
            if seen is not None:
                self.stage.sight(str(item_type), *seen)
        except (OSError, sqlite3.Error) as exc:
            self._fail(exc, self.stage_path)

    def page_failed(self, url: str, kind: str, status: int | None, reason: str, **_: Any) -> None:
        """An entity page that answered 404/410: the entity is gone (a snapshot row)."""
        if self.stage is None or failure_reason(kind, status, reason) != GONE:
            return
        gone = gone_sighting(url, datetime.now(UTC))
        if gone is None:
            return
        entity, key, row = gone
        try:
            self.stage.sight(entity.item_type, key, row)
        except (OSError, sqlite3.Error) as exc:
            self._fail(exc, self.stage_path)

    def _before_checkpoint(self) -> None:
        """A ``JOBDIR`` checkpoint marks pages done: their rows must be staged first."""
        if self.failed:
            raise OSError(f"the dataset stage cannot be written ({self.failed})")
        if self.stage is not None:
            self.stage.commit()

    def spider_closed(self, spider: Spider, reason: str) -> None:
        try:
            if self.stage is not None and not self.failed:
                self.commit(reason)
        except Exception as exc:  # any failure: one line, exit non-zero, dataset unchanged
            if not isinstance(exc, OSError | sqlite3.Error):
                logger.debug("Dataset commit failed", exc_info=True)
            self._fail(exc, self.dataset_dir)
        finally:
            held = lock.held(self.dataset_dir)
            if held is not None:
                held.release()

    def _fail(self, exc: BaseException, where: Path) -> None:
        """One line naming the file and the cause; the crawl stops and exits non-zero."""
        if self.failed:
            return
        path = getattr(exc, "filename", None) or where
        cause = getattr(exc, "strerror", None) or str(exc)
        if isinstance(exc, OSError | sqlite3.Error):
            self.failed = f"cannot write {path}: {cause}"
        else:
            self.failed = f"the commit failed: {type(exc).__name__}: {cause}"
        record_write_failure(
            self.crawler,
            "dataset",
            f"Dataset {self.dataset_dir} not updated: {self.failed}; this crawl's rows "
            f"stay in {self.stage_path.parent} for the next crawl",
        )

    # --- commits ------------------------------------------------------------------------

    def carry_leftovers(self, stage: Stage) -> None:
        """Carry the stages killed crawls left into this crawl's, to commit with it."""
        for folder in leftover_stages(self.dataset_dir, self.stage_path):
            leftover = stage_of_folder(folder)
            rows = stage.carry(leftover)
            leftover.close()
            shutil.rmtree(folder)
            self.crawler.stats.inc_value("dataset/recovered_rows", rows)
            logger.warning(
                "Dataset %s: %d rows left by the killed crawl %s are committed with this "
                "crawl's (its other pages are fetched again by this crawl)",
                self.dataset_dir,
                rows,
                folder.name,
            )

    @property
    def run_id(self) -> str:
        return self.stage_path.parent.name

    def commit(self, reason: str) -> dict[str, MergeResult]:
        """Commit this crawl's stage into the dataset."""
        assert self.stage is not None
        previous = check_schema_version(self.dataset_dir)
        stage, self.stage = self.stage, None
        results = commit_stage(
            self.dataset_dir, stage, self._run_record(reason), previous, self.row_group_size
        )
        if not results:
            logger.info("Dataset %s: nothing new; not written", self.dataset_dir)
            shutil.rmtree(self.stage_path.parent, ignore_errors=True)
            with contextlib.suppress(OSError):
                self.stage_path.parent.parent.rmdir()
            return results
        stats = self.crawler.stats
        for item_type, result in results.items():
            stats.set_value(f"dataset/rows/{item_type}", result.rows)
            stats.set_value(f"dataset/added/{item_type}", result.added)
            stats.set_value(f"dataset/changed/{item_type}", result.changed)
            if result.rejected:
                stats.set_value(f"dataset/rejected/{item_type}", result.rejected)
                logger.error(
                    "Dataset %s: %d %s row(s) no column can hold, kept in rejects.jsonl",
                    self.dataset_dir,
                    result.rejected,
                    item_type,
                )
        summary = ", ".join(
            f"{t} {r.rows} (+{r.added} new, {r.changed} changed)" for t, r in results.items()
        )
        logger.info("Dataset %s updated: %s", self.dataset_dir, summary)
        record_audit(self.dataset_dir)
        return results

    def _run_record(self, reason: str) -> dict[str, Any]:
        arguments = spider_arguments(self.spider) if self.spider else {}
        settings = self.crawler.settings
        return {
            "run_id": self.run_id,
            "spider": self.spider.name if self.spider else None,
            "started_at": self.started_at or utc_now(),
            "finished_at": utc_now(),
            "finish_reason": reason,
            "tags": spider_tags(self.spider, arguments) if self.spider else [],
            "arguments": arguments,
            "settings": {name: json_safe(settings.get(name)) for name in self.manifest_settings},
            **history_sources(self.crawler.stats.get_stats() if self.crawler.stats else {}),
        }
