"""Two workers on one real Redis page one tag history: the caps hold across workers.

The history pager's state (ranges left, cursor, stories taken, pages read) travels
with each listing request, so whichever worker handles a listing response counts
from the same numbers. Run several times: the worker that handles each listing
response varies from run to run.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.crawl_helpers import run_workers
from tests.services import RedisServer
from topics_crawler.site.content import default_site
from topics_crawler.site.server import SiteServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TAG = "distributed-training"
MAX_STORIES = 120
RUNS = 3


@pytest.mark.parametrize("attempt", range(RUNS))
def test_two_workers_take_exactly_max_stories_none_twice(tmp_path: Path, attempt: int) -> None:
    content = default_site().with_archive(TAG, 400, seed=attempt)
    args = (f"tags={TAG}", "history=newest", f"max_stories={MAX_STORIES}", "follow=stories")
    with RedisServer(tmp_path / "redis") as redis, SiteServer(content, latency=0.01) as site:
        settings = {
            "REDIS_URL": redis.url,
            "DISTRIBUTED_IDLE_CLOSE": 1,
            # small pages: many listing responses, handled by either worker
            "HISTORY_PAGE_SIZE": 10,
            # a worker whose partner drained the queue first exports nothing, and the
            # per-worker minimum-items check would fail it; the caps are checked below
            "HEALTH_ENABLED": False,
        }
        runs = run_workers(site.base_url, tmp_path, *args, settings=settings)
    for run in runs:
        assert run.returncode == 0, run.log[-3000:]
    stories = Counter(item["story_id"] for run in runs for item in run.of_type("story"))
    assert len(stories) == MAX_STORIES
    assert [key for key, n in stories.items() if n > 1] == []
    listed = sum(run.stats.get("history/stories", 0) for run in runs)
    assert listed == MAX_STORIES
    pages = [run.stats.get("history/pages", 0) for run in runs]
    assert sum(pages) == MAX_STORIES // 10
    assert sum(run.stats.get("history/done", 0) for run in runs) == 1
