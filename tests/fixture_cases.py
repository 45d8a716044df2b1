"""Parser fixtures: saved input + ``meta.json`` (url, kind, frozen time) + ``expected.json``.

Two families live under ``tests/fixtures/``:

* ``real/<case>/`` — a third-party capture in the shared pages folder, named by
  ``meta.json["source"]``; only the expected output is stored here, never the page.
* ``own/<kind>/<case>/`` — pages we wrote (``input.html``/``input.json``/``input.xml``).

A capture saved as the bare JSON of a page's ``window.__APOLLO_STATE__`` (the 2022 tag
state) has ``"wrap": "apollo_state"`` in its ``meta.json``: it is parsed inside a
``<script>window.__APOLLO_STATE__ = …</script>`` page, the way the page carried it.

Regenerate expected files after a parser change, then review the diff::

    python -m tests.fixture_cases --regenerate [SUBSTRING]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from topics_crawler.items import item_to_dict
from topics_crawler.pages import PageResult, parse_page

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PAGES_ENV = "TOPICS_CRAWLER_PAGES"


def real_pages_dir() -> Path:
    """Folder of the real Medium captures (``TOPICS_CRAWLER_PAGES`` overrides)."""
    return Path(os.environ.get(PAGES_ENV) or ROOT.parent / "shared" / "medium-pages")


@dataclass
class Case:
    """One fixture case."""

    name: str
    folder: Path
    meta: dict[str, Any]

    @property
    def is_real(self) -> bool:
        return "source" in self.meta

    def input_path(self) -> Path:
        if self.is_real:
            return real_pages_dir() / self.meta["source"]
        return next(self.folder.glob("input.*"))

    def input_bytes(self) -> bytes:
        body = self.input_path().read_bytes()
        if self.meta.get("wrap") == "apollo_state":
            return (
                b"<html><body><script>window.__APOLLO_STATE__ = "
                + body
                + b"</script></body></html>"
            )
        return body

    def run(self) -> PageResult:
        return parse_page(
            self.input_bytes(),
            self.meta["url"],
            kind=self.meta.get("kind"),
            scraped_at=datetime.fromisoformat(self.meta["scraped_at"].replace("Z", "+00:00")),
        )

    def expected(self) -> dict[str, Any]:
        return json.loads((self.folder / "expected.json").read_text(encoding="utf-8"))


def result_to_json(result: PageResult) -> dict[str, Any]:
    """The stored form of a parse result (what ``expected.json`` holds; ``cursors`` only
    when the page gives one)."""
    stored = {
        "kind": result.kind,
        "items": [item_to_dict(item) for item in result.items],
        "links": [{"kind": ln.kind, "key": ln.key, "url": ln.url} for ln in result.links],
        "errors": result.errors,
        "missing": result.missing,
    }
    if result.cursors:
        stored["cursors"] = [asdict(cursor) for cursor in result.cursors]
    return stored


def discover(family: str) -> list[Case]:
    """Every case of ``family`` (``real`` or ``own``), sorted by name."""
    cases = []
    for meta_path in sorted((FIXTURES / family).rglob("meta.json")):
        folder = meta_path.parent
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        cases.append(Case(str(folder.relative_to(FIXTURES)), folder, meta))
    return cases


def diff(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Human-readable differences, one line per item field / list."""
    lines = []
    for key in ("kind", "errors", "missing", "links", "cursors"):
        if expected.get(key) != actual.get(key):
            lines.append(f"{key}: expected {expected.get(key)!r}, got {actual.get(key)!r}")
    exp_items, act_items = expected.get("items", []), actual.get("items", [])
    if len(exp_items) != len(act_items):
        lines.append(f"item count: expected {len(exp_items)}, got {len(act_items)}")
    for index, (exp, act) in enumerate(zip(exp_items, act_items, strict=False)):
        for field in sorted(set(exp) | set(act)):
            if exp.get(field) != act.get(field):
                label = f"items[{index}] ({exp.get('item_type')}).{field}"
                lines.append(f"{label}: expected {exp.get(field)!r}, got {act.get(field)!r}")
    return lines


def regenerate(substring: str = "") -> int:
    """Rewrite ``expected.json`` of every case whose name contains ``substring``."""
    count = 0
    for case in discover("real") + discover("own"):
        if substring not in case.name:
            continue
        if case.is_real and not case.input_path().exists():
            print(f"skip {case.name}: {case.input_path()} is absent", file=sys.stderr)
            continue
        data = result_to_json(case.run())
        text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
        (case.folder / "expected.json").write_text(text, encoding="utf-8")
        count += 1
        print(f"wrote {case.name}/expected.json")
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regenerate", action="store_true", help="rewrite expected.json files")
    parser.add_argument("substring", nargs="?", default="", help="only cases whose name has it")
    args = parser.parse_args(argv)
    if not args.regenerate:
        for case in discover("real") + discover("own"):
            print(case.name)
        return 0
    return 0 if regenerate(args.substring) else 1


if __name__ == "__main__":
    raise SystemExit(main())
