"""Shared pytest fixtures (the real captures folder, a frozen clock, the session's local site)
and the run's last line about skipped capture tests.

The project's Twisted reactor (asyncio) is installed when pytest starts, before any test
imports ``twisted.internet.reactor``: in-process crawls (:mod:`tests.in_process`) run
on it, in a thread, and a reactor cannot be replaced once installed."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.fixture_cases import real_pages_dir
from tests.reactor_thread import install_reactor, stop_reactor
from topics_crawler.site.seed import default_site
from topics_crawler.site.server import SiteServer, SiteView

#: The frozen "now" of every parser test (cards say "1d ago" relative to it).
FROZEN_NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def pytest_configure(config: pytest.Config) -> None:
    install_reactor()


def pytest_unconfigure(config: pytest.Config) -> None:
    stop_reactor()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that read the captures through the ``real_pages`` fixture are ``real_pages``
    tests too: CI's capture-less pass (``-m real_pages``) runs exactly those."""
    for item in items:
        if "real_pages" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.real_pages)


@pytest.fixture(scope="session")
def session_site() -> Iterator[SiteServer]:
    """The default local site (:func:`topics_crawler.site.seed.default_site`), served once for the
    whole session (per xdist worker). Use it through :func:`site` (one test) or its
    ``view()`` (a module-scoped crawl); tests that change the content, inject faults or
    rate limits start a :class:`SiteServer` of their own."""
    with SiteServer(default_site()) as server:
        yield server


@pytest.fixture
def site(session_site: SiteServer) -> Iterator[SiteView]:
    """The session's default site with this test's requests alone in its log. A test that
    changes the shared content fails (it would change what later tests see)."""
    yield session_site.view()
    if session_site.content != default_site():
        session_site.content = default_site()
        pytest.fail("a test changed the shared site's content: give it a SiteServer of its own")


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
