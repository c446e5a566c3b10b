"""The layers of docs/architecture.md, enforced over buildkit's import graph.

Every import counts: at module level or inside a function, relative or absolute,
and a module named by a string literal (``importlib.import_module``, the lazy
names of ``buildkit/__init__.py``, the CLI's delegated subcommands).
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

from buildkit_testing.paths import REPO

LAYERS_BLOCK = re.compile(r"```layers\n(.*?)```", re.S)


# ----------------------------------------------------------------- the graph

def module_names(package_dir: Path) -> dict[str, Path]:
    root = package_dir.parent
    names = {}
    for path in package_dir.rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        return [target, *(f"{target}.{alias.name}" for alias in node.names)]
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value:
        return [node.value]  # a dotted module name; kept only when it is one of the package's modules
    return []


def import_edges(package_dir: Path) -> dict[str, dict[str, int]]:
    """module -> {imported module of the same package: first line}."""
    modules = module_names(package_dir)
    edges: dict[str, dict[str, int]] = {name: {} for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            for target in _imported(node, name, path.name == "__init__.py"):
                if target in modules and target != name:
                    edges[name].setdefault(target, getattr(node, "lineno", 0))
    return edges


def import_cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in edges:
        if node not in index:
            visit(node)
    return found


# ---------------------------------------------------------------- the layers

def read_layers(markdown: str) -> list[list[str]]:
    """The ```layers block: top layer first, siblings separated by ``|``."""
    match = LAYERS_BLOCK.search(markdown)
    assert match, "docs/architecture.md has no ```layers block"
    return [[name.strip() for name in line.split("|")] for line in match.group(1).splitlines() if line.strip()]


def place(module: str, layers: list[list[str]]) -> tuple[int, str] | None:
    """(layer index, the listed name) of the longest listed name that is ``module`` or contains it."""
    best = None
    for depth, names in enumerate(layers):
        for name in names:
            if module == name or module.startswith(name + ".") and name != "buildkit":
                if best is None or len(name) > len(best[1]):
                    best = (depth, name)
    return best


def layer_violations(edges: dict[str, dict[str, int]], layers: list[list[str]]) -> list[str]:
    problems = []
    for module, targets in sorted(edges.items()):
        here = place(module, layers)
        if here is None and targets:  # a package __init__ that imports nothing only groups modules
            problems.append(f"{module} is in no layer of docs/architecture.md")
        if here is None:
            continue
        for target, line in sorted(targets.items()):
            there = place(target, layers)
            if there is None or there[1] == here[1]:
                continue
            if there[0] < here[0]:
                problems.append(f"{module}:{line} imports {target}, a layer above it ({there[1]})")
            elif there[0] == here[0]:
                problems.append(f"{module}:{line} imports its sibling {target} ({there[1]})")
    return problems


# ------------------------------------------------------------------ the tests

def test_buildkit_follows_the_documented_layers() -> None:
    layers = read_layers((REPO / "docs" / "architecture.md").read_text(encoding="utf-8"))
    assert layer_violations(import_edges(REPO / "buildkit"), layers) == []


def test_buildkit_has_no_import_cycle() -> None:
    assert import_cycles(import_edges(REPO / "buildkit")) == []


def test_every_listed_layer_exists() -> None:
    modules = module_names(REPO / "buildkit")
    layers = read_layers((REPO / "docs" / "architecture.md").read_text(encoding="utf-8"))
    missing = [name for names in layers for name in names
               if name not in modules and not any(m.startswith(name + ".") for m in modules)]
    assert missing == []


@pytest.fixture
def toy_package(tmp_path: Path) -> Path:
    """low <- mid <- high, with one upward import inside a function and one by string."""
    pkg = tmp_path / "toy"
    (pkg / "mid").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text(textwrap.dedent("""
        def late():
            from toy.mid import thing  # upward, hidden in a function
    """))
    (pkg / "mid" / "__init__.py").write_text("")
    (pkg / "mid" / "thing.py").write_text("from ..low import late\n")
    (pkg / "high.py").write_text("import importlib\nMODULE = importlib.import_module('toy.mid.thing')\n")
    (pkg / "other.py").write_text("from toy import high\n")
    return pkg


def test_the_checks_see_hidden_and_named_imports(toy_package: Path) -> None:
    edges = import_edges(toy_package)
    assert edges["toy.mid.thing"] == {"toy.low": 1}
    assert edges["toy.low"] == {"toy.mid": 3, "toy.mid.thing": 3}
    assert edges["toy.high"] == {"toy.mid.thing": 2}
    layers = [["toy.high", "toy.other"], ["toy.mid"], ["toy.low"]]
    assert layer_violations(edges, layers) == [
        "toy.low:3 imports toy.mid, a layer above it (toy.mid)",
        "toy.low:3 imports toy.mid.thing, a layer above it (toy.mid)",
        "toy.other:1 imports its sibling toy.high (toy.high)",
    ]
    assert import_cycles(edges) == [["toy.low", "toy.mid.thing"]]
