"""The end of a run (issue 22): ``scrapy crawl`` ends with a few lines on stderr whatever the
log settings — what it found, where it wrote it, the verdict and its exit status, how to
resume an interrupted run — and Scrapy's stats dump is at DEBUG only.

The lines themselves from stats (:func:`closing_lines` is pure); a crawl in this process
with and without ``LOG_FILE``; Ctrl-C on a real process (a signal needs one)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import Settings

from tests.crawl_helpers import ROOT, crawl_arguments, crawl_env, read_run
from tests.in_process import scrapy_crawl
from topics_crawler.extensions.closing import closing_lines
from topics_crawler.site.content import default_site
from topics_crawler.site.server import SiteServer, SiteView

TAG = "distributed-training"
DONE = {"start_time": 1, "finish_reason": "finished", "item_scraped_count": 14}


def lines(stats: dict[str, Any], **settings: Any) -> list[str]:
    return closing_lines({**DONE, **stats}, Settings(settings))


def test_a_run_that_did_its_job() -> None:
    stats = {"dedupe/new/story": 12, "dedupe/changed/story": 2, "dedupe/new/author": 9}
    assert lines(stats, FEEDS={"out.jsonl": {}}, LOG_FILE="crawl.log") == [
        "Run summary: story 12 new, 2 changed; author 9 new",
        "  data in out.jsonl",
        "  log in crawl.log",
        "  exit 0 (done)",
    ]


def test_an_interrupted_run_says_so_before_what_its_checks_found() -> None:
    """Ctrl-C before any story: the health check's complaint is not the verdict."""
    stats = {
        "finish_reason": "shutdown",
        "health/failed/min_items/story": "0 story items (0 exported, 0 unchanged), minimum 1",
    }
    assert "  exit 1 (interrupted)" in lines(stats, JOBDIR="job")


def test_what_was_written_where() -> None:
    assert lines({}, DATASET_DIR="data/llm")[1] == "  data in data/llm"
    quiet = {"item_scraped_count": 0, "dedupe/unchanged/story": 40}
    assert lines(quiet, DATASET_DIR="data/llm")[1] == "  data in data/llm: nothing new or changed"
    nothing_new = {"item_scraped_count": 0, "dedupe/unchanged/story": 40}
    assert lines(nothing_new, FEEDS={"out.jsonl": {}})[1] == (
        "  nothing new written: out.jsonl is as it was"
    )
    assert lines({})[1] == (
        "  no output: the items went nowhere; keep them next time with -o items.jsonl "
        "(-O to replace the file) or -s DATASET_DIR=data/<name>"
    )
    failures = {"failures/file": "out.failures.jsonl", "failures/listed": 3}
    assert "  failures listed in out.failures.jsonl (3)" in lines(failures)
    assert "  log in c.log, stats in s.json" in lines({}, LOG_FILE="c.log", STATS_FILE="s.json")


@pytest.mark.parametrize(
    ("stats", "verdict"),
    [
        (
            {"write_failed": 1, "stopped/line": "Cannot write out.jsonl: No space left on device"},
            "exit 1 (failed): Cannot write out.jsonl: No space left on device",
        ),
        (
            {"refused_by_site": 1, "stopped/line": "medium.com refused the crawl: …"},
            "exit 3 (refused by the site): medium.com refused the crawl: …",
        ),
        ({"tags/not_found": ["a", "b"]}, "exit 1 (failed): tags not found: a, b"),
        (
            {
                "health/failed": True,
                "health/failed/min_items/story": "0 story items (…), minimum 1",
                "health/failed/max_failure_ratio": "1 of 1 pages failed (100.0%), maximum 25.0%",
            },
            "exit 1 (failed): health check min_items/story failed: 0 story items (…), "
            "minimum 1 (and 1 more in the log)",
        ),
        (
            {"health/failed": True, "health/failed/coverage/tag/stories": "tag pages: 3 of 3 …"},
            "exit 1 (failed): tag pages: 3 of 3 …",
        ),
        ({"finish_reason": "redis_lost"}, "exit 1 (failed): stopped early (redis_lost)"),
        ({"finish_reason": "shutdown"}, "exit 1 (interrupted)"),
    ],
)
def test_the_verdict_says_why(stats: dict[str, Any], verdict: str) -> None:
    assert f"  {verdict}" in lines(stats)


@pytest.mark.parametrize(
    ("settings", "hint"),
    [
        ({"JOBDIR": "crawls/llm"}, "to resume: run the same command; it goes on where this "
         "one stopped (crawls/llm)"),
        ({"DATASET_DIR": "data/llm"}, "to resume: run the same command; what this run found "
         "is in data/llm, the rest is fetched (add -s JOBDIR=crawls/<name> to go on where it "
         "stopped)"),
        ({"REDIS_URL": "redis://r:6379/0"}, "to resume: run the same command; the crawl's "
         "queue is in Redis"),
        ({}, "to resume next time: add -s JOBDIR=crawls/<name> (with -o to append) or "
         "-s DATASET_DIR=data/<name>; this run starts over if run again"),
    ],
)  # fmt: skip
def test_an_interrupted_run_says_how_to_resume(settings: dict[str, Any], hint: str) -> None:
    assert lines({"finish_reason": "shutdown"}, **settings)[-1] == f"  {hint}"
    assert not any("resume" in line for line in lines({}, **settings))


