"""Where rejected items go: ``rejects.jsonl`` beside the dataset, one JSON object a line.

Each line is ``{"item_type", "url", "reasons", "rejected_at", "item"}``; ``item``
is the item as it reached validation (values that are not JSON become their
``repr``). The file is opened on the first reject and appended to, so the
rejects of earlier runs into the same folder stay on record.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote, urlsplit

from scrapy.settings import BaseSettings

from topics_crawler.normalize import format_timestamp

REJECTS_NAME = "rejects.jsonl"


def rejects_path(settings: BaseSettings) -> Path:
    """Path of the rejects file, first rule that applies:

    1. setting ``REJECTS_FILE``;
    2. ``<DATASET_DIR>/rejects.jsonl`` when ``DATASET_DIR`` is set;
    3. beside the first local file in ``FEEDS`` (a plain path or ``file://`` URI whose
       folder has no ``%(...)s`` placeholder);
    4. ``./rejects.jsonl``.
    """
    explicit = settings.get("REJECTS_FILE")
    if explicit:
        return Path(explicit)
    dataset_dir = settings.get("DATASET_DIR")
    if dataset_dir:
        return Path(dataset_dir) / REJECTS_NAME
    for uri in settings.getdict("FEEDS"):
        folder = local_feed_folder(str(uri))
        if folder is not None:
            return folder / REJECTS_NAME
    return Path(REJECTS_NAME)


def local_feed_folder(uri: str) -> Path | None:
    """Folder of a feed URI that is a local file; None for other storages or templated folders."""
    parts = urlsplit(uri)
    if parts.scheme == "file":
        path = unquote(parts.path)
    elif parts.scheme == "" or (len(parts.scheme) == 1 and uri[1:2] == ":"):
        path = uri  # a plain path (a one-letter "scheme" is a Windows drive)
    else:
        return None
    folder = Path(path).parent
    if "%(" in str(folder):
        return None
    return folder


def reject_record(
    item_type: str, url: Any, reasons: list[str], item: Any, now: datetime | None = None
) -> dict[str, Any]:
    """The JSON object written for one rejected item."""
    return {
        "item_type": item_type,
        "url": url if isinstance(url, str) else None,
        "reasons": reasons,
        "rejected_at": format_timestamp(now or datetime.now(UTC)),
        "item": item,
    }


class RejectsWriter:
    """Appends reject records to one JSON Lines file, created (with its folder) on first use."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None
        self.written = 0

    def write(self, record: dict[str, Any]) -> None:
        """Append one record and flush it, so a crash loses no reject."""
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write(json.dumps(record, ensure_ascii=False, default=repr) + "\n")
        self._file.flush()
        self.written += 1

    def close(self) -> None:
        """Close the file if it was opened."""
        if self._file is not None:
            self._file.close()
            self._file = None
