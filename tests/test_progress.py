"""Progress a person can watch: the line's fields, its timing (an in-process crawl), the live
line on a terminal (a crawl process on a pseudo-terminal)."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy.settings import Settings

from tests.in_process import scrapy_crawl
from topics_crawler.extensions.progress import (
    PageRate,
    ProgressConfig,
    format_duration,
    history_progress,
    history_size,
    progress_line,
)
from topics_crawler.site.content import default_site
from topics_crawler.site.server import SiteServer

ROOT = Path(__file__).resolve().parent.parent
TAG = "distributed-training"
CONTENT = default_site().with_archive(TAG, 300, seed=3)


def project_settings(**values: object) -> Settings:
    settings = Settings()
    settings.setmodule("topics_crawler.settings")
    settings.setdict(values, priority="cmdline")
    return settings


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_first_log_line_comes_after_ten_seconds_then_every_minute() -> None:
    config = ProgressConfig.from_settings(project_settings(), io.StringIO())
    assert (config.first_log, config.interval, config.live) == (10.0, 60.0, False)
    assert config.tick == 10.0


def test_a_terminal_gets_the_live_line_unless_switched_off() -> None:
    assert ProgressConfig.from_settings(project_settings(), _Terminal()).live
    assert ProgressConfig.from_settings(project_settings(), _Terminal()).tick == 1.0
    off = project_settings(PROGRESS_LIVE="off")
    assert not ProgressConfig.from_settings(off, _Terminal()).live
    on = project_settings(PROGRESS_LIVE="on")
    assert ProgressConfig.from_settings(on, io.StringIO()).live
    with pytest.raises(ValueError, match="PROGRESS_LIVE"):
        ProgressConfig.from_settings(project_settings(PROGRESS_LIVE="sometimes"), io.StringIO())


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "0s"), (42.4, "42s"), (250, "4m10s"), (3700, "1h01m")]
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


def test_history_share_and_eta_from_the_known_total() -> None:
    stats = {"history/expected_stories": 1000, "history/expected_tags": 2, "history/stories": 250}
    assert history_progress(stats, 60.0) == "history 25% of 1,000 stories, ETA 3m00s"
    assert history_progress({**stats, "history/stories": 1000}, 60.0) == (
        "history 100% of 1,000 stories"
    )
    ended = {**stats, "history/stories": 640, "history/done": 1, "history/fallback": 1}
    assert history_progress(ended, 60.0) == "history done, 640 stories"
    assert history_progress({"history/stories": 250}, 60.0) is None  # size unknown


def test_a_tags_ended_listing_replaces_what_its_page_claimed() -> None:
    """The tag page of ``a`` claims 4,870 stories; its listing ended with 3,008: from then on
    the history's size counts 3,008 for it (and ``b``'s claim until its listing ends)."""
    claimed = {"history/claimed/a": 4870, "history/claimed/b": 1000, "history/expected_tags": 2}
    listing = {**claimed, "history/expected_stories": 5870, "history/stories": 3008}
    assert history_size(listing) == 5870
    assert history_progress(listing, 60.0) == "history 51% of 5,870 stories, ETA 57s"
    ended = {**listing, "history/listed/a": 3008, "history/done": 1}
    assert history_size(ended) == 4008
    assert history_progress(ended, 60.0) == "history 75% of 4,008 stories, ETA 20s"
    listed_first = {"history/listed/a": 3008, "history/claimed/b": 1000}  # a's page came later
    assert history_size(listed_first) == 4008
    both = {**ended, "history/listed/b": 990, "history/done": 2, "history/stories": 3998}
    assert history_progress(both, 60.0) == "history done, 3,998 stories"


def test_the_history_part_names_the_listing_it_comes_from() -> None:
    stats = {"history/expected_stories": 1000, "history/expected_tags": 1, "history/stories": 250}
    graphql = {**stats, "history/pages": 13}
    assert history_progress(graphql, 60.0) == "history 25% of 1,000 stories via GraphQL, ETA 3m00s"
    switched = {**graphql, "day_archive/walks": 1}
    assert history_progress(switched, 60.0) == (
        "history 25% of 1,000 stories via GraphQL and the day archive, ETA 3m00s"
    )
    archive = {**stats, "day_archive/walks": 1, "history/done": 1}
    assert history_progress(archive, 60.0) == "history done, 250 stories via the day archive"


def test_the_line_shows_pages_rate_items_errors_waiting_and_history() -> None:
    stats = {
        "response_received_count": 412,
        "item_scraped_count/story": 380,
        "parse/errors/story": 1,
        "downloader/exception_count": 2,
        "history/expected_stories": 1870,
        "history/stories": 700,
    }
    line = progress_line(stats, 96.4, 37, 100.0)
    assert line == (
        "Progress: 412 pages (96/min), items story=380 author=0 publication=0 tag_page=0, "
        "errors parse=1 download=2, 37 requests waiting, history 37% of 1,870 stories, ETA 2m47s"
    )


def test_page_rate_over_a_sliding_window() -> None:
    rate = PageRate(window=10.0)
    assert rate.add(0.0, 0) == 0.0
    assert rate.add(5.0, 10) == pytest.approx(120.0)
    rate.add(20.0, 10)
    assert rate.add(30.0, 10) == 0.0  # the burst left the window


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    with SiteServer(CONTENT, latency=0.01) as server:
        yield server


def read_until_exit(process: subprocess.Popen[bytes], master: int, timeout: float) -> bytes:
    output, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                output += os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
        elif process.poll() is not None:
            break
    process.wait(timeout=10)
    return output


@pytest.mark.integration
def test_a_history_crawl_on_a_terminal_draws_a_live_line(site: SiteServer, tmp_path: Path) -> None:
    master, slave = pty.openpty()
    command = [
        sys.executable, "-m", "scrapy", "crawl", "topics", "-a", f"tags={TAG}",
        "-a", "history=newest", "-a", "follow=none", "-O", str(tmp_path / "out.jsonl"),
        "-s", "RENDER_MODE=never", "-s", "PROGRESS_REFRESH=0.2", "-s", "PROGRESS_FIRST_LOG=1",
        "-s", "HISTORY_PAGE_SIZE=10", "-s", "AUTOTHROTTLE_ENABLED=False",
        "-s", "DOWNLOAD_DELAY=0.05", "-s", "LOG_LEVEL=INFO",
    ]  # fmt: skip
    env = {**os.environ, "MEDIUM_BASE_URL": site.base_url, "COLUMNS": "400"}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    try:
        output = read_until_exit(process, master, timeout=180).decode("utf-8", "replace")
    finally:
        os.close(master)
    assert process.returncode == 0, output[-3000:]
    redraws = [chunk for chunk in output.split("\r") if chunk.startswith("Progress: ")]
    assert len(redraws) >= 3, output[-3000:]
    assert any("history" in r and "% of " in r and "ETA" in r for r in redraws), redraws[-3:]
    for chunk in output.split("\r"):  # log records come on a cleared line
        if "[topics_crawler" in chunk or "[scrapy" in chunk:
            assert chunk.removeprefix("\x1b[K").lstrip("\n").startswith("20"), chunk


@pytest.mark.integration
def test_in_a_log_file_the_first_line_comes_early_and_the_last_at_close(
    site: SiteServer, tmp_path: Path
) -> None:
    log = tmp_path / "crawl.log"
    process = scrapy_crawl(
        "topics", "-a", f"tags={TAG}",
        "-a", "history=newest", "-a", "follow=none", "-O", str(tmp_path / "out.jsonl"),
        "-s", "RENDER_MODE=never", "-s", "PROGRESS_FIRST_LOG=1", "-s", "LOGSTATS_INTERVAL=600",
        # DOWNLOAD_DELAY caps the rate controller's ceiling: ~33 requests at 0.1 s last
        # past the first line's 1 s.
        "-s", "HISTORY_PAGE_SIZE=10", "-s", "DOWNLOAD_DELAY=0.1",
        "-s", "AUTOTHROTTLE_ENABLED=False", "-s", f"LOG_FILE={log}",
        "-s", f"MEDIUM_BASE_URL={site.base_url}", timeout=180,
    )  # fmt: skip
    text = log.read_text("utf-8")
    assert process.returncode == 0, text[-3000:]
    lines = [line for line in text.splitlines() if "Progress: " in line]
    assert len(lines) == 2, lines  # after 1 s, and at close (the interval is 10 minutes)
    assert f"% of {CONTENT.tags[TAG].story_count:,} stories" in lines[0]
    assert "history done, " in lines[-1]
    assert "\r" not in text
    assert "\x1b[" not in text
