"""Our own tag-archive pages for the parser fixtures (``tests/fixtures/own/tag_archive/``).

    python -m topics_crawler.site.archive_fixtures  # rewrites each case's input.html and meta.json

Variants of the real 2026 day archive (``archive_tag_python_2026-09-10__…``): another tag
(``rust``) and date (2025-03-14), other ids and values, the payload's keys shuffled at every
level, epoch milliseconds as strings, a story whose ``totalClapCount`` is 0 beside
``recommends`` 12 (its claps are 0), a story cross-posted elsewhere (``webCanonicalUrl`` off
Medium, as on the real page: its URL is still rebuilt on Medium, the other is its
``canonical_url``), a publication on a custom domain; a day split
over two pages (``?page=2``); the month page a day without stories redirects to; the year
page and the archive's root. Rendered by the local site (:mod:`topics_crawler.site.day_archive`), so
the fixtures and the site's archive are one model. Deterministic: same code, same files.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

from topics_crawler.site.day_archive import ArchivePath, archive_answer
from topics_crawler.site.entities import (
    SiteAuthor,
    SitePublication,
    SiteStory,
    SiteTag,
    TopicRef,
    make_id,
    utc,
)
from topics_crawler.site.model import SiteContent

FOLDER = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "own" / "tag_archive"
RUST = TopicRef("rust", "Rust")
SCRAPED_AT = "2026-11-30T12:00:00Z"
#: Case name → the archive address it renders (the URL the page was fetched at).
CASES = {
    "rust_2025-03-14_day_page1": ArchivePath("rust", 2025, 3, 14),
    "rust_2025-03-14_day_page2": ArchivePath("rust", 2025, 3, 14, page=2),
    "rust_2025-03_month_after_redirect": ArchivePath("rust", 2025, 3),
    "rust_2025_year": ArchivePath("rust", 2025),
    "rust_archive_root": ArchivePath("rust"),
}
_PAYLOAD_RE = re.compile(r'window\["obvInit"\]\((.*)\) // \]\]>', re.DOTALL)


def rust_site() -> SiteContent:
    """Five stories on 2025-03-14, one on 2025-03-02 and one in 2023, tagged ``rust``."""
    site = SiteContent(now=utc(2026, 11, 30, 12), archive_page_size=3)
    for site_author in (
        SiteAuthor("ferris_writes", "Ferris Q. Crab", is_member=True),
        SiteAuthor("borrowchecker", "Bo Rowe"),
        SiteAuthor("unsafe_ana", "Ana Unsafe", is_member=True),
    ):
        site.add_author(site_author)
    site.add_publication(SitePublication("oxidize", "Oxidize Weekly", followers=18_204))
    site.add_publication(
        SitePublication("systems-notes", "Systems Notes", followers=7_311, domain="sysnotes.dev")
    )
    day = utc(2025, 3, 14, 0, 0)
    rows = [  # (slug, title, author, publication, hour, claps, voters, responses, locked)
        ("lifetimes-without-tears", "Lifetimes Without Tears", "ferris_writes", "oxidize",
         6, 1_904, 230, 12, True),
        ("async-rust-in-production", "Async Rust in Production: Two Years Later",
         "borrowchecker", "systems-notes", 9, 611, 88, 4, False),
        ("a-tiny-allocator", "A Tiny Allocator in 200 Lines", "unsafe_ana", None,
         13, 0, 12, 0, False),
        ("why-we-left-cpp", "Why We Left C++ (and What We Miss)", "borrowchecker", None,
         17, 342, 51, 27, True),
        ("pattern-matching-tricks", "Seven Pattern Matching Tricks", "ferris_writes",
         "oxidize", 21, 77, 19, 1, False),
    ]  # fmt: skip
    for slug, title, author, publication, hour, claps, voters, responses, locked in rows:
        site.add_story(
            SiteStory(
                slug, title, f"Notes on {title.lower()}", author,
                day.replace(hour=hour, minute=hour * 2), [f"{title}: the body."],
                publication=publication, claps=claps, voters=voters, responses=responses,
                tags=[RUST, TopicRef("programming", "Programming")], member_only=locked,
                updated_at=day.replace(hour=hour + 2),
            )
        )  # fmt: skip
    site.add_story(
        SiteStory("cargo-workspaces", "Cargo Workspaces, Explained", "Folders and features",
                  "unsafe_ana", utc(2025, 3, 2, 8), ["Workspaces."], claps=58, tags=[RUST])
    )  # fmt: skip
    site.add_story(
        SiteStory("rust-in-2023", "Rust in 2023", "A year in review", "ferris_writes",
                  utc(2023, 12, 30, 10), ["Review."], claps=12, tags=[RUST])
    )  # fmt: skip
    site.add_tag(SiteTag("rust", "Rust", story_count=98_117))
    return site


def shuffled(value: Any, rng: random.Random) -> Any:
    """``value`` with the keys of every object in another order (lists keep theirs)."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {key: shuffled(value[key], rng) for key in keys}
    if isinstance(value, list):
        return [shuffled(item, rng) for item in value]
    return value


def _cross_posted(payload: dict[str, Any]) -> None:
    """One story cross-posted elsewhere, as on the real page: ``webCanonicalUrl`` off Medium."""
    post = payload["references"]["Post"].get(_post_id("why-we-left-cpp"))
    if post is not None:
        post["webCanonicalUrl"] = "https://bo-rowe.example/why-we-left-cpp"


def _post_id(slug: str) -> str:
    return make_id("post", slug)


def render(site: SiteContent, address: ArchivePath, seed: int) -> str:
    """The page at ``address`` with its payload's keys shuffled (``seed``)."""
    answer = archive_answer(site, address)
    if answer.status != 200:
        raise ValueError(f"{address.path} answers {answer.status}")
    match = _PAYLOAD_RE.search(answer.html)
    assert match is not None
    payload = json.loads(match.group(1))
    _cross_posted(payload)
    text = json.dumps(shuffled(payload, random.Random(seed)), ensure_ascii=False)
    return answer.html[: match.start(1)] + text + answer.html[match.end(1) :]


def write_cases(folder: Path = FOLDER) -> list[Path]:
    """Write each case's ``input.html`` and ``meta.json``; the written folders."""
    site = rust_site()
    written = []
    for seed, (name, address) in enumerate(CASES.items()):
        case = folder / name
        case.mkdir(parents=True, exist_ok=True)
        (case / "input.html").write_text(render(site, address, seed), encoding="utf-8")
        url = "https://medium.com" + address.path
        url += f"?page={address.page}" if address.page > 1 else ""
        meta = {
            "url": url,
            "scraped_at": SCRAPED_AT,
            "made_by": "topics_crawler/site/archive_fixtures.py",
        }
        (case / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        written.append(case)
    return written


def main() -> int:
    for case in write_cases():
        print(f"wrote {case.relative_to(FOLDER.parents[2])}/input.html")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
