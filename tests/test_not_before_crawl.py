"""Two hosts, one paused by a 429 + Retry-After: the other keeps its pace, no slot is held."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.services import RedisServer, serving
from tests.two_hosts_crawl import HEALTHY_PAGES, LIMITED_PAGES

ROOT = Path(__file__).resolve().parent.parent
#: The limited host answers 429 + ``Retry-After: 3`` for its first PAUSE seconds.
PAUSE = 3.0


@contextmanager
def host(address: str, limited_for: float, latency: float) -> Iterator[str]:
    """A local server on ``address``: 429 + Retry-After for ``limited_for`` s after its
    first request, then 200 (after ``latency`` s)."""
    first: list[float] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            now = time.monotonic()
            first[:] = first or [now]
            if now - first[0] < limited_for:
                self.send_response(429)
                self.send_header("Retry-After", str(round(PAUSE)))
            else:
                time.sleep(latency)
                self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            return None

    with serving(Handler, address) as url:
        yield url


def crawl(tmp_path: Path, *mode: str) -> dict[str, Any]:
    """The two-hosts crawl (``mode``: see :mod:`tests.two_hosts_crawl`), its results."""
    out = tmp_path / f"run-{mode[0] if mode else 'gate'}.json"
    with host("127.0.0.1", PAUSE, 0.0) as limited, host("127.0.0.2", 0.0, 0.03) as healthy:
        command = [sys.executable, "-m", "tests.two_hosts_crawl", limited, healthy, str(out)]
        command += mode
        run = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
        )
    assert run.returncode == 0, run.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.read_text("utf-8"))
    return result


def pause_window(result: dict[str, Any]) -> tuple[float, float]:
    """From the first 429 (plus its round trip) to the limited host's first 200."""
    limited = [(t, status) for t, host, status in result["responses"] if host == "127.0.0.1"]
    first_429 = min(t for t, status in limited if status == 429)
    first_ok = min(t for t, status in limited if status == 200)
    return first_429 + 0.3, first_ok


def healthy_done_by(result: dict[str, Any], when: float) -> int:
    return sum(1 for t, host, status in result["responses"] if host == "127.0.0.2" and t < when)


def most_active(result: dict[str, Any], address: str, start: float, end: float) -> int:
    return max(
        (active.get(address, 0) for t, active in result["samples"] if start <= t <= end),
        default=0,
    )


@pytest.mark.integration
def test_a_paused_host_holds_no_concurrency_and_the_other_keeps_going(tmp_path: Path) -> None:
    gated = crawl(tmp_path)
    start, end = pause_window(gated)
    assert end - start >= PAUSE - 1.0  # the limited host was really paused that long
    statuses = [(host, status) for _, host, status in gated["responses"]]
    assert statuses.count(("127.0.0.1", 200)) == LIMITED_PAGES  # every page, after the pause
    assert statuses.count(("127.0.0.2", 200)) == HEALTHY_PAGES + 1  # and the seed
    # The healthy host finished while the other was paused: it was never held up.
    assert healthy_done_by(gated, end) == HEALTHY_PAGES + 1
    # While paused, the limited host's requests wait in the scheduler, not in the
    # downloader: at most the slot's short queue, never the 4 global slots.
    assert most_active(gated, "127.0.0.1", start, end) <= 2
    assert_each_request_counted_once(gated["stats"])


def assert_each_request_counted_once(stats: dict[str, Any]) -> None:
    """Scrapy's ``scheduler/enqueued`` and ``scheduler/dequeued``: the seed, the pages and
    each retry once, the ones the gate held too (handed back, not scheduled again)."""
    assert stats["scheduler/held"] > 0
    assert stats["retry/count"] > 0
    scheduled = 1 + LIMITED_PAGES + HEALTHY_PAGES + stats["retry/count"]
    assert stats["scheduler/enqueued"] == stats["scheduler/dequeued"] == scheduled


@pytest.mark.integration
@pytest.mark.parametrize("scheduler", ["journal", "redis"])
def test_the_journal_and_redis_schedulers_count_each_request_once_as_scrapys_does(
    tmp_path: Path, scheduler: str
) -> None:
    if scheduler == "journal":
        result = crawl(tmp_path, "journal")
    else:
        with RedisServer(tmp_path / "redis") as redis:
            result = crawl(tmp_path, "redis", redis.url)
    statuses = [(host, status) for _, host, status in result["responses"]]
    assert statuses.count(("127.0.0.1", 200)) == LIMITED_PAGES
    assert statuses.count(("127.0.0.2", 200)) == HEALTHY_PAGES + 1
    assert_each_request_counted_once(result["stats"])
    assert (
        result["stats"][f"scheduler/dequeued/{scheduler}"] == result["stats"]["scheduler/dequeued"]
    )
