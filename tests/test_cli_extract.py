"""``python -m topics_crawler extract``: items of one saved page as JSON lines.

The command runs in this process (:func:`tests.in_process.python_m`); a real page's
extract and the first page without Medium data run it as a user does, in a new process.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.in_process import Completed, python_m

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, new_process: bool = False) -> Completed:
    return python_m("topics_crawler", *args, new_process=new_process)


def test_extract_a_real_story(real_pages: Path) -> None:
    page = real_pages / "story_humanparts_the-mtg-color-wheel-c9700a7cf36d__postlight-2023.html"
    process = run_cli(
        "extract",
        str(page),
        "--url",
        "https://humanparts.medium.com/the-mtg-color-wheel-c9700a7cf36d",
        new_process=True,
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


@pytest.mark.parametrize(
    ("body", "url", "kind", "reason"),
    [
        (b"\x00\xff\xfe not a Medium page at all", "https://medium.com/@a", None, "("),
        (b"\x00\xff\xfe not a Medium page", "https://medium.com/@a", "story", "no Medium story"),
        (
            bytes(range(256)) * 40,
            "https://medium.com/@a/a-story-0123456789ab",
            None,
            "nothing beyond what the URL says",
        ),
        (b"<html><body><p>Hello</p></body></html>", "https://medium.com/p/0123456789ab", None, "("),
    ],
)
def test_a_page_without_medium_data_says_so_and_exits_1(
    tmp_path: Path, body: bytes, url: str, kind: str | None, reason: str
) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(body)
    kind_args = ["--kind", kind] if kind else []
    smoke = body.startswith(b"\x00\xff\xfe not a Medium page at all")  # the first case
    process = run_cli("extract", str(page), "--url", url, *kind_args, new_process=smoke)
    assert process.returncode == 1, process.stdout
    assert process.stdout == ""
    (line,) = process.stderr.splitlines()
    assert line.startswith(f"python -m topics_crawler extract: error: {page}: no Medium data found")
    assert reason in line


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_utf16_or_utf32_page_with_a_bom_is_decoded(tmp_path: Path, encoding: str) -> None:
    case = ROOT / "tests/fixtures/own/story/locked_preview_2025"
    source = case / "input.html"
    url = json.loads((case / "meta.json").read_text(encoding="utf-8"))["url"]
    text = source.read_text(encoding="utf-8")
    page = tmp_path / "page.html"
    bom = {"utf-16-be": b"\xfe\xff"}.get(encoding, b"")
    page.write_bytes(bom + text.encode(encoding))
    as_utf8 = run_cli("extract", str(source), "--url", url)
    process = run_cli("extract", str(page), "--url", url)
    assert process.returncode == 0, process.stderr
    drop = re.compile(r'"scraped_at": "[^"]*"')
    assert drop.sub("", process.stdout) == drop.sub("", as_utf8.stdout)
