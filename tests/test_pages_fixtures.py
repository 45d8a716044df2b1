"""Every parser fixture (real captures and our own pages) parses to its expected JSON."""

from __future__ import annotations

import pytest

from tests.fixture_cases import Case, diff, discover, real_pages_dir, result_to_json

REAL_CASES = discover("real")
OWN_CASES = discover("own")


@pytest.mark.real_pages
@pytest.mark.parametrize("case", REAL_CASES, ids=[c.name for c in REAL_CASES])
def test_real_capture(case: Case) -> None:
    if not case.input_path().exists():
        pytest.skip(
            f"real Medium captures not found at {real_pages_dir()} "
            "(set TOPICS_CRAWLER_PAGES to the medium-pages folder)"
        )
    problems = diff(case.expected(), result_to_json(case.run()))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", OWN_CASES, ids=[c.name for c in OWN_CASES])
def test_own_fixture(case: Case) -> None:
    problems = diff(case.expected(), result_to_json(case.run()))
    assert not problems, "\n".join(problems)
