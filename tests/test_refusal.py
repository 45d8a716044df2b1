"""A crawl that does not start: its one line on stderr and in ``LOG_FILE`` (a Scrapyd job's
log), its braces readable in Scrapyd's console. tests/test_scrapyd.py runs it in a real
Scrapyd."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from scrapy.settings import Settings

from tests.in_process import scrapy_crawl
from topics_crawler.commands.refusal import (
    INVOKED_AS,
    command_says,
    console_line,
    log_to_file,
    scrapyd_job,
)

LOG_LINE = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[topics_crawler\.commands\.crawl\] "


def test_a_refused_crawl_writes_its_line_to_the_log_file_too(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "crawl.log"
    log.parent.mkdir()
    log.write_text("earlier line\n", "utf-8")
    done = scrapy_crawl(
        "topics", "-a", "tags=ai", "-a", "max_stories=ten", "-s", f"LOG_FILE={log}", start=False
    )
    line = "scrapy crawl topics: error: max_stories: 'ten' is not a whole number"
    assert done.returncode == 2
    assert done.stderr.splitlines() == [line]
    earlier, written = log.read_text("utf-8").splitlines()
    assert earlier == "earlier line"  # appended, as Scrapy's LOG_FILE_APPEND says
    assert re.fullmatch(LOG_LINE + "ERROR: " + re.escape(line), written), written


def test_without_a_log_file_only_stderr_has_the_line(tmp_path: Path) -> None:
    done = scrapy_crawl("topics", "-a", "tags=ai", "-a", "follow=comments", start=False)
    assert done.returncode == 2
    assert done.stderr.startswith("scrapy crawl topics: error: follow:")


def test_under_scrapyd_the_console_line_doubles_its_braces() -> None:
    done = scrapy_crawl("topics", "-a", "tags={ai}", "-a", "_job=abc123", start=False)
    assert done.returncode == 2
    assert "tags: '{{ai}}' is not a tag slug" in done.stderr
    assert "'{{ai}}'".format() == "'{ai}'"  # what Scrapyd's console shows


@pytest.mark.parametrize(
    ("arguments", "job"),
    [
        ({"_job": "abc", "tags": "ai"}, "abc"),
        ({"tags": "ai"}, None),
        (["tags=ai", "_job=abc"], "abc"),
        (["tags=ai", "job=abc"], None),
    ],
)
def test_a_scrapyd_job_is_told_by_its_job_argument(
    arguments: dict[str, str] | list[str], job: str | None
) -> None:
    assert scrapyd_job(arguments) == job


def test_console_lines_change_only_under_scrapyd() -> None:
    line = 'held (scrapy crawl topics -s FEEDS={"a.jl": {"format": "jsonlines"}})'
    assert console_line(line, under_scrapyd=False) == line
    assert console_line(line, under_scrapyd=True).format() == line


def test_the_log_line_follows_the_log_settings(tmp_path: Path) -> None:
    log = tmp_path / "crawl.log"
    settings = Settings({"LOG_FILE": str(log), "LOG_FORMAT": "%(levelname)s|%(message)s"})
    log_to_file(settings, "nothing to do", logging.INFO)
    log_to_file(settings, "refused {x} 100%")
    assert log.read_text("utf-8").splitlines() == ["INFO|nothing to do", "ERROR|refused {x} 100%"]
    settings.set("LOG_LEVEL", "ERROR")
    log_to_file(settings, "hidden at LOG_LEVEL=ERROR", logging.INFO)
    settings.set("LOG_FILE_APPEND", False)
    log_to_file(settings, "alone")
    assert log.read_text("utf-8").splitlines() == ["ERROR|alone"]
    settings.set("LOG_ENABLED", False)
    log_to_file(settings, "not written")
    assert log.read_text("utf-8").splitlines() == ["ERROR|alone"]


def test_an_unwritable_log_file_leaves_the_line_to_stderr(tmp_path: Path) -> None:
    log_to_file(Settings({"LOG_FILE": str(tmp_path / "missing" / "crawl.log")}), "x")
    log_to_file(Settings({"LOG_FILE": str(tmp_path), "LOG_LEVEL": 10}), "a folder")
    assert list(tmp_path.iterdir()) == []


def test_a_refusal_names_the_command_that_was_run() -> None:
    assert command_says("topics", "give at least one tag") == (
        "scrapy crawl topics: error: give at least one tag"
    )
    assert command_says(None, "Invalid -s value") == "scrapy crawl: error: Invalid -s value"
    assert command_says("topics", "nothing to do", None) == "scrapy crawl topics: nothing to do"
    invoked = INVOKED_AS.set("topics-crawler crawl")
    try:
        assert command_says("topics", "no output", "warning") == (
            "topics-crawler crawl: warning: no output"
        )
        assert command_says(None, "Invalid -s value") == (
            "topics-crawler crawl: error: Invalid -s value"
        )
    finally:
        INVOKED_AS.reset(invoked)
