"""Tag-page card parsing scales linearly: ``parse_page`` on pages of N listing cards.

Run with ``python -m bench.card_scaling [--cards 5000 10000 50000] [--repeat 3]``. Each size
runs in a fresh subprocess (so its peak RSS is its own): it builds a today-style tag page of N cards
(the local site's card markup, one section), then times ``parse_page(kind="tag")`` and,
as the baseline of the same run, bare ``lxml.html.fromstring`` on the same bytes (best of
``--repeat``, the two taking turns; CPU time of the process, so that other work on a shared
machine counts as little as it can). The
figures to read are the ratios: parse time over the smallest size's (linear means
≈ N/N₀), and parse time over lxml's at each size (flat means no superlinear part).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime

import lxml.html

SCRAPED_AT = datetime(2026, 11, 30, 12, tzinfo=UTC)
TAG_URL = "https://medium.com/tag/distributed-training"


def build_page(cards: int) -> bytes:
    """A tag page with ``cards`` listing cards under one "Latest stories" heading."""
    from topics_crawler.site.cards import card
    from topics_crawler.site.content import default_site

    site = default_site().with_archive("distributed-training", cards)
    site.now = SCRAPED_AT
    stories = list(site.stories.values())[-cards:]
    body = "".join(
        card(site, story, page_host="medium.com", placement="topic_page", position=i, now=site.now)
        for i, story in enumerate(stories, start=1)
    )
    html = (
        '<!DOCTYPE html><html><head><meta property="og:site_name" content="Medium">'
        "<title>The most insightful stories about Distributed Training - Medium</title></head>"
        f"<body><main><h1>Distributed Training</h1><section><h2>Latest stories</h2>{body}"
        "</section></main></body></html>"
    )
    return html.encode("utf-8")


def measure(cards: int, repeat: int) -> dict[str, float]:
    """Best of ``repeat`` timings of lxml and of the tag parser, taking turns, on one page
    of ``cards`` cards (this process)."""
    from topics_crawler.pages import parse_page

    body = build_page(cards)
    lxml_s = parse_s = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        lxml.html.fromstring(body)
        lxml_s = min(lxml_s, time.process_time() - start)
        start = time.process_time()
        result = parse_page(body, TAG_URL, kind="tag", scraped_at=SCRAPED_AT)
        parse_s = min(parse_s, time.process_time() - start)
    stories = len(result.items_of("story"))
    if stories != cards:
        raise SystemExit(f"{cards} cards but {stories} stories parsed")
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"cards": cards, "mb": len(body) / 1e6, "lxml_s": lxml_s, "parse_s": parse_s,
            "peak_mib": peak_mib}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, nargs="+", default=[5000, 10000, 50000])
    parser.add_argument("--repeat", type=int, default=3, help="timings per size; best counts")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one, args.repeat)))
        return 0
    rows = []
    for cards in args.cards:
        child = [sys.executable, "-m", "bench.card_scaling", "--one", str(cards)]
        child += ["--repeat", str(args.repeat)]
        done = subprocess.run(child, capture_output=True, text=True, check=True, timeout=1800)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    base = rows[0]
    print("| cards | page MB | lxml s | parse s | parse ÷ lxml | time × (vs first) | peak MiB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['cards']:,} | {row['mb']:.1f} | {row['lxml_s']:.2f} | {row['parse_s']:.2f} "
            f"| {row['parse_s'] / row['lxml_s']:.1f} | {row['parse_s'] / base['parse_s']:.1f} "
            f"(cards × {row['cards'] / base['cards']:.0f}) | {row['peak_mib']:.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
