"""A JOBDIR crawl SIGKILLed while the scheduler's gate holds a retry, then run again.

One story page answers its first request with a 503 and ``Retry-After``: the retry
waits in the not-before gate (:mod:`topics_crawler.scheduling.not_before`) for several seconds,
and the host is paused with it. The crawl is killed in that window, once the log
shows the retry and the journal on disk holds it; the same command then finishes the
job: the held page is fetched (after its not-before time), its story is in the output
once, and the output is an uninterrupted crawl's, nothing lost or doubled.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.crawl_helpers import crawl_command, run_crawl, start_crawl, without_read_times
from tests.services import wait_until
from topics_crawler.resume.journal import JOURNAL_NAME
from topics_crawler.site.content import default_site
from topics_crawler.site.faults import Fault, FaultInjector, FaultPlan, error_page
from topics_crawler.site.routes import Response
from topics_crawler.site.scale import scale_tag_slugs, with_scale_tags
from topics_crawler.site.server import SiteServer

pytestmark = pytest.mark.integration

N_TAGS = 2  # 2 tag pages, 40 stories, 5 authors
TAGS = "tags=" + ",".join(scale_tag_slugs(N_TAGS))
HELD_SLUG = "scale-000-note-2"
RETRY_AFTER = 8  # seconds: long enough to kill the crawl while the retry waits


@dataclass
class FirstAnswerUnavailable(FaultInjector):
    """The first request of ``path`` answers 503 with ``Retry-After``; nothing else is faulted."""

    path: str = ""
    retry_after: int = RETRY_AFTER
    #: When each request of ``path`` arrived (epoch seconds).
    arrivals: list[float] = field(default_factory=list)

    def fault(self, raw_path: str, response: Response) -> Fault | None:
        if urlsplit(raw_path).path != self.path:
            return None
        self.arrivals.append(time.time())
        if len(self.arrivals) > 1:
            return None
        unavailable = error_page(503)
        unavailable.headers["Retry-After"] = str(self.retry_after)
        return Fault("503", unavailable)


@pytest.fixture
def site() -> Iterator[SiteServer]:
    content = with_scale_tags(default_site(), N_TAGS)
    with SiteServer(content, latency=0.02) as server:
        yield server


def held_story_path(site: SiteServer) -> str:
    (story,) = (s for s in site.content.stories.values() if s.slug == HELD_SLUG)
    return site.content.story_path(story)


def job_command(base_url: str, out_dir: Path) -> list[str]:
    """``scrapy crawl topics`` with a JOBDIR, appending items to ``out_dir/items.jsonl``."""
    settings: dict[str, Any] = {
        "MEDIUM_BASE_URL": base_url,
        "JOBDIR": out_dir / "job",
        "LOG_FILE": out_dir / "crawl.log",
        "LOG_LEVEL": "INFO",
        "AUTOTHROTTLE_ENABLED": False,
        "RATE_START": 0,
        "RETRY_AFTER_LONG_WAIT": 1,  # the retry's wait is logged (a warning): the kill's cue
    }
    return crawl_command(TAGS, settings=settings, output=out_dir / "items.jsonl")


def retry_logged(log: Path, path: str) -> bool:
    text = log.read_text("utf-8") if log.exists() else ""
    return any("Retry 1 of" in line and path in line for line in text.splitlines())


def retry_committed(journal: Path, path: str) -> bool:
    """The journal on disk has the page pending as its retry (with its not-before time)."""
    try:
        with sqlite3.connect(f"file:{journal}?mode=ro", uri=True) as db:
            rows = db.execute(
                "SELECT request FROM requests WHERE done = 0 AND url LIKE ?", (f"%{path}",)
            ).fetchall()
    except sqlite3.OperationalError:  # not created yet, or busy this instant
        return False
    return any(blob is not None and b"retry_not_before" in blob for (blob,) in rows)


def done_paths(journal: Path) -> set[str]:
    with sqlite3.connect(f"file:{journal}?mode=ro", uri=True) as db:
        urls = [row[0] for row in db.execute("SELECT url FROM requests WHERE done = 1")]
    return {urlsplit(url).path for url in urls}


def content_of(item: dict[str, Any]) -> str:
    return json.dumps(without_read_times(item), sort_keys=True)


def test_a_crawl_killed_while_a_retry_is_held_fetches_it_on_the_next_run(
    site: SiteServer, tmp_path: Path
) -> None:
    reference = run_crawl(site.base_url, tmp_path / "reference", TAGS)
    assert reference.returncode == 0, reference.log[-2000:]
    reference_contents = Counter(content_of(item) for item in reference.items)
    path = held_story_path(site)

    out = tmp_path / "job"
    out.mkdir()
    command = job_command(site.base_url, out)
    fault = FirstAnswerUnavailable(FaultPlan(), path=path)
    site.faults = fault
    site.clear_log()
    first = start_crawl(command)
    try:
        wait_until(lambda: retry_logged(out / "crawl.log", path), 60, "the held retry's log line")
        journal = out / "job" / JOURNAL_NAME
        wait_until(lambda: retry_committed(journal, path), 10, "the retry in the journal")
    finally:
        first.kill()  # SIGKILL: no clean shutdown, the gate's held requests die with it
    first.wait(10)
    assert first.returncode == -9
    assert time.time() < fault.arrivals[0] + RETRY_AFTER, "killed after the retry was due"
    assert site.count(path) == 1  # the 503; the retry never left the gate
    done = done_paths(journal)
    assert done, "pages were done before the kill"

    site.clear_log()
    second = start_crawl(command)
    assert second.wait(120) == 0
    log = (out / "crawl.log").read_text("utf-8")
    assert "Resuming the crawl in" in log
    fetched_after = Counter(p for _, p, status in site.requests if status == 200)
    assert fetched_after[path] == 1  # the held page, fetched by the run that resumed
    first_answer, retried = fault.arrivals
    assert retried >= first_answer + RETRY_AFTER  # not before its Retry-After

    items = [json.loads(line) for line in (out / "items.jsonl").read_text("utf-8").splitlines()]
    held = [i for i in items if i["item_type"] == "story" and f"/{HELD_SLUG}-" in i["url"]]
    assert len(held) == 1
    contents = Counter(content_of(item) for item in items)
    assert [c for c, n in contents.items() if n > 1] == [], "duplicate items in the output"
    assert contents == reference_contents, "items lost or changed"
    assert done.isdisjoint(fetched_after), "a page done before the kill was fetched again"
