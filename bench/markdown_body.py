"""What Markdown bodies cost: building and rendering them vs the whole story parse and lxml.

Run with ``python -m bench.markdown_body [--repeat N] [--rounds R]``. Over every real
story capture, in one process, interleaved round by round (best of ``rounds``, CPU time
of this process, so a busy shared machine disturbs the figures less): bare
``lxml.html.fromstring``, the whole ``parse_page(kind="story")`` (which includes the
Markdown), and the Markdown work alone on pages already decoded (paragraph model from the
state or the DOM, then rendering). The ratios are the Markdown's share of the parse.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import lxml.html

from bench.story_parse import SCRAPED_AT, load_captures
from tests.fixture_cases import real_pages_dir
from topics_crawler.pages import Document, parse_page
from topics_crawler.pages._markdown_dom import dom_blocks
from topics_crawler.pages._story_html import app_link_post_id
from topics_crawler.pages._story_state import find_apollo_post
from topics_crawler.pages.markdown import Block, apollo_blocks, legacy_blocks, render_markdown
from topics_crawler.urls import post_id_from_url


def markdown_work(doc: Document) -> Callable[[], list[Block]]:
    """The block building a story parse does for ``doc``: state first, else the DOM."""
    apollo = doc.apollo_state
    if apollo is not None:
        post = find_apollo_post(apollo, app_link_post_id(doc) or post_id_from_url(doc.url))
        body = post.dig("content", "bodyModel") if post is not None else None
        if body is not None:
            return lambda: apollo_blocks(body)
    legacy = doc.legacy_state
    legacy_body = legacy.root.dig("value", "content", "bodyModel") if legacy else None
    if legacy_body is not None:
        return lambda: legacy_blocks(legacy_body)
    tree, url, graf = doc.tree, doc.url, doc.contains("graf")
    return lambda: dom_blocks(tree, url, graf=graf)


def best_cpu(rounds: int, repeat: int, *works: Callable[[], None]) -> list[float]:
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
    parser.add_argument("--repeat", type=int, default=5, help="passes over all captures")
    parser.add_argument("--rounds", type=int, default=7, help="timed runs; the best counts")
    args = parser.parse_args(argv)
    captures = load_captures(real_pages_dir())
    if not captures:
        print(f"no story captures in {real_pages_dir()}", file=sys.stderr)
        return 1
    url = "https://medium.com/p/x"
    works = [markdown_work(Document(body, url, scraped_at=SCRAPED_AT)) for _, body in captures]

    def trees() -> None:
        for _, body in captures:
            lxml.html.fromstring(body)

    def parses() -> None:
        for _, body in captures:
            parse_page(body, url, kind="story", scraped_at=SCRAPED_AT)

    def markdown() -> None:
        for work in works:
            render_markdown(work())

    lxml_s, parse_s, markdown_s = best_cpu(args.rounds, args.repeat, trees, parses, markdown)
    pages = len(captures) * args.repeat
    print(f"captures: {len(captures)} story pages; {args.repeat} passes, best of {args.rounds}")
    for name, seconds in (("lxml", lxml_s), ("parse_page", parse_s), ("markdown", markdown_s)):
        print(f"{name:12s} {seconds:.3f} s CPU  ({seconds / pages * 1000:.2f} ms/page)")
    print(f"markdown / parse_page: {markdown_s / parse_s:.2f}")
    print(f"markdown / lxml:       {markdown_s / lxml_s:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
