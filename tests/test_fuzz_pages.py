"""Parser fuzzing: seeded mutations of real captures and our own pages never crash ``parse_page``.

The harness is :mod:`tests.fuzz`. Every run fuzzes two corpora: ``all`` (our own
pages plus the real captures when present) and ``own`` (our pages alone: what a
new user's clone has). A fast subset runs in every test run; the ``slow`` seed
matrix runs 5,000 pages for each seed of ``TOPICS_CRAWLER_FUZZ_SEEDS`` (default:
two seeds) and corpus. The full 10 seeds × 10,000 pages is ``make fuzz``
(``bench/fuzz_pages.py``), reported in BENCHMARKS.md.
"""

from __future__ import annotations

import json
import os
import random

import pytest

from tests.fuzz import (
    MUTATIONS,
    SEED,
    Corpus,
    FuzzReport,
    problems,
    run_fuzz,
    source_cases,
    swap_state_types,
    wrong_types,
)

FAST_PAGES = 400
SLOW_PAGES = 5_000
SEEDS_ENV = "TOPICS_CRAWLER_FUZZ_SEEDS"
#: The two corpora: ``all`` reads the captures (``real_pages``: CI runs it again without
#: them, where it is the ``own`` corpus and skips).
CORPUS_PARAMS = [pytest.param("all", marks=pytest.mark.real_pages), "own"]


def slow_seeds() -> list[int]:
    """Seeds of the slow matrix: ``TOPICS_CRAWLER_FUZZ_SEEDS=1,2,3`` or two defaults."""
    raw = os.environ.get(SEEDS_ENV, "")
    return [int(part) for part in raw.split(",") if part.strip()] or [SEED + 1, SEED + 2]


def skip_duplicate(corpus: Corpus) -> None:
    """Without captures the ``all`` corpus is the ``own`` one: fuzz it once."""
    if corpus == "all" and len(source_cases("all")) == len(source_cases("own")):
        pytest.skip("no real captures: the 'all' corpus is the 'own' corpus")


def assert_clean(report: FuzzReport) -> None:
    found = problems(report)
    assert not found, report.describe(found)


def test_mutations_change_pages_and_are_reproducible() -> None:
    data = (
        b'<html><head><script>window.__APOLLO_STATE__ = {"Post:1":{"title":"T","n":3}}'
        b"</script></head><body><p>x</p></body></html>"
    )
    for name, mutation in MUTATIONS.items():
        first = mutation(random.Random(7), data)
        assert first == mutation(random.Random(7), data), name
        assert first != data, name
    typed = wrong_types(random.Random(1), data)
    assert b'"title":"T"' not in typed or b'"n":3' not in typed


def test_state_swaps_happen_in_place_inside_the_state() -> None:
    state = {"ROOT_QUERY": {"a": {"__ref": "Post:1"}}, "Post:1": {"title": "T", "tags": ["x"]}}
    page = f"<html><script>window.__APOLLO_STATE__ = {json.dumps(state)}</script></html>"
    for seed in range(20):
        swapped = swap_state_types(random.Random(seed), page.encode()).decode()
        assert swapped.startswith("<html><script>window.__APOLLO_STATE__ = ")
        assert swapped.endswith("</script></html>")
        body = swapped.split(" = ", 1)[1].rsplit("</script>", 1)[0]
        assert json.loads(body) != state  # still JSON, with other types in it


@pytest.mark.parametrize("corpus", CORPUS_PARAMS)
def test_fast_fuzz_finds_no_problem(corpus: Corpus) -> None:
    skip_duplicate(corpus)
    report = run_fuzz(FAST_PAGES, SEED, corpus)
    assert report.pages == FAST_PAGES
    assert_clean(report)


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPUS_PARAMS)
@pytest.mark.parametrize("seed", slow_seeds())
def test_fuzz_seed_matrix_finds_no_problem(seed: int, corpus: Corpus) -> None:
    skip_duplicate(corpus)
    report = run_fuzz(SLOW_PAGES, seed, corpus)
    assert report.pages == SLOW_PAGES
    assert_clean(report)
