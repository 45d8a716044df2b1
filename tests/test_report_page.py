"""``report DIR --html``: one self-contained page, opened in headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.test_dataset import crawl
from tests.test_report import synthetic_stories
from topics_crawler.cli import main
from topics_crawler.report.load import load_failures

CHROMIUM = os.environ.get("TOPICS_CRAWLER_CHROMIUM", "/usr/bin/chromium")
FAILURES = [
    {"url": "https://medium.com/@gone", "kind": "author", "reason": "gone", "status": 404},
    {"url": "https://medium.com/p/0123456789ab", "kind": "story", "reason": "http_503"},
    {"url": "https://medium.com/p/0123456789ac", "kind": "story", "reason": "http_503"},
]


@pytest.fixture(scope="module")
def page_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("page") / "ds"
    crawl(directory, synthetic_stories(), tags="ai,ml")
    lines = [json.dumps(f) for f in FAILURES] + ["{not json"]
    (directory / "failures.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    out = directory / "web"
    assert main(["report", str(directory), "--html", "--out", str(out)]) == 0
    return out / "report.html"


def test_failures_are_counted_by_reason(page_path: Path) -> None:
    counts = load_failures(page_path.parent.parent)
    assert counts == {"http_503": 2, "gone": 1, "unreadable_record": 1}


def test_the_page_is_self_contained(page_path: Path, tmp_path: Path) -> None:
    alone = tmp_path / "alone.html"
    shutil.copy(page_path, alone)  # no chart files beside it
    text = alone.read_text("utf-8")
    assert 'src="data:image/png;base64,' in text
    for reference in ('src="http', "src='http", 'href="http', "<link ", "<script"):
        assert reference not in text


def open_in_chromium(path: Path, screenshot: Path | None = None) -> dict[str, Any]:
    """What the page shows in headless Chromium: images, tables and their rows."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(path.as_uri(), wait_until="load")
            shown = page.evaluate(
                """() => ({
                    images: [...document.images].map(i => ({
                        alt: i.alt, complete: i.complete, width: i.naturalWidth})),
                    tables: [...document.querySelectorAll('table')].map(t => ({
                        heading: t.closest('section, div')?.querySelector('h2, h3')?.textContent
                            ?? null,
                        rows: t.querySelectorAll('tbody tr').length,
                        text: t.innerText})),
                    headings: [...document.querySelectorAll('h2')].map(h => h.textContent),
                })"""
            )
            if screenshot is not None:
                page.screenshot(path=str(screenshot), full_page=True)
            return dict(shown)
        finally:
            browser.close()


@pytest.mark.browser
def test_chromium_shows_every_chart_and_table(page_path: Path, tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (make system-deps)")
    alone = tmp_path / "alone.html"
    shutil.copy(page_path, alone)
    shown = open_in_chromium(alone)
    images = shown["images"]
    assert len(images) >= 4, images
    assert all(i["complete"] and i["width"] > 300 for i in images), images
    assert all(t["rows"] > 0 for t in shown["tables"]), shown["tables"]
    by_heading = {t["heading"]: t["text"] for t in shown["tables"]}
    assert "Ada Lovelace" in by_heading["Authors"]
    assert "http_503\t2" in by_heading["Failed pages by reason"]
    assert "Crawl runs" in shown["headings"]
