"""End to end: ``-s IMAGES_ENABLED=1`` on the local site — every story kept, each image stored
once under the dataset, rows pointing at the files, the three bad images recorded, the image
host paced by the same rate control as the pages."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from tests.crawl_helpers import CrawlRun, crawl_in_process
from topics_crawler.site.content import default_site
from topics_crawler.site.faults import FaultPlan
from topics_crawler.site.images import (
    BROKEN_IMAGE_ID,
    HUGE_IMAGE_ID,
    OFFSITE_IMAGE_URL,
    ONLINE_STORE_ID,
    WHITEBOARD_ID,
    add_offsite_story,
)
from topics_crawler.site.server import SiteServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TAG = "machine-learning"
IMAGE_PATHS = "/_host/miro.medium.com/"
#: Seed of the fault plan: two of the crawl's image paths answer 429 (Retry-After: 1) once.
FAULT_SEED = 7


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> tuple[CrawlRun, SiteServer, Path]:
    content = default_site()
    add_offsite_story(content)
    faults = FaultPlan(rate=0.25, seed=FAULT_SEED, kinds=("429",), max_faults=1, under=IMAGE_PATHS)
    out = tmp_path_factory.mktemp("images")
    dataset = out / "dataset"
    with SiteServer(content, faults=faults) as site:
        run = crawl_in_process(
            site.base_url,
            out,
            f"tags={TAG}",
            "follow=stories",
            settings={"IMAGES_ENABLED": 1, "DATASET_DIR": dataset},
        )
    assert run.returncode == 0, run.log[-3000:]
    return run, site, dataset


def images_of(run: CrawlRun) -> dict[str, list[dict[str, Any]]]:
    return {story["story_id"]: story["images"] for story in run.of_type("story")}


def test_every_story_is_exported_with_its_images(crawled) -> None:
    run, _, _ = crawled
    content = default_site()
    add_offsite_story(content)
    assert set(images_of(run)) == set(content.tags[TAG].listed())  # follow=stories
    for story_id, images in images_of(run).items():
        story = content.stories[story_id]
        figures = [b for b in story.body() if not isinstance(b, str)]
        assert [image["role"] for image in images] == ["preview"] + ["body"] * len(figures)
        assert images[0]["url"].endswith(story.image_id)
        ends = [figure.url or figure.image_id or "" for figure in figures]
        assert all(image["url"].endswith(end) for image, end in zip(images[1:], ends, strict=True))


def test_each_image_is_stored_once_and_rows_point_at_the_files(crawled) -> None:
    run, _, dataset = crawled
    stored = [i for images in images_of(run).values() for i in images if i["path"]]
    by_id: dict[str, set[str]] = defaultdict(set)
    for image in stored:
        assert image["path"].startswith("images/full/")
        assert image["path"].endswith(".jpg")
        assert (dataset / image["path"]).is_file()
        assert image["failure"] is None
        assert len(image["checksum"]) == 32
        by_id[image["url"].rsplit("/", 1)[-1]].add(image["path"])
    assert all(len(paths) == 1 for paths in by_id.values())  # one file per image, any size
    assert len(by_id[WHITEBOARD_ID]) == 1  # the image two stories share
    files = list((dataset / "images" / "full").iterdir())
    assert len(files) == len(by_id) == run.stats["file_status_count/downloaded"]
    rows = [json.loads(line) for line in (dataset / "stories.jsonl").read_text().splitlines()]
    assert {row["story_id"]: row["images"] for row in rows} == images_of(run)


def test_the_bad_images_are_recorded_and_cost_no_story(crawled) -> None:
    run, site, dataset = crawled
    failed = {
        image["url"].rsplit("/", 1)[-1]: image["failure"]
        for images in images_of(run).values()
        for image in images
        if image["path"] is None
    }
    assert failed == {
        BROKEN_IMAGE_ID: "unreadable_image",
        HUGE_IMAGE_ID: "too_large",
        OFFSITE_IMAGE_URL.rsplit("/", 1)[-1]: "unsafe_url",
    }
    lines = [json.loads(line) for line in (dataset / "failures.jsonl").read_text().splitlines()]
    assert sorted((line["kind"], line["reason"]) for line in lines) == [
        ("image", "too_large"),
        ("image", "unreadable_image"),
        ("image", "unsafe_url"),
    ]
    assert run.stats["images/failed"] == 3
    assert "failures/total" not in run.stats  # no page failed
    assert run.stats["safety/refused/other_host"] == 1  # the off-site image, never requested
    requested = [unquote(path) for _, path, _ in site.requests]
    assert not any(ONLINE_STORE_ID in path for path in requested)  # behind the wall


def test_images_wait_for_the_rate_control_like_pages(crawled) -> None:
    """A 429 on an image pauses the host for its Retry-After (1 s) and slows it down; the
    image is fetched again after the pause and stored."""
    run, site, _ = crawled
    times: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for when, (_, path, status) in zip(site.times, site.requests, strict=True):
        if path.startswith(IMAGE_PATHS):
            times[path].append((when, status))
    limited = {path: seen for path, seen in times.items() if seen[0][1] == 429}
    assert len(limited) == 2
    for seen in limited.values():
        assert len(seen) == 2
        assert seen[1][1] == 200
        assert seen[1][0] - seen[0][0] >= 0.9  # not before the Retry-After
    assert run.stats["rate/throttled"] >= 2
    assert run.stats["rate/decreased"] >= 1
    assert not any(
        (image["failure"] or "").startswith("http_")
        for images in images_of(run).values()
        for image in images
    )
