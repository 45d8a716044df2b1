"""Distributed crawling on a real redis-server: shared queue, seen-set and item dedupe."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import redis
from scrapy import Request, Spider
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from tests.crawl_helpers import CrawlRun, run_crawl
from tests.services import ROOT, RedisServer, free_port, wait_until
from topics_crawler.items import Story
from topics_crawler.pipelines.dedupe import DedupePipeline
from topics_crawler.scheduling.fingerprint import (
    CANONICAL_URL_META,
    MIRROR_URL_META,
    CanonicalUrlFingerprinter,
)
from topics_crawler.site.content import default_site
from topics_crawler.site.scale import scale_page_count, scale_tag_slugs, with_scale_tags
from topics_crawler.site.server import SiteServer

SCALE_TAGS = 25  # 25 tag pages, 500 stories, 63 authors: 588 pages
FAST_CLOSE = {"DISTRIBUTED_IDLE_CLOSE": 1}


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis") as server:
        yield server


def redis_settings(server: RedisServer, **extra: Any) -> Settings:
    return Settings({"REDIS_URL": server.url, "REDIS_KEY_PREFIX": "test", **extra})


def crawl_keys(server: RedisServer) -> list[bytes]:
    return list(redis.Redis.from_url(server.url).scan_iter("topics_crawler:*"))


def test_redis_urls_are_logged_without_their_password() -> None:
    from topics_crawler.distributed.connection import redact

    assert redact("redis://:hunter2@redis.internal:6379/0") == "redis://***@redis.internal:6379/0"
    assert redact("redis://app:hunter2@host/1") == "redis://app:***@host/1"
    assert redact("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"


def test_without_redis_url_nothing_about_redis_is_loaded() -> None:
    code = (
        "import sys\n"
        "from scrapy.exceptions import NotConfigured\n"
        "from scrapy.utils.project import get_project_settings\n"
        "from topics_crawler.distributed.addon import DistributedAddon\n"
        "from topics_crawler.pipelines.dedupe_state import open_dedupe_state\n"
        "import topics_crawler.pipelines.dedupe, topics_crawler.spiders.topics\n"
        "settings = get_project_settings()\n"
        "try:\n"
        "    DistributedAddon().update_settings(settings)\n"
        "except NotConfigured:\n"
        "    print('not configured')\n"
        "open_dedupe_state(settings)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('redis', 'scrapy_redis')))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert result.stdout.split("\n")[:2] == ["not configured", "[]"]


@pytest.mark.integration
def test_seen_set_uses_the_crawlers_canonical_fingerprints(redis_server: RedisServer) -> None:
    from topics_crawler.distributed.scheduler import CanonicalRedisDupeFilter

    server = redis.Redis.from_url(redis_server.url)
    fingerprinter = CanonicalUrlFingerprinter()
    seen = CanonicalRedisDupeFilter(server, "test:seen", fingerprinter)
    canonical = Request("https://medium.com/@ev/a-story-0123456789ab")
    mirror_url = "http://127.0.0.1:9/@ev/a-story-0123456789ab"
    mirrored = Request(
        mirror_url, meta={CANONICAL_URL_META: canonical.url, MIRROR_URL_META: mirror_url}
    )
    assert seen.request_fingerprint(canonical) == fingerprinter.fingerprint(canonical).hex()
    assert not seen.request_seen(canonical)
    assert seen.request_seen(mirrored)  # same page through the mirror: already seen
    assert server.smembers("test:seen") == {fingerprinter.fingerprint(canonical).hex().encode()}


@pytest.mark.integration
def test_items_are_deduplicated_across_workers(redis_server: RedisServer) -> None:
    from topics_crawler.distributed.redis_dedupe_state import RedisDedupeState

    class Stats(Counter[str]):
        def inc_value(self, key: str, count: int = 1) -> None:
            self[key] += count

        def set_value(self, key: str, value: Any) -> None:
            self[key] = value

    story = Story(
        url="https://medium.com/@ev/a-story-0123456789ab",
        story_id="0123456789ab",
        title="A story",
        scraped_at="2026-11-30T12:00:00Z",
    )
    workers = [
        DedupePipeline(Stats(), RedisDedupeState.from_settings(redis_settings(redis_server)), False)  # type: ignore[arg-type]
        for _ in range(2)
    ]
    assert workers[0].process_item(story) is story
    with pytest.raises(Exception, match="Unchanged story"):
        workers[1].process_item(story)
    assert workers[1].stats["dedupe/unchanged/story"] == 1  # type: ignore[attr-defined]


@pytest.mark.integration
def test_two_workers_crawl_each_page_once(redis_server: RedisServer, tmp_path: Path) -> None:
    content = with_scale_tags(default_site(), SCALE_TAGS)
    tags = "tags=" + ",".join(scale_tag_slugs(SCALE_TAGS))
    settings = {"REDIS_URL": redis_server.url, **FAST_CLOSE}
    with SiteServer(content) as site, ThreadPoolExecutor(2) as pool:
        runs = list(
            pool.map(
                lambda n: run_crawl(
                    site.base_url, tmp_path / f"worker{n}", tags, settings=settings
                ),
                range(2),
            )
        )
        fetched = Counter(path for _, path, _ in site.requests if path != "/robots.txt")
    for run in runs:
        assert run.returncode == 0, run.log[-3000:]
        assert run.stats["finish_reason"] == "finished"
        assert "Shared queue empty and every worker idle" in run.log
    assert len(fetched) >= scale_page_count(SCALE_TAGS) >= 500
    assert [path for path, n in fetched.items() if n > 1] == []
    for path in (f"/tag/{slug}" for slug in scale_tag_slugs(SCALE_TAGS)):
        assert fetched[path] == 1
    stories = Counter(item["story_id"] for run in runs for item in run.of_type("story"))
    assert len(stories) == SCALE_TAGS * 20
    assert [key for key, n in stories.items() if n > 1] == []
    authors = Counter(item["username"] for run in runs for item in run.of_type("author"))
    assert len(authors) == -(-SCALE_TAGS * 20 // 8)
    assert [key for key, n in authors.items() if n > 1] == []
    pages = [run.stats.get("downloader/response_count", 0) for run in runs]
    assert min(pages) >= 50, f"one worker did (almost) nothing: {pages}"
    # the last worker out cleared the crawl, leaving only the marker saying it finished
    assert crawl_keys(redis_server) == [b"topics_crawler:crawl"]
    marker = redis.Redis.from_url(redis_server.url).get("topics_crawler:crawl")
    assert marker is not None
    assert marker.endswith(b" finished")


@pytest.mark.integration
def test_redis_unreachable_at_start_is_one_error_and_nothing_written(tmp_path: Path) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    run = run_crawl("http://127.0.0.1:9", tmp_path, "tags=llm", settings={"REDIS_URL": url})
    assert run.returncode == 1
    assert "Traceback" not in run.log
    logged, line = run.log.strip().splitlines()  # LOG_FILE, then stderr
    assert logged.endswith(f" ERROR: {line}")
    assert line.startswith(
        f"scrapy crawl topics: error: crawl not started: cannot reach Redis at {url}: "
    )
    assert "Connection refused" in line
    assert not (tmp_path / "items.jsonl").exists()
    assert not (tmp_path / "stats.json").exists()


@pytest.mark.integration
def test_redis_lost_mid_crawl_stops_the_worker_and_keeps_its_items(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    content = with_scale_tags(default_site(), 10)
    tags = "tags=" + ",".join(scale_tag_slugs(10))
    result: list[CrawlRun] = []
    with SiteServer(content, latency=0.05) as site:
        crawl = threading.Thread(
            target=lambda: result.append(
                run_crawl(site.base_url, tmp_path, tags, settings={"REDIS_URL": redis_server.url})
            )
        )
        crawl.start()
        wait_until(lambda: len(site.requests) >= 40, timeout=60, what="40 pages fetched")
        redis_server.stop()
        lost_at = time.monotonic()
        crawl.join(timeout=120)
        fetched_after = len(site.requests)
    assert not crawl.is_alive()
    run = result[0]
    assert time.monotonic() - lost_at < 60
    assert run.stats["finish_reason"] == "redis_lost"
    assert run.returncode == 1, "a worker that lost its queue did not finish the crawl"
    assert sum("Lost Redis at" in line for line in run.log.splitlines()) == 1
    lines = (tmp_path / "items.jsonl").read_text("utf-8").splitlines()
    assert lines
    assert len(lines) == len(run.items)
    stories = Counter(item["story_id"] for item in run.of_type("story"))
    assert stories
    assert max(stories.values()) == 1
    assert fetched_after < scale_page_count(10)  # it stopped instead of crawling on


class _Spider(Spider):
    name = "warnings_probe"

    def parse(self, response: Any) -> Iterator[Any]:
        yield from ()


@pytest.mark.integration
def test_scheduler_round_trip_raises_no_deprecation_warning(redis_server: RedisServer) -> None:
    """scrapy-redis 0.9.1's own Scheduler.open/enqueue call APIs Scrapy 2.19 deprecates
    (``Spider.log``, ``spider=`` in stats calls); pytest turns warnings into errors here."""
    from topics_crawler.distributed.scheduler import RedisScheduler

    crawler = get_crawler(_Spider, {"REDIS_URL": redis_server.url, "REDIS_KEY_PREFIX": "test"})
    crawler.spider = spider = _Spider()
    scheduler = RedisScheduler.from_crawler(crawler)
    scheduler.open(spider)
    request = Request("https://medium.com/tag/llm", callback=spider.parse)
    assert scheduler.enqueue_request(request)
    assert not scheduler.enqueue_request(request.replace())
    assert scheduler.has_pending_requests()
    popped = scheduler.next_request()
    assert popped is not None
    assert popped.url == request.url
    assert scheduler.next_request() is None
    scheduler.close("finished")
    assert crawler.stats is not None
    assert crawler.stats.get_value("scheduler/filtered/redis") == 1


def test_start_requests_lose_dont_filter_but_rescheduled_copies_keep_it() -> None:
    from scrapy.http import HtmlResponse

    from topics_crawler.distributed.start import SharedStartRequests

    crawler = get_crawler(_Spider)
    middleware = SharedStartRequests.from_crawler(crawler)
    start = Request("https://medium.com/tag/llm", dont_filter=True)
    shared = middleware.get_processed_request(start, None)
    assert shared is not None
    assert not shared.dont_filter
    response = HtmlResponse(start.url, body=b"<html></html>", request=start)
    retry = Request("https://medium.com/tag/llm", dont_filter=True)
    assert middleware.get_processed_request(retry, response) is retry
    assert crawler.stats is not None
    assert crawler.stats.get_value("distributed/start_requests_shared") == 1


def test_a_restarted_worker_cuts_its_feed_back_to_its_last_checkpoint(tmp_path: Path) -> None:
    from topics_crawler.distributed.local_state import (
        cut_feeds_back,
        forget_feed_sizes,
        record_feed_sizes,
    )

    feed, other = tmp_path / "items.jsonl", tmp_path / "other.jsonl"
    feed.write_text('{"a": 1}\n{"b": 2}\n', "utf-8")
    other.write_text('{"c": 3}\n', "utf-8")
    state = tmp_path / "state"
    record_feed_sizes(state, {feed: len('{"a": 1}\n')})
    with feed.open("a", encoding="utf-8") as out:
        out.write('{"half":')  # killed mid-line, after the checkpoint
    assert cut_feeds_back(state, [feed, other]) == len('{"b": 2}\n{"half":')
    assert feed.read_text("utf-8") == '{"a": 1}\n'
    assert other.read_text("utf-8") == '{"c": 3}\n'  # no checkpoint recorded: untouched
    forget_feed_sizes(state, [feed])
    feed.write_text("x" * 100, "utf-8")
    assert cut_feeds_back(state, [feed]) == 0


@pytest.mark.integration
def test_overwriting_a_feed_that_holds_an_unfinished_crawl_is_refused(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    from topics_crawler.distributed.addon import DistributedAddon
    from topics_crawler.distributed.local_state import record_feed_sizes, state_dir
    from topics_crawler.errors import CrawlNotStarted

    feed = tmp_path / "worker.jsonl"
    settings = Settings(
        {
            "REDIS_URL": redis_server.url,
            "DISTRIBUTED_STATE_DIR": str(tmp_path / "state"),
            "FEEDS": {str(feed): {"format": "jsonl", "overwrite": True}},
        }
    )
    DistributedAddon.preflight(settings)  # nothing recorded yet: fine
    feed.write_text('{"item_type": "story"}\n', "utf-8")
    record_feed_sizes(state_dir(settings), {feed.absolute(): feed.stat().st_size})
    with pytest.raises(CrawlNotStarted, match="use -o \\(append\\) to continue the crawl"):
        DistributedAddon.preflight(settings)
    settings.set("FEEDS", {str(feed): {"format": "jsonl"}})  # -o: appends, fine
    DistributedAddon.preflight(settings)
