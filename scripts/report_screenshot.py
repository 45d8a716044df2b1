"""Screenshot a report page as ``docs/report.png`` shows it: headless Chromium, 1200 px wide,
the whole page.

    make demo
    .venv/bin/python scripts/report_screenshot.py data/demo/report/report.html docs/report.png

Uses the Chromium at ``TOPICS_CRAWLER_CHROMIUM`` (default ``/usr/bin/chromium``) through
Playwright, as ``tests/test_report_page.py`` opens the page; nothing is fetched.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = os.environ.get("TOPICS_CRAWLER_CHROMIUM", "/usr/bin/chromium")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: report_screenshot.py REPORT.html OUT.png", file=sys.stderr)
        return 2
    page_path, out = Path(argv[0]).resolve(), Path(argv[1])
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(page_path.as_uri(), wait_until="load")
            page.screenshot(path=str(out), full_page=True)
        finally:
            browser.close()
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
