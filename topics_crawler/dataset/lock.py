"""One writer per dataset: an exclusive lock on ``<DATASET_DIR>/.lock`` for the whole crawl.

The lock is an ``flock`` on the file, held from the crawl's start to the end of its
commit. The file also says who holds it (``pid``, host, since when, the command), so a
second crawl is refused with one line naming the holder. The kernel drops an ``flock``
when its process dies, so the lock of a killed crawl is stale by construction: the
next crawl takes it and says whose lock it found.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from topics_crawler.dataset.errors import DatasetError
from topics_crawler.safety.secrets import redact_arguments

logger = logging.getLogger(__name__)

LOCK_FILE = ".lock"

_HELD: dict[Path, DatasetLock] = {}
"""Locks this process holds, by dataset directory (a lock is taken once per process)."""


@dataclass
class DatasetLock:
    """A held lock; :meth:`release` gives it up."""

    directory: Path
    handle: IO[str]
    holder: dict[str, Any]

    def release(self) -> None:
        """Unlock and forget the lock. The file stays, emptied: a holder named in it is a
        crawl that ended without releasing it (killed), and the next one says so."""
        if _HELD.get(self.directory) is self:
            del _HELD[self.directory]
        with contextlib.suppress(OSError):  # a full disk cannot stop the release
            self.handle.seek(0)
            self.handle.truncate()
            self.handle.flush()
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()


def holder_line(holder: dict[str, Any]) -> str:
    """``pid 123 on host since 2026-12-01T18:00:00Z (scrapy crawl topics …)``."""
    command = holder.get("command")
    tail = f" ({command})" if command else ""
    return f"pid {holder.get('pid')} on {holder.get('host')} since {holder.get('since')}{tail}"


def command_line() -> str:
    """This process's command line, ``scrapy …`` for Scrapy's command runner, with the
    values of secret settings (``-s MEDIUM_COOKIE=…``) redacted; a Scrapyd job's starts
    with its job id (``Scrapyd job <id>: scrapy crawl …``), the handle to cancel it."""
    program = "scrapy" if "scrapy" in sys.argv[0] else Path(sys.argv[0]).name
    arguments = redact_arguments(sys.argv[1:])
    line = " ".join([program, *arguments])
    job = next(
        (a.partition("=")[2] for a in arguments if a.startswith("_job=")),  # Scrapyd's -a
        None,
    )
    return f"Scrapyd job {job}: {line}" if job else line


def _read_holder(handle: IO[str]) -> dict[str, Any]:
    handle.seek(0)
    try:
        holder = json.loads(handle.read() or "{}")
    except json.JSONDecodeError:
        return {}
    return holder if isinstance(holder, dict) else {}


def acquire(directory: Path) -> DatasetLock:
    """Take the dataset's lock, or raise :class:`DatasetError` naming the crawl holding it."""
    directory = directory.absolute()
    if directory in _HELD:
        return _HELD[directory]
    path = directory / LOCK_FILE
    try:
        handle = path.open("a+", encoding="utf-8")
    except OSError as exc:
        raise DatasetError(f"cannot open {path}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read_holder(handle)
        handle.close()
        raise DatasetError(
            f"{directory} is being written by another crawl: {holder_line(holder)}; "
            "wait for it to finish or choose another DATASET_DIR"
        ) from None
    previous = _read_holder(handle)
    if previous and previous.get("pid") != os.getpid():
        logger.warning(
            "Dataset %s: the crawl that held it ended without releasing it (%s); taking it over",
            directory,
            holder_line(previous),
        )
    holder = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": f"{datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}",
        "command": command_line()[:300],
    }
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps(holder) + "\n")
    handle.flush()
    lock = DatasetLock(directory, handle, holder)
    _HELD[directory] = lock
    return lock


def held(directory: Path) -> DatasetLock | None:
    """The lock this process holds on ``directory``, if any."""
    return _HELD.get(directory.absolute())
