"""The dataset's lock: a crawl that ended well leaves no holder behind, so the next crawl does
not warn about a crawl that "ended without releasing it"; a killed one does."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from topics_crawler.dataset import lock

STALE = "ended without releasing it"


def test_a_released_lock_names_no_holder(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    held = lock.acquire(tmp_path)
    assert json.loads((tmp_path / lock.LOCK_FILE).read_text("utf-8"))["pid"] > 0
    held.release()
    assert (tmp_path / lock.LOCK_FILE).read_text("utf-8") == ""
    with caplog.at_level(logging.WARNING):
        lock.acquire(tmp_path).release()
    assert STALE not in caplog.text


def test_a_killed_holder_is_named(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    killed = {"pid": 1, "host": "vm", "since": "2026-12-02T12:00:00Z", "command": "scrapy crawl"}
    (tmp_path / lock.LOCK_FILE).write_text(json.dumps(killed) + "\n", "utf-8")
    with caplog.at_level(logging.WARNING):
        lock.acquire(tmp_path).release()
    assert f"{STALE} (pid 1 on vm since 2026-12-02T12:00:00Z (scrapy crawl))" in caplog.text
