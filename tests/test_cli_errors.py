"""Every bad command-line argument: one clear error line on stderr, exit status 2, nothing else.

One case per argument of ``scrapy crawl topics`` (``-a`` arguments, the spider
name, Scrapy's own ``-a``/``-s``/``-o`` syntax) and of ``python -m
topics_crawler extract`` / ``report``. Strict: stdout is empty and stderr is the
error line alone — no traceback, no Scrapy start-up banner, no usage block.

The commands run in this process (:func:`tests.in_process.python_m`); the first case of
each command (``SMOKE``) runs as a user runs it, in a new process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.in_process import python_m

CRAWL = ("scrapy", "crawl")
TOPICS = ("scrapy", "crawl", "topics")
CLI = ("topics_crawler",)


#: One case per command run in a new process: the command line, as a user types it.
SMOKE = {(*TOPICS, "-a", "tags=c++"), (*CLI, "extract"), (*CLI, "report")}


def one_error_line(module_and_args: tuple[str, ...]) -> str:
    """Run ``python -m <module> <args>``; check the strict error contract; its one line."""
    process = python_m(*module_and_args, new_process=module_and_args in SMOKE)
    assert process.returncode == 2, process.stderr
    assert process.stdout == ""
    lines = process.stderr.splitlines()
    assert len(lines) == 1, process.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            ("-a", "tags=c++"),
            "scrapy crawl topics: error: tags: 'c++' is not a tag slug",
        ),
        (
            ("-a", "start_urls=https://example.com/tag/ai"),
            "scrapy crawl topics: error: start_urls: 'https://example.com/tag/ai' is not a "
            "Medium tag page URL",
        ),
        (
            ("-a", "tags=ai", "-a", "max_stories=ten"),
            "scrapy crawl topics: error: max_stories: 'ten' is not a whole number",
        ),
        (
            ("-a", "tags=ai", "-a", "follow=comments"),
            "scrapy crawl topics: error: follow: unknown value(s) comments",
        ),
        (
            ("-a", "tags=ai", "-a", "history=oldest"),
            "scrapy crawl topics: error: history: unknown value 'oldest'",
        ),
        (
            ("-a", "tags=ai", "-a", "history=newest", "-a", "since=June"),
            "scrapy crawl topics: error: since: 'June' is not a month or a day as YYYY-MM",
        ),
        (
            ("-a", "tags=ai", "-a", "since=2024-06"),
            "scrapy crawl topics: error: since: only applies with -a history=",
        ),
        ((), "scrapy crawl topics: error: give at least one tag"),
        (
            ("-a", "tags=ai", "-a", "max_storys=2"),
            "scrapy crawl topics: error: unknown argument max_storys: did you mean max_stories?",
        ),
        (
            ("-a", "tags=Machine Learning"),
            "scrapy crawl topics: error: tags: 'Machine Learning' has a space, a tag slug has "
            "none: did you mean machine-learning?",
        ),
        (("-a", "tags"), "scrapy crawl: error: Invalid -a value, use -a NAME=VALUE"),
        (("-a", "tags=ai", "-s", "RETRY_TIMES"), "scrapy crawl: error: Invalid -s value"),
        (
            ("-a", "tags=ai", "-o", "a.jsonl", "-O", "b.jsonl"),
            "scrapy crawl: error: Please use only one of -o/--output and -O/--overwrite-output",
        ),
        (("other",), "scrapy crawl: error: name one spider"),
    ],
)
def test_scrapy_crawl_topics_argument(arguments: tuple[str, ...], expected: str) -> None:
    assert one_error_line((*TOPICS, *arguments)).startswith(expected)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (("nospider",), "scrapy crawl nospider: error: no spider named 'nospider' (available: "),
        ((), "scrapy crawl: error: name one spider"),
    ],
)
def test_scrapy_crawl_spider_name(arguments: tuple[str, ...], expected: str) -> None:
    assert one_error_line((*CRAWL, *arguments)).startswith(expected)


@pytest.fixture
def page(tmp_path: Path) -> Path:
    path = tmp_path / "page.html"
    path.write_bytes(b"\x00\xff\xfe not a Medium page at all")
    return path


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ((), "python -m topics_crawler: error: the following arguments are required: command"),
        (("extract",), "python -m topics_crawler extract: error: the following arguments are"),
        (("extract", "--url", "https://medium.com/@a"), "required: page_file"),
        (("extract", "{page}", "--url", ""), "error: --url '' is not an http(s) URL"),
        (("extract", "{page}", "--url"), "error: argument --url: expected one argument"),
        (("extract", "{page}", "--url", "https://medium.com/@a", "--links=yes"), "--links"),
    ],
)
def test_extract_argument(page: Path, arguments: tuple[str, ...], expected: str) -> None:
    args = tuple(a.replace("{page}", str(page)) for a in arguments)
    assert expected.replace("{page}", str(page)) in one_error_line((*CLI, *args))


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (("report",), "the following arguments are required: dataset_dir"),
        (("report", "{file}"), "error: {file}: no such directory"),
        (("report", "{tmp}", "--format"), "error: argument --format: expected one argument"),
        (("report", "{tmp}", "--out"), "error: argument --out: expected one argument"),
        (("report", "{tmp}", "--pages", "3"), "error: unrecognized arguments: --pages 3"),
    ],
)
def test_report_argument(tmp_path: Path, arguments: tuple[str, ...], expected: str) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    places = {"{file}": str(afile), "{tmp}": str(tmp_path)}

    def filled(text: str) -> str:
        for placeholder, value in places.items():
            text = text.replace(placeholder, value)
        return text

    line = one_error_line((*CLI, *(filled(a) for a in arguments)))
    assert line.startswith("python -m topics_crawler")
    assert filled(expected) in line


def test_a_crawl_that_cannot_start_says_why_in_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    process = python_m(*TOPICS, "-a", "tags=ai", "-s", f"DATASET_DIR={blocker / 'dataset'}")
    assert process.returncode == 1
    assert process.stdout == ""
    (line,) = process.stderr.strip().splitlines()
    assert line == (
        f"scrapy crawl topics: error: crawl not started: DATASET_DIR {blocker / 'dataset'} "
        "is not writable: Not a directory"
    )
