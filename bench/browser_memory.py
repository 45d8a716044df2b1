"""Browser memory over 300 sequential renders of the local site's JS tag page.

Run: ``.venv/bin/python -m bench.browser_memory [--renders 300] [--every 25]``.
``RENDER_MODE=always`` through the project's stack; after every ``--every``
renders, the RSS summed over the chromium processes under this process (from
``/proc``). The check: RSS after the last render within ±20 % of RSS after
render 50. Prints a Markdown table and the verdict; exit status 1 when it fails.
"""

from __future__ import annotations

import argparse
import time

from scrapy.http import Response

from bench._render_bench import TAG, bench_settings, descendant_rss_kib, run_crawls

TOLERANCE = 0.20
REFERENCE_RENDER = 50


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renders", type=int, default=300)
    parser.add_argument("--every", type=int, default=25)
    args = parser.parse_args(argv)
    from topics_crawler.site.content import default_site
    from topics_crawler.site.server import SiteServer

    samples: list[tuple[int, int, int, float]] = []
    started = time.perf_counter()

    def on_page(index: int, response: Response, seconds: float) -> None:
        if "playwright" not in response.flags:
            raise SystemExit(f"render {index} did not go through the browser")
        if index % args.every == 0 or index in (1, REFERENCE_RENDER, args.renders):
            rss, processes = descendant_rss_kib()
            samples.append((index, rss, processes, time.perf_counter() - started))

    content = default_site().with_archive(TAG, 40, seed=0)
    with SiteServer(content, js_sections=True) as site:
        run_crawls([(bench_settings(site.base_url, "always"), args.renders, on_page)])
    print("| render | chromium RSS (MiB) | processes | elapsed (s) |")
    print("|---:|---:|---:|---:|")
    for index, rss, processes, elapsed in samples:
        print(f"| {index} | {rss / 1024:.0f} | {processes} | {elapsed:.0f} |")
    reference_index = min(REFERENCE_RENDER, args.renders)
    reference = next(rss for index, rss, _, _ in samples if index >= reference_index)
    last_index, last = samples[-1][0], samples[-1][1]
    change = last / reference - 1
    verdict = "PASS" if abs(change) <= TOLERANCE else "FAIL"
    print(f"\nRSS after render {last_index} vs render {reference_index}: {change:+.1%} ({verdict})")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    raise SystemExit(main())
