"""Where side files of a crawl go (``rejects.jsonl``, ``failures.jsonl``): beside the output.

First rule that applies: the file's own setting (``REJECTS_FILE``,
``FAILURES_FILE``); ``<DATASET_DIR>/<name>`` when a dataset is written; beside the
first local file in ``FEEDS`` (a plain path or ``file://`` URI whose folder has no
``%(...)s`` placeholder); otherwise the caller decides (None).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

from scrapy.settings import BaseSettings


def sidecar_path(
    settings: BaseSettings, setting_name: str, filename: str, *, named_after_feed: bool = False
) -> Path | None:
    """Path of the side file ``filename`` for these settings, or None when there is no output
    folder to put it beside. ``named_after_feed``: beside a feed file, the side file takes
    its name (``out.jsonl`` → ``out.<filename>``), so two feeds in one folder keep theirs
    apart."""
    explicit = settings.get(setting_name)
    if explicit:
        return Path(explicit)
    dataset_dir = settings.get("DATASET_DIR")
    if dataset_dir:
        return Path(dataset_dir) / filename
    for uri in settings.getdict("FEEDS"):
        folder = local_feed_folder(str(uri))
        if folder is not None:
            name = Path(urlsplit(str(uri)).path if str(uri).startswith("file:") else str(uri))
            named = named_after_feed and "%(" not in name.name
            return folder / (f"{name.stem}.{filename}" if named else filename)
    return None


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
    return None if "%(" in str(folder) else folder
