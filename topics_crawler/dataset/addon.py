"""The dataset add-on: ``-s DATASET_DIR=data/<name>`` turns a crawl into a dataset update.

``update_settings`` (before the crawl starts) checks that the directory is writable and
that its manifest has this schema version, then adds one Parquet and one JSONL feed per
entity type into ``<DATASET_DIR>/.staging/<run>/`` and enables
:class:`~topics_crawler.dataset.extension.DatasetExtension`, which merges the staging
files into the dataset when the feeds are closed. Without ``DATASET_DIR`` it does nothing.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings

from topics_crawler.dataset.extension import DatasetExtension
from topics_crawler.dataset.layout import STAGING_NAME, staging_feeds
from topics_crawler.dataset.manifest import check_schema_version, check_writable
from topics_crawler.errors import check_or_log

EXTENSION_PRIORITY = 600


def run_id() -> str:
    """Name of this crawl's staging folder: UTC start time and process id."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{os.getpid()}"


class DatasetAddon:
    """Scrapy add-on (``ADDONS``) writing the crawl into the dataset at ``DATASET_DIR``."""

    @staticmethod
    def preflight(settings: BaseSettings) -> None:
        """Raise :class:`~topics_crawler.dataset.errors.DatasetError` (a
        :class:`~topics_crawler.errors.CrawlNotStarted`) for an unwritable ``DATASET_DIR``
        or a dataset of another schema version."""
        directory = settings.get("DATASET_DIR")
        if directory:
            dataset_dir = Path(directory).expanduser().absolute()
            check_writable(dataset_dir)
            check_schema_version(dataset_dir)

    def update_settings(self, settings: BaseSettings) -> None:
        """Check the dataset directory and configure the staging feeds and the extension."""
        directory = settings.get("DATASET_DIR")
        if not directory:
            raise NotConfigured
        check_or_log(self.preflight, settings)
        dataset_dir = Path(directory).expanduser().absolute()
        staging_dir = dataset_dir / STAGING_NAME / run_id()
        feeds = settings["FEEDS"]
        for uri, options in staging_feeds(staging_dir).items():
            feeds.set(uri, options, priority="addon")
        settings.set(
            "DATASET_DIR", str(dataset_dir), priority=settings.getpriority("DATASET_DIR") or "addon"
        )
        settings.set("DATASET_STAGING_DIR", str(staging_dir), priority="addon")
        settings.set_in_component_priority_dict("EXTENSIONS", DatasetExtension, EXTENSION_PRIORITY)
