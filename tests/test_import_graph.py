"""No import circles inside the package: every ``import`` counts, whether at the top of a
module, under ``TYPE_CHECKING`` or inside a function (a lazy import hides a circle, it
does not remove it)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

import topics_crawler

PACKAGE = Path(topics_crawler.__file__).parent


def module_files(package: Path) -> dict[str, Path]:
    """Dotted module name → file, for every module of ``package`` (packages by their
    ``__init__.py``)."""
    modules = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_names(module: str, path: Path, modules: Iterable[str]) -> Iterator[str]:
    """The modules ``module`` imports: ``import a.b`` and ``from a import b`` name ``a.b``
    when it is a module, else ``a`` (``b`` is a name in it). The package that holds an
    imported module is not counted: Python has initialised it before."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module → the package's modules it imports."""
    modules = module_files(package)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for imported in imported_names(name, path, modules):
            if imported in modules and imported != name:
                graph[name].add(imported)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_package_has_no_import_circle() -> None:
    graph = import_graph(PACKAGE)
    assert len(graph) > 100, "the package's modules were found"
    assert circles(graph) == []


def test_a_circle_is_seen_through_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import C\n"
    )
    (package / "c.py").write_text("def f():\n    from pkg import a\n")
    (package / "d.py").write_text("import pkg.a\nfrom pkg import sub\n")  # imported, not a circle
    (package / "sub" / "e.py").write_text("from pkg.sub import b\n")  # its package: no edge
    assert circles(import_graph(package)) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
