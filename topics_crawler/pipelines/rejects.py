"""Where rejected items go: ``rejects.jsonl`` beside the dataset, one JSON object a line.

Each line is ``{"item_type", "url", "reasons", "rejected_at", "item"}``; ``item``
is the item as it reached validation (values that are not JSON become their
``repr``, as do ``NaN`` and infinities, so every line is strict JSON; a lone surrogate
is written as its ``\\udXXX`` escape). The file is opened on the first reject and
appended to, so the rejects of earlier runs into the same folder stay on record.
"""

from __future__ import annotations

import contextlib
import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from scrapy.settings import BaseSettings

from topics_crawler.items.values import format_timestamp
from topics_crawler.output.sidecar import sidecar_path

REJECTS_NAME = "rejects.jsonl"


def rejects_path(settings: BaseSettings) -> Path:
    """Path of the rejects file, first rule that applies:

    1. setting ``REJECTS_FILE``;
    2. ``<DATASET_DIR>/rejects.jsonl`` when ``DATASET_DIR`` is set;
    3. beside the first local file in ``FEEDS`` (a plain path or ``file://`` URI whose
       folder has no ``%(...)s`` placeholder);
    4. ``./rejects.jsonl``.
    """
    return sidecar_path(settings, "REJECTS_FILE", REJECTS_NAME) or Path(REJECTS_NAME)


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


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by its ``repr`` (strict JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {key: _finite(entry) for key, entry in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(entry) for entry in value]
    return value


class RejectsWriter:
    """Appends reject records to one JSON Lines file, created (with its folder) on first use."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None
        self.written = 0
        self.failed: OSError | None = None

    def write(self, record: dict[str, Any]) -> None:
        """Append one record and flush it, so a crash loses no reject. An ``OSError`` (a
        full disk) is raised, and again for every later record: the file is given up."""
        if self.failed is not None:
            raise self.failed
        line = json.dumps(_finite(record), ensure_ascii=False, allow_nan=False, default=repr)
        try:
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # backslashreplace: a lone surrogate (no UTF-8 for it) is written as
                # \\udXXX, which inside a JSON string reads back as the same character
                self._file = self.path.open("a", encoding="utf-8", errors="backslashreplace")
            self._file.write(line + "\n")
            self._file.flush()
        except OSError as exc:
            self.failed = exc
            self.close()
            raise
        self.written += 1

    def close(self) -> None:
        """Close the file if it was opened (what a full disk kept in its buffer is lost
        with the write that already failed)."""
        file, self._file = self._file, None
        if file is not None:
            with contextlib.suppress(OSError):
                file.close()
