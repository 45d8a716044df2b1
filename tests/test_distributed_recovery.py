"""Workers that lose nothing, on a real redis-server: a SIGKILLed worker's requests go back
to the queue, and a Redis that comes back empty stops the workers instead of a re-crawl.

Every scenario compares the union of the workers' feeds with a single-worker crawl
of the same site: the same stories and authors, each exactly once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.crawl_helpers import run_crawl
from tests.services import ROOT, RedisServer, wait_until
from topics_crawler.site.content import SiteContent, default_site
from topics_crawler.site.scale import scale_tag_slugs, with_scale_tags
from topics_crawler.site.server import SiteServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

N_TAGS = 12  # 12 tag pages, 240 stories, 30 authors
LATENCY = 0.2  # seconds per page: the crawl lasts long enough to kill a worker in it
TAGS = "tags=" + ",".join(scale_tag_slugs(N_TAGS))
FAST = {
    "DISTRIBUTED_IDLE_CLOSE": 1,
    "DISTRIBUTED_WORKER_TIMEOUT": 2,
    "DISTRIBUTED_CHECKPOINT_INTERVAL": 0.3,
    "AUTOTHROTTLE_ENABLED": False,
    "HEALTH_ENABLED": False,
}


@pytest.fixture(scope="module")
def content() -> SiteContent:
    return with_scale_tags(default_site(), N_TAGS)


@pytest.fixture(scope="module")
def single_worker(content: SiteContent, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """What one worker alone exports: entity keys by type."""
    with SiteServer(content) as site:
        run = run_crawl(site.base_url, tmp_path_factory.mktemp("single"), TAGS, settings=FAST)
    assert run.returncode == 0, run.log[-2000:]
    return entities(run.items)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis") as server:
        yield server


def entities(items: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    """``{"story": Counter(story_id), "author": Counter(username)}`` of ``items``."""
    return {
        "story": Counter(i["story_id"] for i in items if i.get("item_type") == "story"),
        "author": Counter(i["username"] for i in items if i.get("item_type") == "author"),
    }


class Worker:
    """One ``scrapy crawl`` worker process; its feed appends (``-o``) across restarts."""

    def __init__(self, folder: Path, base_url: str, redis_url: str, **settings: Any) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.items = folder / "items.jsonl"
        self.log = folder / "crawl.log"
        self.command = [sys.executable, "-m", "scrapy", "crawl", "topics", "-a", TAGS]
        self.command += ["-o", str(self.items)]
        all_settings = {
            "MEDIUM_BASE_URL": base_url,
            "REDIS_URL": redis_url,
            "DISTRIBUTED_STATE_DIR": str(folder / "state"),
            "LOG_FILE": str(self.log),
            **FAST,
            **settings,
        }
        for name, value in all_settings.items():
            self.command += ["-s", f"{name}={value}"]
        self.process: subprocess.Popen[str] | None = None

    def start(self, *extra: str) -> Worker:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("MEDIUM_BASE_URL", None)
        self.process = subprocess.Popen(
            [*self.command, *extra], cwd=ROOT, env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        return self

    def wait(self, timeout: float = 240) -> tuple[int, str]:
        assert self.process is not None
        _out, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, err

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.communicate(timeout=10)

    def exported(self) -> list[dict[str, Any]]:
        if not self.items.exists():
            return []
        return [json.loads(line) for line in self.items.read_text("utf-8").splitlines() if line]

    def log_text(self) -> str:
        return self.log.read_text("utf-8") if self.log.exists() else ""


def union(*workers: Worker) -> dict[str, Counter[str]]:
    return entities([item for worker in workers for item in worker.exported()])


@pytest.mark.parametrize(
    "victim_checkpoints",
    [
        0.3,  # the default rhythm, faster
        60.0,  # never before the kill: everything it wrote must be cut back and redone
    ],
)
def test_a_sigkilled_worker_loses_nothing_and_exports_nothing_twice(
    content: SiteContent,
    single_worker: dict,
    redis_server: RedisServer,
    tmp_path: Path,
    victim_checkpoints: float,
) -> None:
    with SiteServer(content, latency=LATENCY) as site:
        workers = [
            Worker(tmp_path / "w0", site.base_url, redis_server.url,
                   DISTRIBUTED_CHECKPOINT_INTERVAL=victim_checkpoints),
            Worker(tmp_path / "w1", site.base_url, redis_server.url),
        ]  # fmt: skip
        for worker in workers:
            worker.start()
        victim = workers[0]
        wait_until(lambda: len(victim.exported()) >= 20, timeout=120, what="20 items exported")
        victim.kill()
        exported_by_victim = len(victim.exported())
        time.sleep(0.5)
        victim.start()  # the same command again
        results = [worker.wait() for worker in workers]
    logs = "".join(worker.log_text() for worker in workers)
    for returncode, stderr in results:
        assert returncode == 0, stderr[-2000:] + logs[-3000:]
    reclaimed = [line for line in logs.splitlines() if "is gone:" in line]
    assert reclaimed, "no worker gave the victim's requests back"
    if victim_checkpoints > 30:
        assert "Cutting" in victim.log_text(), "the victim's unconfirmed output was not cut"
    got = union(*workers)
    assert set(got["story"]) == set(single_worker["story"])
    assert set(got["author"]) == set(single_worker["author"])
    assert [k for k, n in got["story"].items() if n > 1] == []
    assert [k for k, n in got["author"].items() if n > 1] == []
    print(
        f"killed 1 of 2 workers after {exported_by_victim} items; {reclaimed[0].split('] ')[-1]};"
        f" {len(got['story'])} stories, none missing, none twice"
    )


def test_a_redis_that_comes_back_empty_stops_the_workers_instead_of_a_recrawl(
    content: SiteContent, single_worker: dict, redis_server: RedisServer, tmp_path: Path
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    with SiteServer(content, latency=LATENCY) as site:
        workers = [Worker(tmp_path / f"w{n}", site.base_url, redis_server.url) for n in range(2)]
        # 1. Redis emptied under running workers (as a restart that the client rode out).
        for worker in workers:
            worker.start()
        wait_until(lambda: len(site.requests) >= 40, timeout=120, what="40 pages fetched")
        client.flushall()
        for worker in workers:
            returncode, _ = worker.wait()
            assert returncode == 1
        first = union(*workers)
        assert first["story"]
        assert max(first["story"].values()) == 1
        for worker in workers:
            assert sum("lost crawl" in line for line in worker.log_text().splitlines()) == 1
        # 2. Restarted on the empty Redis: one line each, nothing fetched or written.
        fetched, sizes = len(site.requests), [w.items.stat().st_size for w in workers]
        for worker in workers:
            returncode, stderr = worker.start().wait()
            assert returncode == 1
            (line,) = stderr.strip().splitlines()
            assert line.startswith("scrapy crawl topics: error: crawl not started: Redis at ")
            assert "restarted empty" in line
            assert "DISTRIBUTED_RESTART=1" in line
        assert len(site.requests) == fetched
        assert [w.items.stat().st_size for w in workers] == sizes
        # 3. Redis killed and started again empty: the same refusal.
        assert redis_server.process is not None
        redis_server.process.kill()
        redis_server.process.wait(10)
        redis_server.start()
        for worker in workers:
            returncode, stderr = worker.start().wait()
            assert returncode == 1
            assert "restarted empty" in stderr
        # 4. Told to restart: a new crawl, complete, each entity once.
        fresh = [
            Worker(tmp_path / f"w{n}", site.base_url, redis_server.url, DISTRIBUTED_RESTART=True)
            for n in range(2)
        ]
        for worker in fresh:
            worker.items = worker.folder / "restarted.jsonl"
            worker.command[worker.command.index("-o") + 1] = str(worker.items)
            worker.start()
        for worker in fresh:
            returncode, stderr = worker.wait()
            assert returncode == 0, stderr[-2000:]
    got = union(*fresh)
    assert set(got["story"]) == set(single_worker["story"])
    assert [k for k, n in got["story"].items() if n > 1] == []
    assert [k for k, n in got["author"].items() if n > 1] == []
    print(
        f"Redis emptied after {sum(first['story'].values())} stories (none twice), restarts "
        f"refused twice per worker; restarted crawl: {len(got['story'])} stories, each once"
    )


def test_a_finished_crawl_stays_finished(
    content: SiteContent, single_worker: dict, redis_server: RedisServer, tmp_path: Path
) -> None:
    """A worker SIGKILLed mid-crawl, the other finishing the crawl alone; then the same
    command again for each: one line, exit 0, nothing fetched, and the union of the feeds
    holds each entity once (the killed worker's unconfirmed output cut back). Told to
    restart, a worker starts a new crawl."""
    with SiteServer(content, latency=LATENCY) as site:
        victim = Worker(tmp_path / "w0", site.base_url, redis_server.url,
                        DISTRIBUTED_CHECKPOINT_INTERVAL=60)  # fmt: skip
        survivor = Worker(tmp_path / "w1", site.base_url, redis_server.url)
        victim.start()
        survivor.start()
        wait_until(lambda: len(victim.exported()) >= 20, timeout=120, what="20 items exported")
        victim.kill()
        returncode, stderr = survivor.wait()
        assert returncode == 0, stderr[-2000:] + survivor.log_text()[-3000:]
        fetched = len(site.requests)
        for worker in (victim, survivor):
            returncode, stderr = worker.start().wait()
            assert returncode == 0, stderr[-2000:]
            (line,) = stderr.strip().splitlines()
            assert line.startswith("scrapy crawl topics: Crawl ")
            assert "has finished: nothing to do (-s DISTRIBUTED_RESTART=1" in line
        assert len(site.requests) == fetched, "a finished crawl fetched again"
        for worker in (victim, survivor):  # nothing left to resume: no checkpoint remembered
            assert list((worker.folder / "state").rglob("feed-*.size")) == []
        got = union(victim, survivor)
        assert set(got["story"]) == set(single_worker["story"])
        assert [k for k, n in got["story"].items() if n > 1] == []
        assert [k for k, n in got["author"].items() if n > 1] == []
        returncode, stderr = survivor.start("-s", "DISTRIBUTED_RESTART=1").wait()
        assert returncode == 0, stderr[-2000:]
        assert len(site.requests) > fetched, "DISTRIBUTED_RESTART=1 starts a new crawl"
