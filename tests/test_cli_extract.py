"""``python -m topics_crawler extract``: items of one saved page as JSON lines.

The command runs in this process (:func:`tests.in_process.python_m`); a real page's
extract and the first page without Medium data run it as a user does, in a new process.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.in_process import Completed, python_m, topics_crawler_cli
from topics_crawler.site.refusals import challenge_page, ray_id, waf_page
from topics_crawler.site.routes import Response as SiteResponse

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


#: A saved refusal, from the captures and from the local site (another Ray ID, another URL).
REFUSALS = [
    ("challenge_managed__2scraper-2026.html", "a Cloudflare managed challenge", "a3bf6574af0257df"),
    ("blocked_waf__2scraper-2026-redacted.html", "a Cloudflare WAF refusal", "a3bf432ecb5b18b9"),
]


@pytest.mark.parametrize(("name", "what", "ray"), REFUSALS)
def test_a_saved_refusal_is_named_and_exits_3(
    real_pages: Path, name: str, what: str, ray: str
) -> None:
    completed = topics_crawler_cli(
        "extract", str(real_pages / name), "--url", "https://medium.com/@someone"
    )
    assert completed.returncode == 3
    assert completed.stdout == ""
    (line,) = completed.stderr.splitlines()
    assert f"not a Medium page but {what}" in line
    assert f"Ray ID {ray}" in line


@pytest.mark.parametrize(
    ("page", "what"),
    [(waf_page, "a Cloudflare WAF refusal"), (challenge_page, "a Cloudflare managed challenge")],
)
def test_the_local_sites_refusals_are_named_too(
    tmp_path: Path, page: Callable[[str], SiteResponse], what: str
) -> None:
    path = "/tag/distributed-training/archive/2026/09/10"
    saved = tmp_path / "refusal.html"
    saved.write_bytes(page(path).body)
    completed = topics_crawler_cli("extract", str(saved), "--url", "https://medium.com" + path)
    assert completed.returncode == 3
    assert what in completed.stderr
    assert ray_id(path) in completed.stderr


def test_a_page_of_a_host_that_left_medium_names_the_host() -> None:
    case = ROOT / "tests/fixtures/own/story/towardsdatascience-2026-left-medium/input.html"
    url = "https://towardsdatascience.com/pods-plainly-708192a3b4c5"
    completed = topics_crawler_cli("extract", str(case), "--url", url)
    assert completed.returncode == 1
    (line,) = completed.stderr.splitlines()
    assert "towardsdatascience.com is no Medium site any more" in line
