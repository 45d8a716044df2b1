"""Facts right on the 2026 pages: a checkout's parsers against the hand-checked expected JSON.

    python -m bench.page_facts                   # this checkout's parsers
    python bench/page_facts.py --code /tmp/main  # another checkout's parsers, e.g. one made
                                                 # by ``git archive main | tar -x -C /tmp/main``

The expected JSON is this checkout's (``tests/fixtures/<case>/expected.json``, hand-checked);
``--code`` only changes which ``topics_crawler`` parses the inputs.

**A fact** is one value an expected item states: each non-empty scalar field (``item_type``
and ``scraped_at`` aside), each element of a list field (a related tag, a story's tag),
each ``(section, story id)`` pair, each record of ``who_to_follow`` / ``top_writers`` /
``subtopics``, and each link ``(kind, key)``; a page whose expected result is "no items"
has one fact, its error. An expected item is matched to the parsed item of the same type and
identity (``story_id``; ``author_id`` else ``username``; ``publication_id`` else ``slug``;
``tag``). A fact is **right** when the parsed item states the same value; facts the parser
states beyond the expected ones are counted apart (``extra``): a wrong value is a miss and
an extra.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
#: The 2026 cases: the real tag page and our variants of each 2026 shape.
CASES = (
    "real/tag_python_2026",
    "own/tag/rust-2026",
    "own/tag/webassembly-2026-refs-only",
    "own/tag/kubernetes-2026-entities",
    "own/publication/oxidized-2026-id-only-posts",
    "own/story/embedded-rust-2026-cross-post",
    "own/story/towardsdatascience-2026-left-medium",
)
_SKIPPED = frozenset({"item_type", "scraped_at"})
_IDENTITY = {
    "story": ("story_id",),
    "author": ("author_id", "username"),
    "publication": ("publication_id", "slug"),
    "tag_page": ("tag",),
}
Fact = tuple[Any, ...]


def pages_dir() -> Path:
    import os

    return Path(os.environ.get("TOPICS_CRAWLER_PAGES") or ROOT.parent / "shared" / "medium-pages")


def identity(row: dict[str, Any]) -> tuple[str, str]:
    for name in _IDENTITY.get(row["item_type"], ()):
        if row.get(name):
            return row["item_type"], str(row[name])
    return row["item_type"], ""


def facts_of(result: dict[str, Any]) -> set[Fact]:
    """Every fact a stored parse result states (see the module docstring)."""
    found: set[Fact] = set()
    for row in result["items"]:
        key = identity(row)
        for name, value in row.items():
            if name in _SKIPPED or value in (None, "", [], {}):
                continue
            if isinstance(value, dict):
                found |= {
                    (key, name, section, sid) for section, ids in value.items() for sid in ids
                }
            elif isinstance(value, list):
                found |= {(key, name, json.dumps(v, sort_keys=True)) for v in value}
            else:
                found.add((key, name, value))
    found |= {("link", link["kind"], link["key"]) for link in result["links"]}
    if not result["items"]:
        found |= {("error", error) for error in result["errors"]}
    return found


def parse(case: Path) -> dict[str, Any]:
    """The case's input parsed by the ``topics_crawler`` on ``sys.path``, stored form."""
    from topics_crawler.items import item_to_dict
    from topics_crawler.pages import parse_page

    meta = json.loads((case / "meta.json").read_text(encoding="utf-8"))
    source = pages_dir() / meta["source"] if "source" in meta else next(case.glob("input.*"))
    result = parse_page(
        source.read_bytes(),
        meta["url"],
        kind=meta.get("kind"),
        scraped_at=datetime.fromisoformat(meta["scraped_at"].replace("Z", "+00:00")),
    )
    return {
        "items": [item_to_dict(item) for item in result.items],
        "links": [{"kind": ln.kind, "key": ln.key} for ln in result.links],
        "errors": result.errors,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, help="checkout whose topics_crawler parses")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.code.resolve() if args.code else ROOT))
    total = right_total = 0
    for name in CASES:
        folder = FIXTURES / name
        expected = facts_of(json.loads((folder / "expected.json").read_text(encoding="utf-8")))
        try:
            actual = facts_of(parse(folder))
        except FileNotFoundError as exc:
            print(f"{name}: skipped ({exc.filename} is absent)")
            continue
        right = len(expected & actual)
        total += len(expected)
        right_total += right
        extra = len(actual - expected)
        print(f"{name}: {right}/{len(expected)} facts right ({right / len(expected):.0%}), "
              f"{extra} extra")  # fmt: skip
    if total:
        print(f"all: {right_total}/{total} facts right ({right_total / total:.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
