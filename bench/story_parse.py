"""Story parsing speed: ``parse_page`` over every real story capture vs bare lxml.

Run with ``python -m bench.story_parse [--repeat N] [--rounds R]``. Both timings use
the same bytes in the same process; each is the best of ``rounds`` runs of ``repeat``
passes over all captures, timed in CPU seconds of this process (``time.process_time``:
on a machine shared with other jobs, wall time measures their load as much as ours).
The ratio is the cost of our layers on top of building the lxml tree once (target: at
most 2.0x); the median of the rounds' own ratios (each round times both back to back)
is printed beside it, steadier than the ratio of two bests on a noisy machine.
"Document basics" times what every parser pays before any story logic: decoding, the
tree, meta tags, canonical link and JSON-LD. Tag pages (the ``topic_*``
captures and our own tag fixtures) are measured the same way. ``--breakdown`` adds
where a story parse spends its time: each stage of :func:`parse_story` timed on its
own, best of ``rounds`` per capture, as a share of the same captures' bare trees.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import lxml.html

from tests.fixture_cases import real_pages_dir
from topics_crawler.items.layers import pick, pick_paired
from topics_crawler.pages import Document, parse_page
from topics_crawler.pages._story_html import HTML_LAYERS, dom_layer, json_ld_layer
from topics_crawler.pages._story_state import StoryState
from topics_crawler.pages.story import (
    build_story,
    dom_fields_wanted,
    entity_links,
    html_url_candidates,
    page_links,
    story_state,
)

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


def timed_rounds(rounds: int, repeat: int, *works: Callable[[], None]) -> list[list[float]]:
    """CPU seconds of ``repeat`` calls to each of ``works``, round by round: the works take
    turns within every round, so a round's ratios compare runs under the same load."""
    times: list[list[float]] = [[] for _ in works]
    for _ in range(rounds):
        for index, work in enumerate(works):
            start = time.process_time()
            for _ in range(repeat):
                work()
            times[index].append(time.process_time() - start)
    return times


def best_of(rounds: int, repeat: int, *works: Callable[[], None]) -> list[float]:
    """Best CPU time (seconds) of ``repeat`` calls to each of ``works`` (:func:`timed_rounds`)."""
    return [min(times) for times in timed_rounds(rounds, repeat, *works)]


def round_ratios(times: list[list[float]], index: int, baseline: int) -> list[float]:
    """``works[index] / works[baseline]`` of each round, sorted."""
    return sorted(a / b for a, b in zip(times[index], times[baseline], strict=True))


class _Stages:
    """The stages of one story parse in order, each a call on the same fresh Document."""

    def __init__(self, body: bytes) -> None:
        self.doc = Document(body, "https://medium.com/p/x", scraped_at=SCRAPED_AT)
        self.state = StoryState()
        self.layers: list[dict[str, Any]] = []

    def stages(self) -> dict[str, Callable[[], object]]:
        doc = self.doc
        return {
            "tree": lambda: doc.tree,
            "meta, canonical, JSON-LD": lambda: (doc.meta, doc.canonical_link, doc.json_ld),
            "state JSON + reader": lambda: doc.apollo_state or doc.legacy_state,
            "story state (fields, text, Markdown)": self._story_state,
            "JSON-LD / markup / meta layers": self._layers,
            "DOM layer (what the state lacks)": self._dom,
            "links": self._links,
        }

    def _story_state(self) -> None:
        self.state = story_state(self.doc)

    def _layers(self) -> None:
        doc = self.doc
        self.layers = [json_ld_layer(doc)]
        for gives, layer in HTML_LAYERS:  # as parse_story: only when it can fill a field
            if not gives <= pick(self.state.fields, *self.layers).keys():
                self.layers.append(layer(doc))

    def _dom(self) -> None:
        wanted = dom_fields_wanted(pick(self.state.fields, *self.layers), self.state)
        if wanted:
            dom_layer(self.doc, wanted)

    def _links(self) -> None:
        merged = pick_paired(self.state.fields, *self.layers)
        story = build_story(self.doc, merged, html_url_candidates(self.doc, self.state))
        list(entity_links([story]))
        list(page_links(self.doc))


def breakdown(captures: list[tuple[str, bytes]], rounds: int) -> dict[str, float]:
    """CPU seconds of each stage (best of ``rounds`` per capture, summed) and of bare lxml."""
    best: dict[str, float] = {}
    for _, body in captures:
        page: dict[str, float] = {}
        for _ in range(rounds):
            start = time.process_time()
            lxml.html.fromstring(body)
            page["lxml"] = min(page.get("lxml", 1e9), time.process_time() - start)
            for name, stage in _Stages(body).stages().items():
                start = time.process_time()
                stage()
                page[name] = min(page.get(name, 1e9), time.process_time() - start)
        for name, seconds in page.items():
            best[name] = best.get(name, 0.0) + seconds
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="passes over all captures")
    parser.add_argument("--rounds", type=int, default=5, help="timed runs (best and median)")
    parser.add_argument("--breakdown", action="store_true", help="time each parse stage too")
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
    times = timed_rounds(args.rounds, args.repeat, parse_all, document_all, lxml_all)
    ours, shared, bare = (min(each) for each in times)
    ratios = round_ratios(times, 0, 2)
    pages = len(captures) * args.repeat
    megabytes = sum(len(body) for _, body in captures) * args.repeat / 1e6
    print(f"captures: {len(captures)} story pages, {megabytes / args.repeat:.2f} MB")
    print(f"passes: {args.repeat} x best of {args.rounds}")
    print(f"parse_page:         {ours:.3f} s  ({ours / pages * 1000:.2f} ms/page)")
    print(f"Document basics:    {shared:.3f} s  ({shared / pages * 1000:.2f} ms/page)")
    print(f"lxml.html.fromstring: {bare:.3f} s  ({bare / pages * 1000:.2f} ms/page)")
    print(f"ratio parse_page / lxml: {ours / bare:.2f}x (target <= 2.0x)")
    print(
        f"  the same ratio round by round: median {statistics.median(ratios):.2f}x"
        f" (range {ratios[0]:.2f}–{ratios[-1]:.2f}x over {len(ratios)} rounds)"
    )
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
    if args.breakdown:
        stages = breakdown(captures, args.rounds)
        bare_best = stages.pop("lxml")
        total = sum(stages.values()) / bare_best
        print(f"stages (best of {args.rounds} per capture) / lxml, total {total:.2f}x:")
        for name, seconds in stages.items():
            print(f"  {name:38s} {seconds / bare_best:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
