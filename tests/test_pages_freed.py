"""A parsed page is freed as soon as the parse is done, without the cyclic garbage collector.

A page whose state held a bound ``Document.error`` (page → state → page) or whose state
held nodes of itself (state → root node → state) was a reference cycle: its tree and JSON
lived on until a collection found them, and every collection in between walked them
again — about 15% of a story parse. Checked on every fixture of our own (every page
kind, with and without state, broken state included) and every real capture.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from tests.fixture_cases import Case, discover
from topics_crawler.pages import PARSERS, Document

CASES = [case for case in discover("own") if case.meta.get("kind") in PARSERS]
REAL_CASES = [case for case in discover("real") if case.meta.get("kind") in PARSERS]


@pytest.fixture
def no_cyclic_gc() -> Iterator[None]:
    """No collection runs during the test; what it allocates stays in the youngest
    generation, so ``gc.collect(0)`` afterwards counts exactly its own garbage."""
    gc.collect(0)
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.usefixtures("no_cyclic_gc")
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_parsed_page_leaves_no_reference_cycle(case: Case) -> None:
    doc = Document(case.input_bytes(), case.meta["url"])
    result = PARSERS[case.meta["kind"]](doc)
    freed = weakref.ref(doc)
    del doc, result
    assert freed() is None, "the Document outlived its parse (a reference cycle holds it)"
    assert gc.collect(0) == 0, "the parse left objects only the cyclic collector frees"


@pytest.mark.real_pages
@pytest.mark.usefixtures("no_cyclic_gc")
@pytest.mark.parametrize("case", REAL_CASES, ids=[case.name for case in REAL_CASES])
def test_parsed_capture_leaves_no_reference_cycle(case: Case) -> None:
    if not case.input_path().exists():
        pytest.skip(f"capture not found: {case.input_path()} (set TOPICS_CRAWLER_PAGES)")
    test_parsed_page_leaves_no_reference_cycle(case)


def test_the_cases_cover_pages_with_state() -> None:
    kinds = {case.meta["kind"] for case in CASES}
    assert {"story", "tag", "author", "publication"} <= kinds
