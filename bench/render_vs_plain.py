"""Rendered vs plain fetch time of the same tag page of the local site, as a ratio.

Run: ``.venv/bin/python -m bench.render_vs_plain [--fetches 30]``. Two sequential
crawls through the project's stack: ``RENDER_MODE=never`` (Scrapy's HTTP client)
then ``RENDER_MODE=always`` (Chromium: navigation, the page's scripts, the render
actions — settle on a quiet network, final status), each fetching the JS tag page
``--fetches`` times; the first fetch of each is left out (connection set-up,
browser launch, reported apart). Times are from making the request to its callback.
"""

from __future__ import annotations

import argparse
import statistics

from scrapy.http import Response

from bench._render_bench import TAG, PageHook, bench_settings, run_crawls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fetches", type=int, default=30)
    args = parser.parse_args(argv)
    from topics_crawler.site.content import default_site
    from topics_crawler.site.server import SiteServer

    times: dict[str, list[float]] = {"plain": [], "rendered": []}

    def recorder(kind: str) -> PageHook:
        def on_page(index: int, response: Response, seconds: float) -> None:
            if ("playwright" in response.flags) != (kind == "rendered"):
                raise SystemExit(f"{kind} fetch {index} took the wrong path")
            times[kind].append(seconds)

        return on_page

    content = default_site().with_archive(TAG, 40, seed=0)
    with SiteServer(content, js_sections=True) as site:
        run_crawls(
            [
                (bench_settings(site.base_url, "never"), args.fetches, recorder("plain")),
                (bench_settings(site.base_url, "always"), args.fetches, recorder("rendered")),
            ]
        )
    print("| fetch | first (s) | median of the rest (ms) | min (ms) | max (ms) |")
    print("|---|---:|---:|---:|---:|")
    medians = {}
    for kind, values in times.items():
        rest = values[1:]
        medians[kind] = statistics.median(rest)
        print(
            f"| {kind} | {values[0]:.2f} | {medians[kind] * 1000:.1f} | "
            f"{min(rest) * 1000:.1f} | {max(rest) * 1000:.1f} |"
        )
    print(f"\nrendered / plain (medians): {medians['rendered'] / medians['plain']:.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
