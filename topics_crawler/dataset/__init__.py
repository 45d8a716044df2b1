"""The bulk dataset: a directory of per-type Parquet + JSONL files and a manifest.

``scrapy crawl topics -a tags=... -s DATASET_DIR=data/<name>`` writes (or merges into)
``stories``, ``authors``, ``publications`` and ``tag_pages`` ``.parquet``/``.jsonl`` and
``manifest.json``; see :mod:`~topics_crawler.dataset.layout` and
:mod:`~topics_crawler.dataset.manifest`. Enabled by :class:`DatasetAddon` in ``ADDONS``.
"""

from topics_crawler.dataset.addon import DatasetAddon
from topics_crawler.dataset.errors import DatasetError
from topics_crawler.dataset.extension import DatasetExtension
from topics_crawler.dataset.layout import ENTITIES, Entity
from topics_crawler.dataset.manifest import SCHEMA_VERSION, read_manifest

__all__ = [
    "ENTITIES",
    "SCHEMA_VERSION",
    "DatasetAddon",
    "DatasetError",
    "DatasetExtension",
    "Entity",
    "read_manifest",
]
