"""settings.py assigns every setting once (a later reassignment silently drops entries)."""

from __future__ import annotations

import ast
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
