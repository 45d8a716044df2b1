"""The README holds: every command of its ``bash`` and ``python`` blocks is run here against
the local site and what it wrote is read and checked, or it is named with why it cannot run
here and the test or CI step that runs it (the tables are in ``tests/readme_checks.py``).

Commands run in README order from one scratch folder, against one local site
(:func:`~topics_crawler.site.topic_graph.topic_graph_site`, what ``python -m
topics_crawler.site --topic-graph`` serves): crawls and ``python -m topics_crawler`` in this
process, the rest as processes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.readme_checks import (
    CHECKS,
    README,
    ROOT,
    SKIPPED,
    example_of,
    readme_commands,
    run,
    skip_reason,
)
from tests.readme_outputs import Outcome
from topics_crawler.site.server import SiteServer
from topics_crawler.site.topic_graph import topic_graph_site

COMMANDS = readme_commands(README.read_text("utf-8"))
RUNNABLE = [c for c in COMMANDS if example_of(c) is not None]


def code_map(text: str) -> set[str]:
    """The package folders and root modules the README's code map names (``items/``,
    ``pages/state/``, ``settings.py``)."""
    section = text.split("### How the code is organised", 1)[1]
    block = re.search(r"^```text\ntopics_crawler/\n(.*?)^```", section, flags=re.S | re.M)
    assert block is not None, "the code map is a text block starting with topics_crawler/"
    return set(re.findall(r"^  (\S+(?:/|\.py))\s", block.group(1), flags=re.M))


def test_the_code_map_names_every_package_folder_and_root_module() -> None:
    package = ROOT / "topics_crawler"
    folders = {
        f"{path.parent.relative_to(package).as_posix()}/"
        for path in package.rglob("__init__.py")
        if path.parent != package
    }
    modules = {path.name for path in package.glob("*.py") if path.name != "__init__.py"}
    assert code_map(README.read_text("utf-8")) == folders | modules


def test_the_code_map_check_sees_a_missing_folder() -> None:
    text = "### How the code is organised\n```text\ntopics_crawler/\n  items/  x\n```\n"
    assert code_map(text) == {"items/"}


def test_every_readme_command_is_checked_or_skipped() -> None:
    assert len(COMMANDS) > 20
    unknown = [c for c in COMMANDS if example_of(c) is None and skip_reason(c) is None]
    assert unknown == [], "check these README commands in tests/readme_checks.py (or skip them)"
    both = [c for c in COMMANDS if example_of(c) is not None and skip_reason(c) is not None]
    assert both == []
    stale = [e.pattern for e in CHECKS if not any(re.search(e.pattern, c) for c in COMMANDS)]
    assert stale == [], "checks of commands the README no longer has"
    for where in SKIPPED.values():
        for reference in re.findall(r"tests/\w+\.py(?:::\w+)?", where):
            path, _, name = reference.partition("::")
            assert (ROOT / path).is_file(), reference
            assert not name or f"def {name}(" in (ROOT / path).read_text("utf-8"), reference
    assert "make demo" in (ROOT / ".ci/run").read_text("utf-8")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome | str]]:
    """Each checked command's outcome, or why its check failed (run in README order: a
    command may read what an earlier one wrote)."""
    folder = tmp_path_factory.mktemp("readme")
    results: dict[str, Outcome | str] = {}
    with SiteServer(topic_graph_site()) as site:
        for command in RUNNABLE:
            example = example_of(command)
            assert example is not None
            if example.prepare is not None:
                example.prepare(folder, site.base_url)
            logged = len(site.requests)
            outcome = run(command, folder, site.base_url)
            outcome.requests = site.requests[logged:]
            try:
                assert outcome.returncode == 0, f"exit {outcome.returncode}"
                example.check(outcome)
            except (AssertionError, OSError, KeyError, ValueError) as exc:
                results[command] = (
                    f"{command}\n{type(exc).__name__}: {exc}\n{outcome.stderr[-3000:]}"
                )
                continue
            results[command] = outcome
        yield results


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("command", RUNNABLE, ids=[c[:70] for c in RUNNABLE])
def test_readme_command_writes_what_it_says(
    command: str, outcomes: dict[str, Outcome | str]
) -> None:
    outcome = outcomes[command]
    if isinstance(outcome, str):
        pytest.fail(outcome, pytrace=False)


@pytest.mark.integration
def test_make_lock_reproduces_the_committed_locks(tmp_path: Path) -> None:
    """``make lock`` on a copy of the project gives byte for byte the committed locks."""
    if shutil.which("make") is None:
        pytest.skip("no make")
    for name in ("Makefile", "pyproject.toml", "requirements.txt", "requirements-runtime.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    process = subprocess.run(
        ["make", "--old-file=venv", "lock", f"VENV={sys.prefix}"], cwd=tmp_path,
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert process.returncode == 0, process.stderr[-3000:]
    for name in ("requirements.txt", "requirements-runtime.txt"):
        assert (tmp_path / name).read_text("utf-8") == (ROOT / name).read_text("utf-8"), name
