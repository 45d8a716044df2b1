"""The dataset report: aggregates, PNG charts, Markdown/HTML page and the CLI's errors."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from tests.test_dataset import crawl
from topics_crawler.cli import main
from topics_crawler.items import Author, Item, Story
from topics_crawler.report import build_report, summary

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
AUTHORS = [("Ada Lovelace", "ada"), (None, "bob"), ("Cy", "cy")]
PUBLICATIONS = [("Towards AI", "towards-ai"), (None, "ml-notes"), (None, None)]
TAGS = ["ai", "ml", "llm", "python", "data"]


def synthetic_stories(count: int = 48) -> list[Item]:
    stories: list[Item] = []
    for i in range(count):
        name, username = AUTHORS[i % len(AUTHORS)]
        publication, slug = PUBLICATIONS[i % len(PUBLICATIONS)]
        stories.append(
            Story(
                story_id=f"{i:012x}",
                title=f"Story {i}",
                author_name=name,
                author_username=username,
                publication_name=publication,
                publication_slug=slug,
                published_at=f"2024-{1 + i % 5:02d}-{1 + i % 28:02d}T08:00:00Z",
                reading_time_min=1.5 + i % 12,
                claps=(i * 37) % 2000 if i % 7 else None,
                tags=[TAGS[i % 5], TAGS[(i + 1) % 5], *(["ai"] if i % 2 else [])],
            )
        )
    return stories


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("report") / "ds"
    crawl(directory, synthetic_stories(), tags="ai,ml")
    return directory


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == PNG_SIGNATURE, f"{path.name} is not a PNG"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def test_stories_per_month_fills_gaps() -> None:
    rows = [{"published_at": "2024-01-05T00:00:00Z"}, {"published_at": "2024-03-01T00:00:00Z"}]
    assert summary.stories_per_month([*rows, {"published_at": None}]) == [
        ("2024-01", 1),
        ("2024-02", 0),
        ("2024-03", 1),
    ]
    assert summary.month_range("2023-11", "2024-02") == ["2023-11", "2023-12", "2024-01", "2024-02"]


def test_rankings_by_stories_and_claps() -> None:
    rows = [
        {"author_name": "A", "claps": 10},
        {"author_username": "b", "claps": 500},
        {"author_name": "A", "claps": None},
    ]
    assert summary.top_by_stories(summary.author_label(r) for r in rows) == [("A", 2), ("@b", 1)]
    assert summary.top_by_claps(rows, summary.author_label) == [("@b", 500), ("A", 10)]


def test_tag_cooccurrence_counts_stories_sharing_tags() -> None:
    rows = [{"tags": ["ai", "ml"]}, {"tags": ["ai", "ml", "ai"]}, {"tags": ["ai"]}, {"tags": []}]
    tags, matrix = summary.tag_cooccurrence(rows)
    assert tags == ["ai", "ml"]
    assert matrix == [[3, 2], [2, 2]]


def test_markdown_report_with_readable_png_charts(dataset: Path, tmp_path: Path) -> None:
    report = build_report(dataset, tmp_path / "out")
    assert report == tmp_path / "out" / "report.md"
    text = report.read_text("utf-8")
    charts = sorted((tmp_path / "out").glob("*.png"))
    assert [c.name for c in charts] == [
        "distributions.png",
        "stories_per_month.png",
        "tag_cooccurrence.png",
        "top_authors.png",
        "top_publications.png",
    ]
    for chart in charts:
        width, height = png_size(chart)
        assert width >= 400
        assert height >= 300
        assert chart.stat().st_size > 10_000
        assert f"]({chart.name})" in text
    rows = "48 stories, 0 authors, 0 publications, 0 tag pages, 0 responses, 0 tag edges"
    rows += ", 0 tag stories"
    assert f"| Rows | {rows} |" in text
    assert "| Tags crawled | ai, ml |" in text
    assert "| Published | 2024-01-01 to 2024-05-25 |" in text
    assert "Ada Lovelace leads with 16 stories." in text


def test_html_report_defaults_to_the_dataset_folder(dataset: Path) -> None:
    report = build_report(dataset, fmt="html")
    assert report == dataset / "report" / "report.html"
    page = report.read_text("utf-8")
    assert page.startswith("<!doctype html>")
    assert '<img src="data:image/png;base64,' in page  # self-contained: charts inline
    assert 'alt="Stories per month"' in page
    assert "<h2>Crawl runs</h2>" in page
    assert "<h2>Failed pages by reason</h2>" in page
    assert "no page failed" in page


def test_cli_writes_the_report(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cli"
    assert main(["report", str(dataset), "--out", str(out), "--format", "html"]) == 0
    assert capsys.readouterr().out.strip() == str(out / "report.html")


def cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_cli_errors_are_one_line_with_exit_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing"
    assert cli_error(["report", str(missing)], capsys).endswith(f"{missing}: no such directory")
    assert cli_error(["report", str(tmp_path)], capsys).endswith(
        f"{tmp_path} is not a dataset (no manifest.json)"
    )
    empty = tmp_path / "empty"
    crawl(empty, [Author(username="ada")])  # a dataset without stories
    assert cli_error(["report", str(empty)], capsys).endswith(
        f"{empty}: empty dataset (no stories to report on)"
    )
    manifest = json.loads((empty / "manifest.json").read_text("utf-8"))
    (empty / "manifest.json").write_text(json.dumps({**manifest, "schema_version": 0}), "utf-8")
    assert "schema version 0" in cli_error(["report", str(empty)], capsys)


def test_cli_rejects_an_unknown_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(tmp_path), "--format", "pdf"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'pdf'" in capsys.readouterr().err


def test_the_growth_chart_draws_claps_over_time_from_the_snapshots(tmp_path: Path) -> None:
    dataset = tmp_path / "ds"
    first = [Story(story_id=f"{i:012x}", title=f"S{i}", claps=10 * i, scraped_at=
                   "2026-01-01T00:00:00Z") for i in range(1, 4)]  # fmt: skip
    later = [Story(story_id=f"{i:012x}", title=f"S{i}", claps=10 * i + i * i, scraped_at=
                   "2026-02-01T00:00:00Z") for i in range(1, 4)]  # fmt: skip
    crawl(dataset, first)
    alone = build_report(dataset, tmp_path / "one")
    assert "## Growth" not in alone.read_text("utf-8"), "one snapshot per story: no growth yet"
    crawl(dataset, later)
    page = build_report(dataset, tmp_path / "two").read_text("utf-8")
    assert "## Growth" in page
    assert "![Growth](growth.png)" in page
    assert "The 3 stories whose claps grew most, over 2 crawl times." in page
    assert png_size(tmp_path / "two" / "growth.png")[0] > 300
    assert summary.growth(
        [
            {"story_id": "a", "scraped_at": "2026-01-01T00:00:00Z", "claps": 1},
            {"story_id": "a", "scraped_at": "2026-02-01T00:00:00Z", "claps": 9},
            {"story_id": "b", "scraped_at": "2026-01-01T00:00:00Z", "claps": 5},
            {"story_id": "a", "scraped_at": "2026-03-01T00:00:00Z", "claps": None, "gone": True},
        ]
    ) == [("a", [("2026-01-01T00:00:00Z", 1), ("2026-02-01T00:00:00Z", 9)])]