# --- what the terminal shows -----------------------------------------------------------


def crawl(site: SiteView | SiteServer, out: Path, *settings: str, log_file: bool = True) -> Any:
    """``scrapy crawl`` in this process; its (returncode, stderr, run)."""
    arguments = crawl_arguments(
        site.base_url, out, f"tags={TAG}", "follow=stories", "max_stories=3",
        settings=dict(setting.split("=", 1) for setting in settings),
    )  # fmt: skip
    if not log_file:
        at = arguments.index(f"LOG_FILE={out / 'crawl.log'}")
        del arguments[at - 1 : at + 1]
    out.mkdir(parents=True, exist_ok=True)
    completed = scrapy_crawl(*arguments[1:])
    return completed.returncode, completed.stderr, read_run(completed.returncode, out)


@pytest.mark.integration
def test_with_a_log_file_the_terminal_shows_the_summary_alone(
    site: SiteView, tmp_path: Path
) -> None:
    returncode, stderr, run = crawl(site, tmp_path)
    assert returncode == 0, run.log[-3000:]
    stories = len(run.of_type("story"))
    assert stories == 3
    assert stderr.splitlines() == [
        f"Run summary: story {stories} new; tag_page 1 new; tag_edge 8 new; "
        f"tag_story {len(run.of_type('tag_story'))} new",
        f"  data in {tmp_path / 'items.jsonl'}",
        f"  log in {tmp_path / 'crawl.log'}, stats in {tmp_path / 'stats.json'}",
        "  exit 0 (done)",
    ]
    assert "Dumping Scrapy stats" not in run.log  # at DEBUG only; the stats are in STATS_FILE
    assert run.stats["finish_reason"] == "finished"


@pytest.mark.integration
def test_without_a_log_file_the_summary_comes_after_the_log(site: SiteView, tmp_path: Path) -> None:
    returncode, stderr, _run = crawl(site, tmp_path, log_file=False)
    assert returncode == 0, stderr[-3000:]
    tail = stderr.splitlines()[-4:]
    assert tail[0].startswith("Run summary: story 3 new;")
    assert tail[-1] == "  exit 0 (done)"
    assert "Dumping Scrapy stats" not in stderr
    assert "INFO: Spider closed (finished)" in stderr


@pytest.mark.integration
def test_a_dump_of_the_stats_at_debug(site: SiteView, tmp_path: Path) -> None:
    returncode, _stderr, run = crawl(site, tmp_path, "LOG_LEVEL=DEBUG")
    assert returncode == 0
    assert "DEBUG: Dumping Scrapy stats:\n{" in run.log


@pytest.mark.integration
def test_a_crawl_with_no_output_is_warned_at_start(site: SiteView, tmp_path: Path) -> None:
    arguments = crawl_arguments(site.base_url, tmp_path, f"tags={TAG}", "max_stories=1")
    arguments[2:4] = []  # no -O
    completed = scrapy_crawl(*arguments[1:])
    assert completed.returncode == 0, completed.stderr
    warning = (
        "No output configured: this crawl's items go nowhere; keep them with -o items.jsonl "
        "(-O to replace the file) or -s DATASET_DIR=data/<name>"
    )
    stderr = completed.stderr.splitlines()
    assert stderr[0] == f"scrapy crawl topics: warning: {warning}"  # before anything else
    log = (tmp_path / "crawl.log").read_text("utf-8").splitlines()
    opened = next(n for n, line in enumerate(log) if "Spider opened" in line)
    assert log[opened + 1].endswith(f"WARNING: {warning}")  # as the crawl starts
    assert stderr[2].startswith("  no output: the items went nowhere")
    assert not list(tmp_path.glob("*.jsonl"))


@pytest.mark.integration
def test_ctrl_c_ends_with_how_to_resume_and_the_same_command_does(tmp_path: Path) -> None:
    with SiteServer(default_site().with_archive(TAG, 200, seed=0), latency=0.05) as site:
        arguments = crawl_arguments(
            site.base_url, tmp_path, f"tags={TAG}", "history=newest", "follow=stories",
            settings={"JOBDIR": tmp_path / "job"}, append=True,
        )  # fmt: skip
        command = [sys.executable, "-m", "scrapy", *arguments]
        process = subprocess.Popen(
            command, cwd=ROOT, env=crawl_env(), stderr=subprocess.PIPE, text=True
        )
        items = tmp_path / "items.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(read_lines(items)) < 20:
            time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 1, stderr
        tail = stderr.splitlines()[-2:]
        assert tail == [
            "  exit 1 (interrupted)",
            "  to resume: run the same command; it goes on where this one stopped "
            f"({tmp_path / 'job'})",
        ]
        first = len(read_lines(items))
        again = subprocess.run(
            command, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=300,
            check=False,
        )  # fmt: skip
        assert again.returncode == 0, again.stderr
        assert again.stderr.splitlines()[-1] == "  exit 0 (done)"
    rows = [json.loads(line) for line in read_lines(items)]
    stories = [row["story_id"] for row in rows if row["item_type"] == "story"]
    assert len(rows) > first
    assert len(stories) == len(set(stories)) >= 200  # each story once, none lost


def read_lines(path: Path) -> list[str]:
    return path.read_text("utf-8").splitlines() if path.exists() else []
