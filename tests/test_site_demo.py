"""The ``make demo`` driver: result counting, failure reporting, and one real crawl."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.site import demo
from tests.site.content import default_site, expected_entities


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_count_items_counts_per_type_and_flags_bad_lines(tmp_path: Path) -> None:
    items = write_lines(
        tmp_path / "items.jsonl",
        ['{"item_type": "story"}', '{"item_type": "story"}', '{"item_type": "author"}', "", "{"],
    )
    counts, bad = demo.count_items(items)
    assert dict(counts) == {"story": 2, "author": 1}
    assert bad == 1
    assert demo.count_items(tmp_path / "absent.jsonl") == ({}, 0)


@pytest.mark.parametrize(
    ("returncode", "lines", "reason"),
    [
        (1, ['{"item_type": "story"}'], "exited with status 1"),
        (-1, [], "timed out"),
        (0, [], "yielded no items"),
        (0, ["not json"], "are not JSON"),
        (0, ['{"item_type": "story"}'], None),
    ],
)
def test_failure_explains_what_went_wrong(
    tmp_path: Path, returncode: int, lines: list[str], reason: str | None
) -> None:
    items = write_lines(tmp_path / "items.jsonl", lines)
    counts, bad = demo.count_items(items)
    run = demo.CrawlRun(["scrapy"], returncode, tmp_path, tmp_path / "crawl.log", counts, bad)
    problem = demo.failure(run)
    if reason is None:
        assert problem is None
    else:
        assert problem is not None
        assert reason in problem


def test_crawl_command_points_scrapy_at_the_site(tmp_path: Path) -> None:
    command = demo.crawl_command("http://127.0.0.1:1234", ["a", "b"], tmp_path, "x")
    assert command[1:5] == ["-m", "scrapy", "crawl", "x"]
    assert "tags=a,b" in command
    assert "MEDIUM_BASE_URL=http://127.0.0.1:1234" in command
    assert command[-2:] == ["-s", f"DATASET_DIR={tmp_path}"]


def test_count_dataset_reads_every_entity_file(tmp_path: Path) -> None:
    write_lines(tmp_path / "stories.jsonl", ['{"item_type": "story"}', '{"item_type": "story"}'])
    write_lines(tmp_path / "tag_pages.jsonl", ['{"item_type": "tag_page"}', "oops"])
    counts, bad = demo.count_dataset(tmp_path)
    assert dict(counts) == {"story": 2, "tag_page": 1}
    assert bad == 1


def test_only_a_previous_demo_dataset_is_cleared(tmp_path: Path) -> None:
    precious = write_lines(tmp_path / "notes.txt", ["keep me"])
    demo.clear_previous_demo(tmp_path)
    assert precious.exists()
    write_lines(tmp_path / "manifest.json", ["{}"])
    demo.clear_previous_demo(tmp_path)
    assert not tmp_path.exists()


@pytest.mark.integration
def test_failing_crawl_is_reported_with_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = demo.main(["--out", str(tmp_path), "--spider", "no-such-spider", "--timeout", "120"])
    err = capsys.readouterr().err
    assert status == 1
    assert "demo failed: the crawl exited with status" in err
    assert "no-such-spider" in err
    assert (tmp_path / "crawl.log").exists()


@pytest.mark.integration
@pytest.mark.slow
def test_demo_crawl_writes_a_dataset_with_every_entity_and_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo"
    for _ in range(2):  # a second demo replaces the first one: same result
        status = demo.main(["--out", str(out), "--timeout", "300"])
        output = capsys.readouterr()
        assert status == 0, output.err
        assert "Crawled the local site" in output.out
    expected = expected_entities(default_site(), list(demo.DEFAULT_TAGS))
    files = {"tag_page": "tag_pages", "story": "stories", "author": "authors",
             "publication": "publications"}  # fmt: skip
    keys = {"story": "story_id", "author": "username", "publication": "slug", "tag_page": "tag"}
    for item_type, name in files.items():
        rows = pq.read_table(out / f"{name}.parquet").to_pylist()
        lines = (out / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(rows) == len(lines) == len(expected[name]), item_type
        assert {row[keys[item_type]] for row in rows} == set(expected[name])
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    edges = pq.read_table(out / "tag_edges.parquet").to_pylist()
    assert manifest["counts"] == {
        "story": len(expected["stories"]),
        "author": len(expected["authors"]),
        "publication": len(expected["publications"]),
        "tag_page": 2,
        "response": 0,  # the demo asks for no responses
        "tag_edge": len(edges),
    }
    site = default_site()
    related = {(t, r.slug) for t in demo.DEFAULT_TAGS for r in site.tags[t].related}
    assert {(e["from_tag"], e["to"]) for e in edges if e["kind"] == "related"} == related
    assert list((out / "report").glob("*.png"))
