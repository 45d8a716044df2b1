"""``pip install .`` and each extra on its own, in a clean virtualenv, as a new user would.

Versions come from the lock (``--constraint requirements.txt``), so this checks what the
declared dependencies pull in, not what PyPI released today. Needs the package registry.
"""

from __future__ import annotations

import subprocess
import venv
from pathlib import Path

import pytest

from tests.services import building_in_the_project

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FIXTURE_STORY = ROOT / "tests/fixtures/own/story/locked_preview_2025/input.html"


class CleanVenv:
    def __init__(self, path: Path) -> None:
        venv.create(path, with_pip=True)
        self.bin = path / "bin"

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / args[0]), *args[1:]], cwd=ROOT, capture_output=True, text=True,
            timeout=timeout, check=False,
        )  # fmt: skip

    def install(self, target: str) -> None:
        with building_in_the_project():
            process = self.run(
                "python", "-m", "pip", "install", "--quiet", "--constraint", "requirements.txt",
                target,
            )  # fmt: skip
        assert process.returncode == 0, process.stderr[-3000:]

    def importable(self, *modules: str) -> dict[str, bool]:
        code = (
            "import importlib.util, sys\n"
            "print(*(bool(importlib.util.find_spec(m)) for m in sys.argv[1:]))"
        )
        process = self.run("python", "-c", code, *modules)
        assert process.returncode == 0, process.stderr
        return dict(zip(modules, (word == "True" for word in process.stdout.split()), strict=True))


@pytest.fixture(scope="module")
def clean_venv(tmp_path_factory: pytest.TempPathFactory) -> CleanVenv:
    """The base install; tests run in file order, each extra added on top by its test."""
    env = CleanVenv(tmp_path_factory.mktemp("venv") / "venv")
    env.install(".")
    return env


def test_the_base_install_crawls_and_extracts_with_no_extra(clean_venv: CleanVenv) -> None:
    modules = clean_venv.importable("scrapy", "pyarrow", "scrapy_playwright", "matplotlib", "redis")
    assert modules == {
        "scrapy": True, "pyarrow": True, "scrapy_playwright": True,
        "matplotlib": False, "redis": False,
    }  # fmt: skip
    for tool in ("pytest", "mypy", "ruff", "scrapyd"):
        assert not (clean_venv.bin / tool).exists(), f"{tool} came with the base install"
    extract = clean_venv.run(
        "topics-crawler", "extract", str(FIXTURE_STORY),
        "--url", "https://ledger.example.com/the-quiet-ledger-a1b2c3d4e5f6",
    )  # fmt: skip
    assert extract.returncode == 0, extract.stderr
    assert '"story_id": "a1b2c3d4e5f6"' in extract.stdout
    wrong = clean_venv.run("topics-crawler", "no-such-command")
    assert wrong.returncode == 2
    assert wrong.stderr.startswith("topics-crawler: error:"), wrong.stderr
    spiders = clean_venv.run("scrapy", "list")
    assert spiders.stdout.split() == ["topics"], spiders.stderr


def test_the_report_without_its_extra_says_how_to_get_it(clean_venv: CleanVenv) -> None:
    process = clean_venv.run("topics-crawler", "report", str(ROOT))
    assert process.returncode == 2
    assert "pip install 'topics_crawler[report]'" in process.stderr


@pytest.mark.parametrize(
    ("extra", "modules"),
    [
        ("redis", ("redis", "scrapy_redis")),
        ("report", ("matplotlib", "duckdb", "pandas")),
        ("deploy", ("scrapyd_client",)),
        ("images", ("PIL",)),
    ],
)
def test_each_extra_installs_on_its_own(
    clean_venv: CleanVenv, extra: str, modules: tuple[str, ...]
) -> None:
    clean_venv.install(f".[{extra}]")
    assert all(clean_venv.importable(*modules).values())
