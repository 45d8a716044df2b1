"""The ``make demo`` driver: result counting, failure reporting, and one real crawl."""

from __future__ import annotations

import json
from pathlib import Path

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
    run = demo.CrawlRun(["scrapy"], returncode, items, tmp_path / "crawl.log", counts, bad)
    problem = demo.failure(run)
    if reason is None:
        assert problem is None
    else:
        assert problem is not None
        assert reason in problem


def test_crawl_command_points_scrapy_at_the_site(tmp_path: Path) -> None:
    command = demo.crawl_command("http://127.0.0.1:1234", ["a", "b"], tmp_path / "i.jsonl", "x")
    assert command[1:5] == ["-m", "scrapy", "crawl", "x"]
    assert "tags=a,b" in command
    assert "MEDIUM_BASE_URL=http://127.0.0.1:1234" in command
    assert command[-2:] == ["-O", str(tmp_path / "i.jsonl")]


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
def test_demo_crawl_yields_every_entity_of_the_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = demo.main(["--out", str(tmp_path), "--timeout", "300"])
    output = capsys.readouterr()
    assert status == 0, output.err
    assert "Crawled the local site" in output.out
    expected = expected_entities(default_site(), list(demo.DEFAULT_TAGS))
    lines = (tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines]
    keys = {"story": "story_id", "author": "username", "publication": "slug", "tag_page": "tag"}
    groups = {"story": "stories", "author": "authors", "publication": "publications"}
    found: dict[str, set[str]] = {}
    for item in items:
        found.setdefault(item["item_type"], set()).add(item[keys[item["item_type"]]])
    assert found["tag_page"] == set(expected["tag_pages"])
    for item_type, group in groups.items():
        assert len(found[item_type]) == len(expected[group]), item_type
