"""The ``make demo`` driver: result counting, failure reporting, and one real crawl."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from topics_crawler.output.exporters import records_of
from topics_crawler.site import demo


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


def test_crawl_command_points_the_crawl_at_the_site(tmp_path: Path) -> None:
    command = demo.crawl_command(
        "http://127.0.0.1:1234", ["tags=a,b", "history=newest"], tmp_path, "x", {"A": "1"}
    )
    assert command[1:5] == ["-m", "topics_crawler", "crawl", "x"]  # from any folder
    assert command[5:9] == ["-a", "tags=a,b", "-a", "history=newest"]
    assert "MEDIUM_BASE_URL=http://127.0.0.1:1234" in command
    assert "A=1" in command
    assert command[-2:] == ["-s", f"DATASET_DIR={tmp_path}"]


def test_the_paste_lines_are_one_bash_word_each(tmp_path: Path) -> None:
    duckdb_line, pandas_line, report = demo.paste_lines(tmp_path / "d d", tmp_path / "r.html")
    for line in (duckdb_line, pandas_line):
        words = shlex.split(line)
        assert len(words) == 3, words
        assert words[1] == "-c"
    assert "FROM '" in shlex.split(duckdb_line)[2]
    assert report == str(tmp_path / "r.html")
    assert demo.double_quoted('a "b" $c `d` \\e') == '"a \\"b\\" \\$c \\`d\\` \\\\e"'


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
    assert (tmp_path / "crawl-1.log").exists()


@pytest.mark.integration
@pytest.mark.slow
def test_the_demo_shows_history_two_tags_a_report_and_lines_that_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo"
    for _ in range(2):  # a second demo replaces the first one: same result
        status = demo.main(["--out", str(out), "--timeout", "300"])
        output = capsys.readouterr()
        assert status == 0, output.err
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert [run["tags"] for run in manifest["runs"]] == [[demo.SEED_TAG], [demo.SECOND_TAG]]
    assert manifest["counts"]["story"] >= demo.ARCHIVE_STORIES
    assert manifest["counts"]["tag_page"] == 2
    stories = pq.read_table(out / "stories.parquet", columns=["reading_time_min"]).to_pylist()
    minutes = sorted(row["reading_time_min"] for row in stories if row["reading_time_min"])
    assert 3 < minutes[len(minutes) // 2] < 10, "median reading time of a real-looking archive"
    pages = {p["tag"]: p for p in records_of(pq.read_table(out / "tag_pages.parquet"))}
    if shutil.which(demo.CHROMIUM):  # the seed tag's JavaScript sections, through Chromium
        assert pages[demo.SEED_TAG]["who_to_follow"]
    else:
        assert demo.NO_CHROMIUM in output.out
    assert (out / "report" / "report.html").is_file()
    ids = {row["story_id"] for row in pq.read_table(out / "stories.parquet").to_pylist()}
    sections = pages[demo.SECOND_TAG]["sections"]  # typed: records_of gives the mapping back
    listed = {i for section in sections.values() for i in section}
    assert listed, pages[demo.SECOND_TAG]
    assert listed <= ids, "every story the second tag page lists is in the dataset"
    authors = {row["username"] for row in pq.read_table(out / "authors.parquet").to_pylist()}
    site = demo.demo_site()
    assert {site.stories[i].author for i in listed if i in site.stories} <= authors

    lines = output.out.strip().splitlines()[-3:]
    assert lines[2] == str(out / "report" / "report.html")
    for line, expected in zip(lines[:2], ("author_name", "reading_time_min"), strict=True):
        pasted = subprocess.run(
            ["bash", "-c", line], capture_output=True, text=True, timeout=120, check=False
        )
        assert pasted.returncode == 0, pasted.stderr
        assert expected in pasted.stdout
