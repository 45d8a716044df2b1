"""settings.py assigns every setting once (a later reassignment silently drops entries)."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import topics_crawler.settings

SETTINGS_FILE = Path(topics_crawler.settings.__file__)


def _assigned_names(tree: ast.Module) -> Counter[str]:
    names: Counter[str] = Counter()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        else:
            continue
        names.update(t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper())
    return names


def _mutated_names(tree: ast.Module) -> set[str]:
    """Module-level ``NAME.update(...)``/``NAME[...] = ...`` on a setting."""
    mutated: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            value = node.func.value
            if isinstance(value, ast.Name) and value.id.isupper():
                mutated.add(value.id)
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id.isupper()
        ):
            mutated.add(node.value.id)
    return mutated


def test_every_setting_is_assigned_once() -> None:
    tree = ast.parse(SETTINGS_FILE.read_text(encoding="utf-8"))
    twice = {name: n for name, n in _assigned_names(tree).items() if n > 1}
    assert not twice, f"assigned more than once in settings.py: {twice}"
    assert not _mutated_names(tree), "settings.py mutates a setting after assigning it"


def test_the_checks_see_a_reassignment() -> None:
    tree = ast.parse("A = {}\nA = {**A, 'x': 1}\nB = {}\nB.update(x=1)\n")
    assert _assigned_names(tree)["A"] == 2
    assert _mutated_names(tree) == {"B"}


# --- each default written once ------------------------------------------------------------

PACKAGE = SETTINGS_FILE.parent
#: ``settings.getint("NAME", <default>)`` and its kin.
SETTING_READ = re.compile(
    r'settings\.get(?:int|float|bool|list|dict)?\(\s*"(?P<name>[A-Z][A-Z0-9_]*)"\s*,\s*'
    r"(?P<default>[^)]+?)\s*\)"
)
#: Defaults still written beside settings.py's, in modules other branches are changing
#: (issue 19 follow-ups for their owners); this list only shrinks.
STILL_TWICE = {
    ("extensions/health.py", "HEALTH_COVERAGE_MIN_PAGES"),
    ("extensions/health.py", "HEALTH_ENABLED"),
    ("extensions/progress.py", "PROGRESS_LIVE"),
    ("extensions/progress.py", "PROGRESS_FIRST_LOG"),
    ("extensions/progress.py", "PROGRESS_REFRESH"),
    ("middlewares/blocked.py", "RETRY_BACKOFF_MAX"),
    ("middlewares/blocked.py", "BLOCKED_RETRY_TIMES"),
    ("middlewares/blocked.py", "RETRY_BACKOFF_BASE"),
    ("middlewares/rate.py", "RATE_CEILINGS"),
    ("middlewares/rate.py", "RATE_CEILING"),
    ("middlewares/rate.py", "RETRY_AFTER_MAX"),
    ("middlewares/rate.py", "RATE_CONTROL_ENABLED"),
    ("distributed/workers.py", "DISTRIBUTED_IDLE_CLOSE"),
    ("distributed/workers.py", "DISTRIBUTED_WORKER_TIMEOUT"),
    ("resume/scheduler.py", "RESUME_CHECKPOINT_INTERVAL"),
    ("dataset/extension.py", "DATASET_MANIFEST_SETTINGS"),
}


def defaults_written_again(package: Path, names: set[str]) -> set[tuple[str, str]]:
    """``(module, setting)`` where a module reads a setting of settings.py with a default of
    its own instead of settings.py's (``defaults.NAME``), or a name derived from it."""
    found = set()
    for path in sorted(package.rglob("*.py")):
        if path == SETTINGS_FILE:
            continue
        for match in SETTING_READ.finditer(path.read_text(encoding="utf-8")):
            name, default = match["name"], match["default"]
            if name in names and default not in ("None", f"defaults.{name}"):
                found.add((path.relative_to(package).as_posix(), name))
    return found


def test_each_default_is_written_once_in_settings_py() -> None:
    names = {name for name in _assigned_names(ast.parse(SETTINGS_FILE.read_text())) if name}
    derived = {  # module constants that are settings.py's value under another name
        ("output/exporters.py", "PARQUET_ROW_GROUP_SIZE"),
        ("output/exporters.py", "PARQUET_COMPRESSION"),
        ("dataset/extension.py", "PARQUET_ROW_GROUP_SIZE"),
    }
    assert defaults_written_again(PACKAGE, names) - derived == STILL_TWICE


def test_the_defaults_check_sees_a_literal_default(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text('x = settings.getint("HISTORY_PAGE_SIZE", 100)\n')
    (tmp_path / "b.py").write_text('y = s.settings.getfloat("X", defaults.X)\n')
    assert defaults_written_again(tmp_path, {"HISTORY_PAGE_SIZE", "X"}) == {
        ("a.py", "HISTORY_PAGE_SIZE")
    }
