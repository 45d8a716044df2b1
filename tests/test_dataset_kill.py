"""A dataset crawl killed with SIGKILL at any point, then the same command again: the
dataset ends with exactly the rows of a clean crawl (real ``scrapy crawl`` processes
against the local site).

Kill points: early (a few pages in) and mid-crawl (a third of the pages), caught by
polling from outside; at closing, as the commit starts, and in the final merge once the
stories' new parts are written, where the crawl kills itself (:mod:`tests.killed_crawl`:
a commit priced by the run is over too soon to be caught from outside). The dataset is seeded
with rows of earlier runs, so every test also checks that a killed run never damages
what earlier runs left.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.crawl_helpers import crawl_command, start_crawl, without_read_times
from tests.services import wait_until
from topics_crawler.dataset.commit import encode_rows
from topics_crawler.dataset.layout import ENTITIES, MANIFEST_NAME
from topics_crawler.dataset.manifest import build_manifest, manifest_text
from topics_crawler.items import Story, entity_keys, item_to_dict
from topics_crawler.output.exporters import arrow_schema, records_of
from topics_crawler.site.content import default_site
from topics_crawler.site.scale import scale_page_count, scale_tag_slugs, with_scale_tags
from topics_crawler.site.server import SiteServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

N_TAGS = 10  # 200 stories, 25 authors
TAGS = "tags=" + ",".join(scale_tag_slugs(N_TAGS))
SEED_STORIES = 60_000


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    with SiteServer(with_scale_tags(default_site(), N_TAGS), latency=0.05) as server:
        yield server


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset holding the rows of earlier runs (stories no crawl here sees)."""
    dataset = tmp_path_factory.mktemp("seed") / "dataset"
    dataset.mkdir()
    stories = [
        item_to_dict(
            Story(
                story_id=f"ee{index:010x}",
                url=f"https://medium.com/p/ee{index:010x}",
                title=f"Seed {index}",
                claps=index,
                scraped_at="2025-01-01T00:00:00Z",
            )
        )
        for index in range(SEED_STORIES)
    ]
    for entity in ENTITIES:
        rows = stories if entity.item_type == "story" else []
        pq.write_table(
            encode_rows(rows, arrow_schema(entity.item_class)), dataset / entity.parquet_name
        )
        with (dataset / entity.jsonl_name).open("w", encoding="utf-8") as out:
            out.writelines(json.dumps(row) + "\n" for row in rows)
    run = {"run_id": "seed", "started_at": "2025-01-01T00:00:00Z"}
    run |= {"finished_at": "2025-01-01T00:00:00Z", "tags": [], "items": {}}
    counts = {e.item_type: SEED_STORIES if e.item_type == "story" else 0 for e in ENTITIES}
    (dataset / MANIFEST_NAME).write_text(manifest_text(build_manifest(None, run, counts)), "utf-8")
    return dataset


def command(base_url: str, dataset: Path, log: Path, jobdir: Path | None = None) -> list[str]:
    settings: dict[str, Any] = {
        "MEDIUM_BASE_URL": base_url,
        "DATASET_DIR": dataset,
        "LOG_FILE": log,
        "AUTOTHROTTLE_ENABLED": False,
    }
    if jobdir is not None:
        settings["JOBDIR"] = jobdir
    return crawl_command(TAGS, settings=settings)


def rows_of(dataset: Path) -> dict[str, list[str]]:
    """Each entity file's rows (without when they were read), sorted; JSONL twin checked equal."""
    out = {}
    for entity in ENTITIES:
        table = pq.read_table(dataset / entity.parquet_name)
        lines = (dataset / entity.jsonl_name).read_text("utf-8").splitlines()
        twin = {entity_keys(entity.item_type, json.loads(line))[0] for line in lines}
        assert len(twin) == table.num_rows, f"{entity.jsonl_name} is not the Parquet's twin"
        if entity.item_type != "tag_story":  # a listing seen again is a change: appended
            assert len(lines) == table.num_rows, f"{entity.jsonl_name}: lines appended twice"
        rows = records_of(table)
        keys = [key for row in rows for key in entity_keys(entity.item_type, row)]
        assert len(keys) == len(set(keys)), f"an entity twice in {entity.parquet_name}"
        out[entity.item_type] = sorted(
            json.dumps(without_read_times(row), sort_keys=True) for row in rows
        )
    manifest = json.loads((dataset / "manifest.json").read_text("utf-8"))
    assert manifest["counts"] == {t: len(r) for t, r in out.items()}
    return out


