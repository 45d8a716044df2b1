"""Shared pytest fixtures (the real captures folder, a frozen clock) and the run's last line
about skipped capture tests."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.fixture_cases import real_pages_dir

#: The frozen "now" of every parser test (cards say "1d ago" relative to it).
FROZEN_NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


@pytest.fixture(scope="session")
def real_pages() -> Path:
    """Folder of the real Medium captures; skips the test when it is absent or empty (what
    a new user's clone has: CI runs the suite that way too)."""
    folder = real_pages_dir()
    if not folder.is_dir() or not any(folder.iterdir()):
        pytest.skip(
            f"real Medium captures not found at {folder} "
            "(set TOPICS_CRAWLER_PAGES to the medium-pages folder)"
        )
    return folder


@pytest.fixture
def frozen_now() -> datetime:
    return FROZEN_NOW


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> Iterator[None]:
    """One line, after pytest's own summary: how many capture tests were skipped, and how
    to run them."""
    yield
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if "real Medium captures not found" in str(report.longrepr)
    ]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} tests on real Medium captures skipped ({real_pages_dir()} is missing "
            "or empty): "
            "set TOPICS_CRAWLER_PAGES=<folder with the captures> to run them"
        )
