"""``topics-crawler crawl | scrapy | site | demo``: Scrapy's command line and the local site
from any folder, with the project's settings and no environment variable.

Run in this process from a folder without ``scrapy.cfg``; tests/test_installed.py runs the
same commands from an installed wheel.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from topics_crawler.cli import main
from topics_crawler.cli.scrapy_command import exit_status, names_a_spider
from topics_crawler.commands.refusal import INVOKED_AS


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder outside the project, and no ``SCRAPY_SETTINGS_MODULE`` in the environment."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCRAPY_SETTINGS_MODULE", raising=False)
    return tmp_path


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ([], False),
        (["-a", "tags=ai", "-O", "ai.jsonl"], False),
        (["-s", "LOG_LEVEL=INFO", "-o", "-:jsonlines"], False),
        (["topics", "-a", "tags=ai"], True),
        (["-a", "tags=ai", "topics"], True),
        (["-s", "X=1", "--logfile", "log.txt", "topics"], True),
    ],
)
def test_the_spider_name_is_found_among_the_crawl_options(args: list[str], named: bool) -> None:
    assert names_a_spider(args) is named


def test_exit_status_is_what_sys_exit_gives() -> None:
    assert [exit_status(code) for code in (None, 0, 2, "message")] == [0, 0, 2, 1]


def test_scrapy_settings_reads_the_project_settings_from_anywhere(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scrapy", "settings", "--get", "RATE_START"]) == 0
    assert capsys.readouterr().out.strip() == "4"  # README "Settings that matter"
    assert main(["scrapy", "settings", "--get", "BOT_NAME"]) == 0
    assert capsys.readouterr().out.strip() == "topics_crawler"


@pytest.mark.parametrize(
    ("run_as", "named"),
    [
        (["/usr/local/bin/topics-crawler", "crawl"], "topics-crawler crawl"),
        (["/usr/local/bin/topics-crawler", "crawl", "topics"], "topics-crawler crawl"),
        (["/src/topics_crawler/__main__.py", "crawl"], "python -m topics_crawler crawl"),
    ],
)
def test_crawl_refuses_a_bad_argument_like_scrapy_crawl_naming_itself(
    elsewhere: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    run_as: list[str],
    named: str,
) -> None:
    monkeypatch.setattr(sys, "argv", [*run_as, "-a", "tags=ai", "-a", "max_stories=ten"])
    assert main() == 2
    output = capsys.readouterr()
    assert output.out == ""
    assert output.err.splitlines() == [f"{named}: error: max_stories: 'ten' is not a whole number"]
    assert list(elsewhere.iterdir()) == []
    assert INVOKED_AS.get() is None  # a scrapy crawl run next in this process says scrapy crawl


def test_the_installed_crawl_command_names_itself_in_its_refusal(elsewhere: Path) -> None:
    command = Path(sys.executable).with_name("topics-crawler")  # [project.scripts]
    process = subprocess.run(
        [str(command), "crawl", "-a", "nosuch=1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert process.returncode == 2, process.stderr
    assert process.stdout == ""
    lines = process.stderr.splitlines()
    assert len(lines) == 1, process.stderr
    assert lines[0].startswith("topics-crawler crawl: error: unknown argument nosuch (")
    assert list(elsewhere.iterdir()) == []


def test_the_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["-h"])
    assert exited.value.code == 0
    listed = capsys.readouterr().out
    for name in ("crawl", "scrapy", "site", "demo", "extract", "report", "markdown"):
        assert f"    {name} " in listed, name


def test_site_and_demo_name_themselves_in_their_help(capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("site", "demo"):
        with pytest.raises(SystemExit):
            main([name, "--help"])
        assert f"usage: python -m topics_crawler {name} " in capsys.readouterr().out