@pytest.fixture(scope="module")
def reference(site: SiteServer, seeded: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    dataset = tmp_path_factory.mktemp("reference") / "dataset"
    shutil.copytree(seeded, dataset)
    assert start_crawl(command(site.base_url, dataset, dataset.parent / "log")).wait(180) == 0
    rows = rows_of(dataset)
    assert len(rows["story"]) == SEED_STORIES + N_TAGS * 20
    return rows


def _requests_at_least(site: SiteServer, count: int) -> Callable[[Path, Path], bool]:
    return lambda dataset, log: len(site.requests) >= count


KILL_POINTS = {
    "early": lambda site: _requests_at_least(site, 5),
    "mid_crawl": lambda site: _requests_at_least(site, scale_page_count(N_TAGS) // 3),
    "closing_spider": None,  # the crawl kills itself (KILLED_AT)
    "final_merge": None,
}
#: Kill points inside the crawl: (function as its caller finds it, before or after its call;
#: ``write_entity`` lives in ``dataset.write`` and is patched where ``commit_stage`` looks it up).
KILLED_AT = {
    "closing_spider": ("topics_crawler.dataset.extension:commit_stage", "before"),
    "final_merge": ("topics_crawler.dataset.commit:write_entity", "after"),
}


def killed_line(line: list[str], point: str) -> list[str]:
    """``line`` (``python -m scrapy ...``) run by :mod:`tests.killed_crawl` at ``point``."""
    assert line[1:3] == ["-m", "scrapy"]
    return [line[0], "-m", "tests.killed_crawl", *KILLED_AT[point], *line[3:]]


def kill_and_rerun(
    site: SiteServer, seeded: Path, tmp_path: Path, point: str, with_jobdir: bool
) -> tuple[Path, str]:
    dataset = tmp_path / "dataset"
    shutil.copytree(seeded, dataset)
    log = tmp_path / "crawl.log"
    line = command(site.base_url, dataset, log, tmp_path / "job" if with_jobdir else None)
    site.clear_log()
    make_check = KILL_POINTS[point]
    killed = start_crawl(line if make_check else killed_line(line, point))
    ready = make_check(site) if make_check else lambda dataset, log: False
    try:
        wait_until(lambda: ready(dataset, log) or killed.poll() is not None, 120, point)
    finally:
        killed.kill()
    assert killed.wait(10) == -9, f"the crawl ended before the kill point {point}"
    if point == "final_merge":
        assert (dataset / ".stories.parquet.next").is_dir(), "killed before the merge wrote"
    again = start_crawl(line)
    assert again.wait(180) == 0, log.read_text("utf-8")[-3000:]
    return dataset, log.read_text("utf-8")


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_killed_dataset_crawl_then_the_same_command_gives_the_clean_rows(
    site: SiteServer, seeded: Path, reference: dict, tmp_path: Path, point: str
) -> None:
    dataset, log = kill_and_rerun(site, seeded, tmp_path, point, with_jobdir=False)
    assert rows_of(dataset) == reference
    if point in ("mid_crawl", "closing_spider"):
        assert "rows left by the killed crawl" in log
    assert not (dataset / ".staging").exists()
    assert not list(dataset.glob(".*.next"))


@pytest.mark.parametrize("point", ["mid_crawl", "final_merge"])
def test_killed_dataset_job_resumes_with_jobdir_to_the_clean_rows(
    site: SiteServer, seeded: Path, reference: dict, tmp_path: Path, point: str
) -> None:
    dataset, log = kill_and_rerun(site, seeded, tmp_path, point, with_jobdir=True)
    assert rows_of(dataset) == reference
    if point == "mid_crawl":
        assert "Resuming the crawl in" in log
