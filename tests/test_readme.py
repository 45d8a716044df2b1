"""The README holds: every command in its ``bash`` and ``python`` blocks is run here, against
the local site, or named with the test or CI step that runs it.

Commands are run as written, from a scratch folder, with ``.venv/bin/<tool>`` meaning this
interpreter's and ``MEDIUM_BASE_URL`` pointing at a local site that also has an ``llm`` tag;
politeness delays are off (a settings module importing the project's).
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from topics_crawler.site.model import SiteContent
from topics_crawler.site.server import SiteServer
from topics_crawler.site.topic_graph import topic_graph_site

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: Commands run by another test or by CI, and where.
COVERED_ELSEWHERE = {
    r"^make demo$": "tests/test_site_demo.py::test_the_demo_shows_history_two_tags_a_report_and"
    "_lines_that_run; .ci/run",
    r"^make test$": ".ci/run",
    r"^\.venv/bin/pytest ": ".ci/run (make test runs every test)",
    r"^pip install ": "tests/test_install.py::test_each_extra_installs_on_its_own",
    r"^make lock$": "tests/test_readme.py::test_make_lock_reproduces_the_committed_locks",
    r"^make (fixtures|bench|fuzz)$": "tooling: rewrites fixtures / runs benchmarks and the full"
    " fuzz run (see BENCHMARKS.md)",
    r"^export SCRAPYD_": "tests/test_scrapyd.py (credentials from the environment)",
    r"^\.venv/bin/scrapyd-deploy ": "tests/test_scrapyd.py::egg",
    r"^curl .*schedule\.json": "tests/test_scrapyd.py (schedule.json with arguments)",
    r"^\.venv/bin/scrapyd-client ": "tests/test_scrapyd.py (ScrapydClient)",
    r"REDIS_URL=": "tests/test_distributed.py (workers on one real Redis)",
    r"^MEDIUM_SID=": "tests/test_access.py::test_a_crawl_takes_one_kind_and_a_session_shows_"
    "members_the_whole_text (a member's session on the local site)",
    r"^\.venv/bin/python -m topics_crawler extract ": "tests/test_cli_extract.py",
    r"^topics-crawler (demo|site|crawl|scrapy)\b": "tests/test_installed.py (each line run as"
    " written, from a wheel in a clean virtualenv)",
}
#: Commands this module runs (everything else in the README must be covered above).
RUN_HERE = (
    r"^\.venv/bin/scrapy (crawl|parse|shell) ",
    r"^\.venv/bin/python -m topics_crawler (report|markdown) ",
    r"^\.venv/bin/python -c ",  # the dataset section's DuckDB / polars / datasets lines
    r"^<python block>",
)
SETTINGS_MODULE = "readme_settings"


def readme_commands(text: str) -> list[str]:
    """Each command of the README's ``bash`` blocks (comments dropped, continuations
    joined), and each ``python`` block as one ``<python block>`` command."""
    commands = []
    for language, body in re.findall(r"^```(\w+)\n(.*?)^```", text, flags=re.S | re.M):
        if language == "python":
            commands.append("<python block>\n" + body)
            continue
        if language != "bash":
            continue
        for line in body.replace("\\\n", " ").splitlines():
            command = re.sub(r"\s+#\s.*$", "", line).strip()
            if command and not command.startswith("#"):
                commands.append(re.sub(r"\s+", " ", command))
    return commands


COMMANDS = readme_commands(README.read_text("utf-8"))
RUNNABLE = [c for c in COMMANDS if any(re.search(p, c) for p in RUN_HERE)]


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


def test_every_readme_command_is_run_or_covered() -> None:
    assert len(COMMANDS) > 20
    uncovered = [
        c
        for c in COMMANDS
        if c not in RUNNABLE and not any(re.search(p, c) for p in COVERED_ELSEWHERE)
    ]
    assert uncovered == [], "add these README commands to a test"
    for where in COVERED_ELSEWHERE.values():
        for reference in re.findall(r"tests/\w+\.py(?:::\w+)?", where):
            path, _, name = reference.partition("::")
            assert (ROOT / path).is_file(), reference
            assert not name or f"def {name}(" in (ROOT / path).read_text("utf-8"), reference
    assert "make demo" in (ROOT / ".ci/run").read_text("utf-8")


def readme_site() -> SiteContent:
    """The default site with its related-tag graph, a 60-story archive, the README's ``llm``
    tag and ``@ev``."""
    content = copy.deepcopy(topic_graph_site().with_archive("distributed-training", 60, seed=1))
    learning = content.tags["machine-learning"]
    content.tags["llm"] = dataclasses.replace(copy.deepcopy(learning), slug="llm", name="LLM")
    someone = next(iter(content.authors.values()))
    content.authors["ev"] = dataclasses.replace(copy.deepcopy(someone), username="ev", name="Ev")
    return content


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    folder = tmp_path_factory.mktemp("readme")
    (folder / f"{SETTINGS_MODULE}.py").write_text(
        "from topics_crawler.settings import *  # noqa: F403\n"
        "AUTOTHROTTLE_ENABLED = False\nLOG_LEVEL = 'WARNING'\n",
        "utf-8",
    )
    with SiteServer(readme_site()) as site:
        env = {
            **os.environ,
            "MEDIUM_BASE_URL": site.base_url,
            "SCRAPY_SETTINGS_MODULE": SETTINGS_MODULE,
            "PYTHONPATH": f"{folder}{os.pathsep}{ROOT}",
            "HF_DATASETS_OFFLINE": "1",  # a local dataset; nothing to download
            "HF_HUB_OFFLINE": "1",
        }
        yield folder, env


def as_run_here(command: str) -> list[str]:
    if command.startswith("<python block>"):
        return [sys.executable, "-c", command.split("\n", 1)[1]]
    tools = {"scrapy": f"{shlex.quote(sys.executable)} -m scrapy", "python": sys.executable}
    command = re.sub(r"\.venv/bin/(scrapy|python)\b", lambda m: tools[m.group(1)], command)
    return ["bash", "-c", command]


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("command", RUNNABLE, ids=[c[:70] for c in RUNNABLE])
def test_readme_command_runs(command: str, scratch: tuple[Path, dict[str, str]]) -> None:
    folder, env = scratch
    process = subprocess.run(
        as_run_here(command), cwd=folder, env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert process.returncode == 0, f"{command}\n{process.stderr[-3000:]}"
    for output in re.findall(r"-[oO] (\S+?)(?::\w+)?(?:\s|$)", command):
        path = folder / output
        assert path.is_file(), f"{command}: no {output}"
        assert path.stat().st_size > 0, f"{command}: empty {output}"


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
