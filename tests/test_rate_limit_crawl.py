"""Under a server's rate limit: the local site's token bucket, and a crawl that learns it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.crawl_helpers import crawl_in_process
from topics_crawler.middlewares.rate import RatePolicy
from topics_crawler.site.content import default_site
from topics_crawler.site.graphql import archive_stories
from topics_crawler.site.rate_limit import TokenBucket
from topics_crawler.site.server import SiteServer

TAG = "distributed-training"
ALL_TIME = {"kind": "ALL_TIME"}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_token_bucket_serves_its_burst_then_names_the_wait() -> None:
    clock = Clock()
    bucket = TokenBucket(rate=2, burst=3, clock=clock)
    assert [bucket.take() for _ in range(3)] == [None, None, None]
    assert bucket.take() == 1  # half a second until the next token: whole seconds
    clock.now = 0.5
    assert bucket.take() is None
    assert bucket.take() == 1
    assert TokenBucket(rate=0.25, clock=clock).take() is None  # burst at least one
    assert TokenBucket(rate=5, retry_after=7, burst=1, clock=clock).take() is None


def test_token_bucket_with_a_fixed_retry_after_and_a_bad_rate() -> None:
    clock = Clock()
    bucket = TokenBucket(rate=5, burst=1, retry_after=7, clock=clock)
    assert (bucket.take(), bucket.take()) == (None, 7)
    with pytest.raises(ValueError, match="rate must be positive"):
        TokenBucket(rate=0)


def test_the_site_answers_429_with_retry_after_past_its_rate() -> None:
    import urllib.error
    import urllib.request

    with SiteServer(default_site(), rate_limit=TokenBucket(rate=1, burst=2)) as site:
        statuses = []
        for _ in range(3):
            try:
                with urllib.request.urlopen(site.url("/robots.txt")) as answer:
                    statuses.append((answer.status, None))
            except urllib.error.HTTPError as error:
                statuses.append((error.code, error.headers["Retry-After"]))
    assert statuses == [(200, None), (200, None), (429, "1")]


@pytest.mark.integration
@pytest.mark.slow
def test_a_rate_limited_history_crawl_exports_every_story_under_the_429_share(
    tmp_path: Path,
) -> None:
    content = default_site().with_archive(TAG, 150, seed=0)
    expected = {s.id for s in archive_stories(content, TAG, ALL_TIME, "NEWEST")}
    rate = 20.0
    with SiteServer(content, latency=0.02, rate_limit=TokenBucket(rate)) as site:
        run = crawl_in_process(
            site.base_url, tmp_path, f"tags={TAG}", "history=newest", "follow=stories",
            settings={"RATE_START": RatePolicy().start}, timeout=240,  # as shipped
        )  # fmt: skip
        log = site.requests
    assert run.returncode == 0, run.log[-3000:]
    assert {s["story_id"] for s in run.of_type("story")} == expected
    assert len(run.of_type("story")) == len(expected)  # none twice
    limited = sum(1 for _, _, status in log if status == 429)
    assert limited >= 1, "the crawl should have met the limit"
    assert limited / len(log) <= 0.05
    assert not [k for k in run.stats if k.startswith("fetch/failed")]
    learned = [v for k, v in run.stats.items() if k.startswith("rate/learned/")]
    assert learned
    assert 0 < learned[0] <= 3 * rate
    assert run.stats["rate/throttled"] == limited
