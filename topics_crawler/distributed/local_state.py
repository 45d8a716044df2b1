"""What a distributed worker keeps on its own disk: the crawl it joined, and how far its feeds got.

Under ``DISTRIBUTED_STATE_DIR`` (``.scrapy/distributed`` unless set), one folder
per Redis server and key prefix holds:

* ``crawl-id`` — the id of the crawl this machine's workers joined (the value of
  the Redis crawl marker). Present while the crawl runs, removed when it
  finishes: a worker that finds it while Redis has no marker knows that Redis
  lost the crawl (restarted empty) instead of mistaking it for a new crawl;
* ``feed-<hash>.size`` — for each local feed file of a worker, its size at the
  worker's last checkpoint (or when it started). A worker started again with the same command cuts
  its feeds back to that size before it writes: whatever it wrote after its last
  checkpoint belongs to leases that other workers take over, and would
  otherwise be exported twice.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from scrapy.settings import BaseSettings

from topics_crawler.distributed.connection import DEFAULT_PREFIX, redact
from topics_crawler.output.feeds import local_feed_paths

logger = logging.getLogger(__name__)

DEFAULT_STATE_DIR = ".scrapy/distributed"


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()[:12]


def state_dir(settings: BaseSettings) -> Path:
    """This crawl's folder: per ``REDIS_URL`` (without credentials) and key prefix."""
    url = redact(str(settings.get("REDIS_URL") or ""))
    prefix = settings.get("REDIS_KEY_PREFIX") or DEFAULT_PREFIX
    root = Path(settings.get("DISTRIBUTED_STATE_DIR") or DEFAULT_STATE_DIR).expanduser()
    return root / f"{prefix}-{_digest(url + '|' + prefix)}"


def _write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (a kill leaves the old or the new)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, "utf-8")
    os.replace(temporary, path)


# --- the crawl this machine joined ------------------------------------------------------


def joined_crawl(folder: Path) -> str | None:
    path = folder / "crawl-id"
    return path.read_text("utf-8").strip() or None if path.exists() else None


def remember_crawl(folder: Path, crawl_id: str) -> None:
    _write(folder / "crawl-id", crawl_id)


def forget_crawl(folder: Path) -> None:
    (folder / "crawl-id").unlink(missing_ok=True)


# --- feed sizes at the last checkpoint ----------------------------------------------------


def unfinished_overwritten_feed(settings: BaseSettings) -> Path | None:
    """A feed this worker would overwrite (``-O``) although it holds the worker's part of
    an unfinished crawl (a checkpoint of it is recorded), or None."""
    folder = state_dir(settings)
    for feed in local_feed_paths(settings, overwritten=True):
        if _size_file(folder, feed).exists() and feed.exists() and feed.stat().st_size:
            return feed
    return None


def _size_file(folder: Path, feed: Path) -> Path:
    return folder / f"feed-{_digest(str(feed))}.size"


def record_feed_sizes(folder: Path, sizes: dict[Path, int]) -> None:
    for feed, size in sizes.items():
        _write(_size_file(folder, feed), f"{size} {feed}\n")


def cut_feeds_back(folder: Path, feeds: Iterable[Path]) -> int:
    """Cut each of ``feeds`` back to its size at the last checkpoint; bytes removed."""
    removed = 0
    for feed in feeds:
        size_file = _size_file(folder, feed)
        if not size_file.exists() or not feed.exists():
            continue
        size = int(size_file.read_text("utf-8").split()[0])
        extra = feed.stat().st_size - size
        if extra > 0:
            logger.info(
                "Cutting %s back to its last checkpoint (%d bytes): the %d bytes after it "
                "were written for requests that went back to the shared queue",
                feed,
                size,
                extra,
            )
            os.truncate(feed, size)
            removed += extra
    return removed


def record_starting_sizes(settings: BaseSettings) -> None:
    """Before anything is written: what is in the feeds now is this worker's checkpointed
    output (nothing, for a feed it overwrites), so a kill before its first checkpoint
    is cut back to it."""
    overwritten = set(local_feed_paths(settings, overwritten=True))
    sizes = {
        feed: 0 if feed in overwritten or not feed.exists() else feed.stat().st_size
        for feed in local_feed_paths(settings)
    }
    record_feed_sizes(state_dir(settings), sizes)


def forget_feed_sizes(folder: Path, feeds: Iterable[Path]) -> None:
    for feed in feeds:
        _size_file(folder, feed).unlink(missing_ok=True)


def settle_finished(settings: BaseSettings) -> None:
    """The crawl is over without this worker: its feeds back to its last checkpoint (what
    it wrote after went back to the queue, and others exported it), nothing left to
    resume on this machine."""
    folder, feeds = state_dir(settings), local_feed_paths(settings)
    cut_feeds_back(folder, feeds)
    forget_crawl(folder)
    forget_feed_sizes(folder, feeds)
