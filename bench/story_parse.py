"""Story parsing speed: ``parse_page`` over every real story capture vs bare lxml.

Run with ``python -m bench.story_parse [--repeat N] [--rounds R]``. Both timings use
the same bytes in the same process; each is the best of ``rounds`` runs of ``repeat``
passes over all captures, timed in CPU seconds of this process (``time.process_time``:
on a machine shared with other jobs, wall time measures their load as much as ours).
The ratio is the cost of our layers on top of building the lxml tree once (target: at
most 2.0x). "Document basics" times what every parser pays before any story logic:
decoding, the tree, meta tags, canonical link and JSON-LD. Tag pages (the ``topic_*``
captures and our own tag fixtures) are measured the same way.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import lxml.html

from tests.fixture_cases import real_pages_dir
from topics_crawler.pages import Document, parse_page

SCRAPED_AT = datetime(2026, 11, 30, 12, tzinfo=UTC)
OWN_TAG_FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "own" / "tag"


def load_captures(folder: Path) -> list[tuple[str, bytes]]:
    """``(name, bytes)`` of every ``story_*.html`` capture, sorted by name."""
    return [(path.name, path.read_bytes()) for path in sorted(folder.glob("story_*.html"))]


def load_tag_pages(folder: Path) -> list[tuple[str, bytes]]:
    """``(URL, bytes)`` of the HTML tag pages: the ``topic_*`` captures and our own
    tag fixtures (every generation the tag parser reads from a page's markup)."""
    pages = [
        ("https://medium.com/topic/" + path.name.split("_")[1], path.read_bytes())
        for path in sorted(folder.glob("topic_*.html"))
    ]
    for case in sorted(OWN_TAG_FIXTURES.glob("*/meta.json")):
        meta = json.loads(case.read_text(encoding="utf-8"))
        pages += [(meta["url"], path.read_bytes()) for path in case.parent.glob("input.html")]
    return pages


def best_of(rounds: int, repeat: int, *works: Callable[[], None]) -> list[float]:
    """Best wall time (seconds) of ``repeat`` calls to each of ``works``; the works take
    turns within every round so a busy machine slows them alike."""
    best = [float("inf")] * len(works)
    for _ in range(rounds):
        for index, work in enumerate(works):
            start = time.process_time()
            for _ in range(repeat):
                work()
            best[index] = min(best[index], time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="passes over all captures")
    parser.add_argument("--rounds", type=int, default=5, help="timed runs; the best counts")
    args = parser.parse_args(argv)
    captures = load_captures(real_pages_dir())
    if not captures:
        print(f"no story captures in {real_pages_dir()}", file=sys.stderr)
        return 1

    def parse_all() -> None:
        for _, body in captures:
            parse_page(body, "https://medium.com/p/x", kind="story", scraped_at=SCRAPED_AT)

    def document_all() -> None:
        for _, body in captures:
            doc = Document(body, "https://medium.com/p/x", scraped_at=SCRAPED_AT)
            _ = (doc.tree, doc.meta, doc.canonical_link, doc.json_ld)

    def lxml_all() -> None:
        for _, body in captures:
            lxml.html.fromstring(body)

    parse_all()  # warm imports and caches outside the timing
    ours, shared, bare = best_of(args.rounds, args.repeat, parse_all, document_all, lxml_all)
    pages = len(captures) * args.repeat
    megabytes = sum(len(body) for _, body in captures) * args.repeat / 1e6
    print(f"captures: {len(captures)} story pages, {megabytes / args.repeat:.2f} MB")
    print(f"passes: {args.repeat} x best of {args.rounds}")
    print(f"parse_page:         {ours:.3f} s  ({ours / pages * 1000:.2f} ms/page)")
    print(f"Document basics:    {shared:.3f} s  ({shared / pages * 1000:.2f} ms/page)")
    print(f"lxml.html.fromstring: {bare:.3f} s  ({bare / pages * 1000:.2f} ms/page)")
    print(f"ratio parse_page / lxml: {ours / bare:.2f}x (target <= 2.0x)")
    print(f"ratio Document basics / lxml: {shared / bare:.2f}x (decode, tree, meta, JSON-LD)")
    tag_pages = load_tag_pages(real_pages_dir())

    def parse_tags() -> None:
        for url, body in tag_pages:
            parse_page(body, url, kind="tag", scraped_at=SCRAPED_AT)

    def lxml_tags() -> None:
        for _, body in tag_pages:
            lxml.html.fromstring(body)

    parse_tags()
    tags, tags_bare = best_of(args.rounds, args.repeat, parse_tags, lxml_tags)
    print(f"tag pages: {len(tag_pages)} ({sum(len(b) for _, b in tag_pages) / 1e6:.2f} MB)")
    print(f"ratio parse_page(tag) / lxml: {tags / tags_bare:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
