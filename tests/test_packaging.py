"""pyproject.toml, the locks and the installed environment agree; private library names are pinned.

requirements.txt is ``make lock``'s output: every pin must be needed by a requirement
in pyproject.toml (through installed package metadata), every requirement pinned to a
version it accepts, and requirements-runtime.txt the same for ``[project] dependencies``
alone, at the same versions.
"""

from __future__ import annotations

import ast
import importlib.metadata
import inspect
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from topics_crawler.site.server import SiteView

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
NAME = canonicalize_name(PROJECT["name"])


def read_lock(path: Path) -> dict[str, str]:
    """``{name: version}`` of the pins that apply to this interpreter."""
    pins: dict[str, str] = {}
    for raw in path.read_text("utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        (specifier,) = requirement.specifier
        assert specifier.operator == "==", f"{path.name}: {line!r} is not an exact pin"
        pins[canonicalize_name(requirement.name)] = specifier.version
    return pins


def declared(extras: list[str]) -> list[Requirement]:
    """The project's requirements with ``extras``, the self-reference expanded."""
    wanted, seen, found = list(extras), set(), [Requirement(r) for r in PROJECT["dependencies"]]
    while wanted:
        extra = wanted.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for text in PROJECT["optional-dependencies"][extra]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == NAME:
                wanted.extend(requirement.extras)
            else:
                found.append(requirement)
    return found


def applies(requirement: Requirement, extras: set[str]) -> bool:
    if requirement.marker is None:
        return True
    environments = [{**default_environment(), "extra": e} for e in extras or {""}]
    return any(requirement.marker.evaluate(env) for env in environments)


def closure(roots: list[Requirement]) -> set[str]:
    """Every distribution the roots need, following installed metadata."""
    needed: set[str] = set()
    todo = [(r, set(r.extras)) for r in roots if applies(r, set())]
    while todo:
        requirement, extras = todo.pop()
        name = canonicalize_name(requirement.name)
        if name in needed and not extras:
            continue
        needed.add(name)
        for text in importlib.metadata.requires(name) or []:
            sub = Requirement(text)
            if applies(sub, extras):
                todo.append((sub, set(sub.extras)))
    return needed


ALL_EXTRAS = sorted(PROJECT["optional-dependencies"])


def test_every_requirement_is_pinned_to_a_version_it_accepts() -> None:
    pins = read_lock(ROOT / "requirements.txt")
    for requirement in declared(ALL_EXTRAS):
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} is not in requirements.txt: run make lock"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"requirements.txt pins {name}=={pins[name]}, pyproject.toml wants {requirement}:"
            " run make lock"
        )


def test_the_lock_pins_exactly_what_pyproject_needs() -> None:
    pins = set(read_lock(ROOT / "requirements.txt"))
    needed = closure(declared(ALL_EXTRAS))
    assert pins - needed == set(), "pinned but needed by nothing in pyproject.toml"
    assert needed - pins == set(), "needed but not pinned: run make lock"


def test_the_runtime_lock_is_the_crawl_subset_at_the_same_versions() -> None:
    everything = read_lock(ROOT / "requirements.txt")
    runtime = read_lock(ROOT / "requirements-runtime.txt")
    assert set(runtime) == closure(declared([]))
    assert {n: everything[n] for n in runtime} == runtime
    for tool in ("pytest", "mypy", "ruff", "scrapyd", "scrapy-mock", "matplotlib"):
        assert tool not in runtime, f"{tool} would go into the Scrapyd egg"


def test_the_installed_environment_matches_the_lock() -> None:
    pins = read_lock(ROOT / "requirements.txt")
    installed = {n: importlib.metadata.version(n) for n in pins}
    assert {n: v for n, v in installed.items() if v != pins[n]} == {}


def test_hypothesis_and_time_machine_are_gone() -> None:
    pins = read_lock(ROOT / "requirements.txt")
    assert "hypothesis" not in pins
    assert "time-machine" not in pins


def test_the_closure_follows_extras_of_dependencies() -> None:
    assert "pluggy" in closure([Requirement("pytest")])
    assert "pytest" not in closure([Requirement("pluggy")])


# scrapy-playwright is a 0.0.x release: LazyPlaywrightDownloadHandler moves the handler's
# engine-start receiver to the first browser request, a name only the handler has.
PLAYWRIGHT_HANDLER_VERSION = "0.0.48"
PLAYWRIGHT_HANDLER_NAMES = ("_maybe_launch_in_thread",)


