"""End to end: a crawl through a site that faults 20 % of its responses loses nothing.

``scrapy crawl topics`` runs (in-process) over the same local site: one with no
transient faults, and one per seed where a fifth of all responses fail in the
ways ``topics_crawler/site/faults.py`` knows. The site has ~30 pages, so one run meets
~8 faults; the seeds are chosen so that together they inject every kind. All
runs see the same fixed damage — a deleted story (always 404) and a story page
that always answers 500 — so every run must export exactly the same entities
with the same values, and list the same pages in ``failures.jsonl``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.crawl_helpers import CrawlRun, crawl_in_process
from topics_crawler.site.content import SiteContent, default_site
from topics_crawler.site.faults import KINDS, FaultPlan
from topics_crawler.site.server import SiteServer

pytestmark = pytest.mark.integration

TAGS = "tags=distributed-training,machine-learning"
FAULT_RATE = 0.2
SEEDS = (1, 16)
RETRY_TIMES = 6
#: Short waits everywhere, and retries enough to outlast ``FaultPlan.max_faults`` (3).
SETTINGS = {
    "DOWNLOAD_TIMEOUT": 2,
    "RETRY_TIMES": RETRY_TIMES,
    "BLOCKED_RETRY_TIMES": RETRY_TIMES,
    "RETRY_BACKOFF_BASE": 0.05,
    "RETRY_BACKOFF_MAX": 0.2,
    "RETRY_AFTER_MAX": 1,
}
KEYS = {"tag_page": "tag", "story": "story_id", "author": "username", "publication": "slug"}
#: Titles of the pages that are not content (see topics_crawler/site/faults.py).
NOT_CONTENT = ("Just a moment...", "Sign in – Medium", "Something went wrong")
#: The stats that show how the crawler handled each kind of fault it met.
HANDLED_BY = {
    "500": "retry/reason_count/500 Internal Server Error",
    "502": "retry/reason_count/502 Bad Gateway",
    "503": "retry/reason_count/503 Service Unavailable",
    "429": "retry/retry_after",
    "429-date": "retry/retry_after",
    "hang": "retry/reason_count/scrapy.exceptions.DownloadTimeoutError",
    "truncate": "retry/reason_count/scrapy.exceptions.ResponseDataLossError",
    "challenge": "blocked/challenge",
    "signin": "blocked/signin_wall",
}
FaultedRuns = dict[int, tuple[CrawlRun, SiteServer]]


@pytest.fixture(scope="module")
def content() -> SiteContent:
    return default_site()


@pytest.fixture(scope="module")
def damage(content: SiteContent) -> dict[str, str]:
    """The fixed damage every run shares: a deleted story and a page that always fails."""
    deleted = next(s for s in content.stories.values() if s.slug.startswith("why-all-reduce"))
    failing = next(s for s in content.stories.values() if s.slug.startswith("gradient-check"))
    return {
        "deleted_id": deleted.id,
        "deleted_url": content.story_url(deleted),
        "failing_path": content.story_path(failing),
        "failing_url": content.story_url(failing),
    }


def plan(damage: dict[str, str], rate: float, seed: int = 0) -> FaultPlan:
    return FaultPlan(
        rate=rate,
        seed=seed,
        hang=3.0,
        retry_after=1,
        deleted=frozenset({damage["deleted_id"]}),
        permanent=frozenset({damage["failing_path"]}),
    )


def crawl(content: SiteContent, faults: FaultPlan, out_dir: Path) -> tuple[CrawlRun, SiteServer]:
    with SiteServer(content, faults=faults) as site:
        run = crawl_in_process(site.base_url, out_dir, TAGS, settings=SETTINGS, timeout=120)
    assert run.returncode == 0, run.log[-3000:]
    return run, site


@pytest.fixture(scope="module")
def clean(
    content: SiteContent, damage: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> CrawlRun:
    return crawl(content, plan(damage, 0.0), tmp_path_factory.mktemp("clean"))[0]


@pytest.fixture(scope="module")
def faulted_runs(
    content: SiteContent, damage: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> FaultedRuns:
    return {
        seed: crawl(content, plan(damage, FAULT_RATE, seed), tmp_path_factory.mktemp(f"s{seed}"))
        for seed in SEEDS
    }


@pytest.fixture(params=SEEDS, ids=[f"seed{seed}" for seed in SEEDS])
def faulted(request: pytest.FixtureRequest, faulted_runs: FaultedRuns) -> CrawlRun:
    return faulted_runs[request.param][0]


def failures(run: CrawlRun) -> list[dict[str, Any]]:
    """``failures.jsonl`` without the time of each line, in a stable order."""
    lines = (run.out_dir / "items.failures.jsonl").read_text("utf-8").splitlines()
    return sorted(({k: v for k, v in json.loads(x).items() if k != "time"} for x in lines), key=str)


def by_key(run: CrawlRun, item_type: str) -> dict[str, dict[str, Any]]:
    return {item[KEYS[item_type]]: item for item in run.of_type(item_type)}


# --- the faults really happened, and were handled as what they are -----------------------------


def test_a_fifth_of_responses_were_faulted_and_every_kind_was_met(
    faulted_runs: FaultedRuns,
) -> None:
    injected: Counter[str] = Counter()
    for _run, site in faulted_runs.values():
        assert site.faults is not None
        counts = site.faults.counts()
        transient = sum(n for kind, n in counts.items() if kind in KINDS)
        responses = [path for _, path, _ in site.requests if path != "/robots.txt"]
        assert 0.15 <= transient / len(responses) <= 0.3, counts
        injected.update(counts)
    assert set(KINDS) <= set(injected), f"kinds never injected: {set(KINDS) - set(injected)}"


def test_each_fault_met_was_handled_as_what_it_is(faulted_runs: FaultedRuns) -> None:
    for run, site in faulted_runs.values():
        assert site.faults is not None
        met = set(site.faults.counts())
        unhandled = {kind for kind in met & set(HANDLED_BY) if not run.stats.get(HANDLED_BY[kind])}
        assert unhandled == set()
        refetched = sum(v for k, v in run.stats.items() if k.startswith("parse/refetched/"))
        assert refetched == site.faults.counts()["broken-state"]


# --- nothing lost, nothing made up ----------------------------------------------------------


def test_clean_crawl_reaches_the_whole_site(clean: CrawlRun, content: SiteContent) -> None:
    counts = clean.counts()
    assert counts["story"] == len(content.stories)
    assert counts["author"] == len(content.authors)
    assert counts["publication"] == len(content.publications)


@pytest.mark.parametrize("item_type", list(KEYS))
def test_every_entity_of_the_clean_crawl_with_the_same_values(
    clean: CrawlRun, faulted: CrawlRun, item_type: str
) -> None:
    keys = Counter(item[KEYS[item_type]] for item in faulted.of_type(item_type))
    assert [k for k, n in keys.items() if n > 1] == [], "exported more than once"
    expected, found = by_key(clean, item_type), by_key(faulted, item_type)
    assert sorted(found) == sorted(expected)
    differences = [
        f"{key}.{field}: {value!r} != {found[key].get(field)!r}"
        for key, item in expected.items()
        for field, value in item.items()
        if field != "scraped_at" and found[key].get(field) != value
    ]
    assert differences == []


def test_no_item_comes_from_an_error_challenge_or_signin_page(faulted: CrawlRun) -> None:
    assert faulted.stats.get("item_dropped_count", 0) == 0
    for item in faulted.items:
        text = json.dumps(item, ensure_ascii=False)
        assert not [marker for marker in NOT_CONTENT if marker in text], item["url"]
        assert "/m/signin" not in text


# --- what could not be had is accounted for --------------------------------------------------


def test_failures_file_lists_the_fixed_damage_and_nothing_else(
    clean: CrawlRun, faulted: CrawlRun, damage: dict[str, str]
) -> None:
    gone = {"url": damage["deleted_url"], "kind": "story", "status": 404, "reason": "gone"}
    failed = {"url": damage["failing_url"], "kind": "story", "status": 500, "reason": "http_500"}
    expected = [{**gone, "attempts": 1}, {**failed, "attempts": RETRY_TIMES + 1}]
    assert failures(faulted) == failures(clean) == sorted(expected, key=str)
    assert (faulted.stats["failures/gone"], faulted.stats["failures/total"]) == (1, 1)
