"""The start of a run: Scrapy's start-up lists (enabled components, overridden settings)
at DEBUG, so a crawl's terminal starts with what it does; ``LOG_LEVEL=DEBUG`` shows them
word for word. A default run warns of nothing (images, off by default, are not "disabled")."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.test_closing import crawl
from topics_crawler.commands.quiet_start import STARTUP_LISTS, startup_lists_at_debug
from topics_crawler.site.server import SiteView


def test_only_the_start_up_lists_go_to_debug(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with startup_lists_at_debug():
        logging.getLogger("scrapy.middleware").info(
            "Enabled %(componentname)ss:\n%(enabledlist)s",
            {"componentname": "item pipeline", "enabledlist": "[]"},
        )
        logging.getLogger("scrapy.crawler").info(
            "Overridden settings:\n%(settings)s", {"settings": "{}"}
        )
        logging.getLogger("scrapy.middleware").warning("Disabled X: why")
        logging.getLogger("scrapy.core.engine").info("Spider opened")
    logging.getLogger("scrapy.crawler").info(
        "Overridden settings:\n%(settings)s", {"settings": "{}"}
    )
    assert [(r.name, r.levelname) for r in caplog.records] == [
        ("scrapy.middleware", "DEBUG"),
        ("scrapy.crawler", "DEBUG"),
        ("scrapy.middleware", "WARNING"),
        ("scrapy.core.engine", "INFO"),
        ("scrapy.crawler", "INFO"),  # the filter is gone with the block
    ]
    assert not any(logging.getLogger(name).filters for name in STARTUP_LISTS)


@pytest.mark.integration
def test_a_crawl_starts_with_a_few_lines(site: SiteView, tmp_path: Path) -> None:
    returncode, stderr, _run = crawl(site, tmp_path, log_file=False)
    assert returncode == 0, stderr[-3000:]
    lines = stderr.splitlines()
    opened = next(n for n, line in enumerate(lines) if "INFO: Spider opened" in line)
    start = lines[:opened]
    assert not [line for line in start if "Enabled" in line or "Overridden settings" in line]
    assert opened <= 15, "\n".join(start)  # "Scrapy started" and its versions
    assert " WARNING: " not in stderr
    assert " ERROR: " not in stderr


@pytest.mark.integration
def test_at_debug_the_start_up_lists_are_all_there(site: SiteView, tmp_path: Path) -> None:
    returncode, _stderr, run = crawl(site, tmp_path, "LOG_LEVEL=DEBUG")
    assert returncode == 0
    for heading in ("Enabled extensions:", "Enabled downloader middlewares:",
                    "Enabled spider middlewares:", "Enabled item pipelines:",
                    "Overridden settings:"):  # fmt: skip
        assert f"DEBUG: {heading}\n" in run.log