def test_scrapy_playwright_is_the_release_the_lazy_handler_was_written_for() -> None:
    from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

    version = importlib.metadata.version("scrapy-playwright")
    assert version == PLAYWRIGHT_HANDLER_VERSION, (
        f"scrapy-playwright {version} is installed; topics_crawler/browser/handler.py overrides "
        f"{', '.join(PLAYWRIGHT_HANDLER_NAMES)} of {PLAYWRIGHT_HANDLER_VERSION}: check them "
        "against the new release, then update PLAYWRIGHT_HANDLER_VERSION and pyproject.toml"
    )
    for name in PLAYWRIGHT_HANDLER_NAMES:
        assert inspect.iscoroutinefunction(getattr(ScrapyPlaywrightDownloadHandler, name))


@pytest.mark.integration
def test_a_crawl_that_renders_nothing_starts_no_playwright(site: SiteView, tmp_path: Path) -> None:
    from tests.crawl_helpers import crawl_in_process

    run = crawl_in_process(
        site.base_url, tmp_path, "tags=distributed-training", "max_stories=1", "follow=none",
        settings={"RENDER_MODE": "never"},
    )  # fmt: skip
    assert run.returncode == 0, run.log[-3000:]
    assert "Starting download handler" not in run.log  # scrapy-playwright's start-up line
    assert "playwright/" not in " ".join(run.stats)


HEAVY_MODULES = ("matplotlib", "playwright", "scrapy_playwright")
CHECK_IMPORTS = """
import json, runpy, sys
sys.argv = {argv!r}
try:
    runpy.run_module("topics_crawler", run_name="__main__") if len(sys.argv) > 1 else None
except SystemExit as exc:
    assert not exc.code, exc.code
import topics_crawler, topics_crawler.settings, topics_crawler.cli
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["python"],
        [
            "python -m topics_crawler",
            "extract",
            "tests/fixtures/own/story/locked_preview_2025/input.html",
            "--url",
            "https://ledger.example.com/the-quiet-ledger-a1b2c3d4e5f6",
        ],
    ],
    ids=["import", "extract"],
)
def test_import_and_extract_load_no_browser_and_no_plotting(argv: list[str]) -> None:
    code = CHECK_IMPORTS.format(argv=argv, heavy=HEAVY_MODULES)
    process = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout.splitlines()[-1]) == []


def test_the_isolation_check_sees_a_heavy_import() -> None:
    code = "import matplotlib\n" + CHECK_IMPORTS.format(argv=["python"], heavy=HEAVY_MODULES)
    process = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert json.loads(process.stdout.splitlines()[-1]) == ["matplotlib"]


#: Underscore names of libraries that are their public API, or pinned above.
ALLOWED_UNDERSCORE_NAMES = {
    "_Element": "lxml's documented element class (lxml.etree._Element)",
    "_replace": "namedtuple's documented method (urlsplit results)",
    "_maybe_launch_in_thread": "scrapy-playwright 0.0.48, pinned by a test above",
    # scrapy-redis's queue classes serialize through these; they are its API for subclasses
    # (every queue of scrapy_redis.queue uses them), read by distributed/leases.py.
    "_encode_request": "scrapy_redis.queue.Base, for subclasses",
    "_decode_request": "scrapy_redis.queue.Base, for subclasses",
}


def underscore_attributes(root: Path) -> tuple[set[str], dict[str, list[str]]]:
    """Names the package defines, and every ``obj._name`` it reads (with where)."""
    defined: set[str] = set()
    read: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                defined.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            elif isinstance(node, ast.alias) and node.name.startswith("_"):
                read.setdefault(node.name, []).append(f"{path.name}:import")
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                read.setdefault(node.attr, []).append(f"{path.name}:{node.lineno}")
    return defined, read


def test_the_package_uses_no_private_name_of_a_library() -> None:
    defined, read = underscore_attributes(ROOT / "topics_crawler")
    foreign = {name: where for name, where in read.items() if name not in defined}
    assert set(foreign) <= set(ALLOWED_UNDERSCORE_NAMES), foreign


def library_private_overrides() -> dict[str, str]:
    """``Class._name`` methods of the package that override a library's private name."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "topics_crawler").rglob("*.py")):
        if path.name == "__main__.py":
            continue
        module_name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        module = importlib.import_module(module_name.removesuffix(".__init__"))
        for cls in vars(module).values():
            if not isinstance(cls, type) or cls.__module__ != module.__name__:
                continue
            for name, value in vars(cls).items():
                if not name.startswith("_") or name.startswith("__"):
                    continue
                if not (inspect.isfunction(value) and value.__module__ == module.__name__):
                    continue  # machinery of abc, enum, typing
                for base in cls.__mro__[1:]:
                    if not base.__module__.startswith("topics_crawler") and hasattr(base, name):
                        found[f"{cls.__qualname__}.{name}"] = base.__module__
    return found


def test_no_class_overrides_a_private_name_of_a_library() -> None:
    assert library_private_overrides() == {}
