"""``python -m topics_crawler extract``: items of one saved page as JSON lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "topics_crawler", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_extract_a_real_story(real_pages: Path) -> None:
    page = real_pages / "story_humanparts_the-mtg-color-wheel-c9700a7cf36d__postlight-2023.html"
    process = run_cli(
        "extract",
        str(page),
        "--url",
        "https://humanparts.medium.com/the-mtg-color-wheel-c9700a7cf36d",
    )
    assert process.returncode == 0, process.stderr
    items = [json.loads(line) for line in process.stdout.splitlines()]
    assert items[0]["item_type"] == "story"
    assert items[0]["story_id"] == "c9700a7cf36d"
    assert items[0]["is_member_only"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["extract", "/no/such/file.html", "--url", "https://medium.com/@a"], "cannot read"),
        (["extract", "{page}", "--url", "not a url"], "is not an http(s) URL"),
        (["extract", "{page}", "--url", "https://example.com/about"], "unknown page kind"),
        (["extract", "{page}"], "--url"),
        (
            ["extract", "{page}", "--url", "https://medium.com/@a", "--kind", "poem"],
            "invalid choice",
        ),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_extract_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    page = tmp_path / "page.html"
    page.write_text("<html><body>Just a page</body></html>", encoding="utf-8")
    process = run_cli(*[a.replace("{page}", str(page)) for a in args])
    assert process.returncode == 2
    assert "Traceback" not in process.stderr
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1
    assert message in lines[0]


def test_extract_directory_is_a_clear_error(tmp_path: Path) -> None:
    process = run_cli("extract", str(tmp_path), "--url", "https://medium.com/@a")
    assert process.returncode == 2
    assert "cannot read" in process.stderr
