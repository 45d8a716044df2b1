"""The dataset add-on: ``-s DATASET_DIR=data/<name>`` turns a crawl into a dataset update.

``update_settings`` (before the crawl starts) checks that the directory is writable,
takes the dataset's lock (one writer per dataset, :mod:`.lock`), finishes or rolls back
a commit a killed crawl left (recovery before judgement), checks that the manifest has a
schema version this one writes, names this crawl's stage ``<DATASET_DIR>/.staging/<run>/`` (with
``JOBDIR``: ``job-<hash of JOBDIR>``, the same for every resume of the job), points the
dedupe pipeline's state at it and enables
:class:`~topics_crawler.dataset.extension.DatasetExtension`, which stages every scraped
item and commits the stage into the dataset at the end. Without ``DATASET_DIR`` it does
nothing.
"""

from __future__ import annotations

import hashlib
import logging
import os
from datetime import UTC, datetime
from pathlib import Path

from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings

from topics_crawler.dataset import lock
from topics_crawler.dataset.commit import recover
from topics_crawler.dataset.errors import DatasetError
from topics_crawler.dataset.extension import DatasetExtension
from topics_crawler.dataset.layout import STAGING_NAME
from topics_crawler.dataset.manifest import check_schema_version, check_writable
from topics_crawler.dataset.stage import STAGE_NAME
from topics_crawler.errors import check_or_log

logger = logging.getLogger(__name__)

EXTENSION_PRIORITY = 600
DEDUPE_STATE = "topics_crawler.dataset.stage.StagedDedupeState"


def run_id() -> str:
    """Name of this crawl's staging folder: UTC start time and process id."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{os.getpid()}"


def job_run_id(jobdir: str) -> str:
    """Name of a ``JOBDIR`` job's staging folder: the same for every resume of the job."""
    digest = hashlib.blake2b(str(Path(jobdir).absolute()).encode(), digest_size=6).hexdigest()
    return f"job-{digest}"


class DatasetAddon:
    """Scrapy add-on (``ADDONS``) writing the crawl into the dataset at ``DATASET_DIR``."""

    @staticmethod
    def preflight(settings: BaseSettings) -> None:
        """Raise :class:`~topics_crawler.dataset.errors.DatasetError` (a
        :class:`~topics_crawler.errors.CrawlNotStarted`) for an unwritable ``DATASET_DIR``
        or a dataset of another schema version, or one another crawl is writing (the lock
        taken here is held until the end of this crawl's commit). What a killed commit
        left is finished or rolled back first, under the lock."""
        directory = settings.get("DATASET_DIR")
        if directory:
            dataset_dir = Path(directory).expanduser().absolute()
            check_writable(dataset_dir)
            held = lock.acquire(dataset_dir)
            try:
                for line in recover(dataset_dir):
                    logger.info("Dataset %s: %s", dataset_dir, line)
                check_schema_version(dataset_dir)
            except OSError as exc:
                held.release()
                raise DatasetError(
                    f"cannot recover {dataset_dir}: {exc.filename or ''} {exc.strerror or exc}"
                ) from None
            except DatasetError:
                held.release()
                raise

    def update_settings(self, settings: BaseSettings) -> None:
        """Check the dataset directory and configure the staging feeds and the extension."""
        directory = settings.get("DATASET_DIR")
        if not directory:
            raise NotConfigured
        check_or_log(self.preflight, settings)
        dataset_dir = Path(directory).expanduser().absolute()
        jobdir = settings.get("JOBDIR") if not settings.get("REDIS_URL") else None
        staging_dir = dataset_dir / STAGING_NAME / (job_run_id(jobdir) if jobdir else run_id())
        settings.set(
            "DATASET_DIR", str(dataset_dir), priority=settings.getpriority("DATASET_DIR") or "addon"
        )
        settings.set("DATASET_STAGE", str(staging_dir / STAGE_NAME), priority="addon")
        settings.set("DEDUPE_STATE_CLASS", DEDUPE_STATE, priority="addon")
        settings.set_in_component_priority_dict("EXTENSIONS", DatasetExtension, EXTENSION_PRIORITY)
