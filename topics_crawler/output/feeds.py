"""Local feed files (``FEED_STORAGES`` for ``file://`` and plain paths) whose write failures
stop the crawl, and the registry of open feed files the crash-safe journal flushes.

:class:`CheckedFileFeedStorage` is Scrapy's :class:`~scrapy.extensions.feedexport.FileFeedStorage`
with two additions, both through Scrapy's public feed-storage interface:

* the file it opens reports a failed write (disk full, permissions) once, as one error
  line naming the file and the cause, stops the crawl and makes it exit non-zero
  (:func:`~topics_crawler.errors.record_write_failure`); later writes to it are refused
  silently instead of logging one traceback per item;
* while open, the file is listed by :func:`open_feed_files`, so the ``JOBDIR`` journal can
  flush it and record its size at each checkpoint without reaching into the feed exporter.

:func:`local_feed_path` and :func:`local_feed_paths` name the local files of ``FEEDS``
(what the journal and a distributed worker cut back after a kill).
"""

from __future__ import annotations

import io
import weakref
from pathlib import Path
from typing import IO, Any, Self
from urllib.parse import urlsplit

from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.extensions.feedexport import FileFeedStorage
from scrapy.settings import BaseSettings

from topics_crawler.errors import record_write_failure

_OPEN_FILES: weakref.WeakKeyDictionary[Crawler, dict[str, CheckedFile]] = (
    weakref.WeakKeyDictionary()
)


def local_feed_path(uri: str) -> Path | None:
    """The local file a feed URI names (plain path or ``file://``), None for other
    storages and for URIs with ``%(name)s`` placeholders."""
    if "%(" in uri:
        return None
    parts = urlsplit(uri)
    if parts.scheme == "file":
        return Path(parts.path)
    if len(parts.scheme) <= 1:  # no scheme, or a Windows drive letter
        return Path(uri)
    return None


def local_feed_paths(settings: BaseSettings, *, overwritten: bool | None = None) -> list[Path]:
    """The absolute local files of ``FEEDS``; ``overwritten``: only those opened with
    (True, ``-O``) or without (False, ``-o``) ``overwrite``."""
    default = settings.getbool("FEED_URI_PARAMS_OVERWRITE", False)
    paths = []
    for uri, options in settings.getdict("FEEDS").items():
        path = local_feed_path(str(uri))
        if path is None:
            continue
        overwrite = bool(options.get("overwrite", default)) if isinstance(options, dict) else False
        if overwritten is None or overwrite == overwritten:
            paths.append(path.absolute())
    return paths


def open_feed_files(crawler: Crawler) -> dict[str, CheckedFile]:
    """Absolute path → open feed file, for the local feeds of ``crawler``."""
    return dict(_OPEN_FILES.get(crawler, {}))


class CheckedFile(io.BufferedWriter):
    """A buffered feed file whose first failed write stops the crawl (see module doc)."""

    def __init__(self, raw: io.FileIO, path: str, crawler: Crawler | None) -> None:
        super().__init__(raw)
        self.path = path
        self.crawler = crawler
        self.failed: OSError | None = None

    def write(self, data: Any, /) -> int:
        if self.failed is not None:
            return memoryview(data).nbytes
        try:
            return super().write(data)
        except OSError as exc:
            self._fail(exc)
            return memoryview(data).nbytes

    def flush(self) -> None:
        if self.failed is not None:
            return
        try:
            super().flush()
        except OSError as exc:
            self._fail(exc)

    def close(self) -> None:
        if self.failed is not None:
            self.raw.close()
            return
        try:
            super().close()
        except OSError as exc:
            self._fail(exc)
            self.raw.close()

    def _fail(self, exc: OSError) -> None:
        self.failed = exc
        line = f"Cannot write feed {self.path}: {exc.strerror or exc}; stopping the crawl"
        if self.crawler is not None:
            record_write_failure(self.crawler, "feed", line)


class CheckedFileFeedStorage(FileFeedStorage):
    """``file://`` feed storage: failed writes stop the crawl; open files are registered."""

    def __init__(
        self,
        uri: str,
        *,
        feed_options: dict[str, Any] | None = None,
        crawler: Crawler | None = None,
    ) -> None:
        super().__init__(uri, feed_options=feed_options)
        self.crawler = crawler

    @classmethod
    def from_crawler(
        cls, crawler: Crawler, uri: str, *, feed_options: dict[str, Any] | None = None
    ) -> Self:
        return cls(uri, feed_options=feed_options, crawler=crawler)

    def open(self, spider: Spider) -> IO[bytes]:
        path = Path(self.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        file = CheckedFile(io.FileIO(path, self.write_mode), str(path.absolute()), self.crawler)
        if self.crawler is not None:
            _OPEN_FILES.setdefault(self.crawler, {})[file.path] = file
        return file

    def store(self, file: IO[bytes]) -> None:
        if self.crawler is not None and isinstance(file, CheckedFile):
            _OPEN_FILES.get(self.crawler, {}).pop(file.path, None)
        file.close()
