"""The architecture the folders show, checked on the source: data flows grpo_core -> collectors -> dashboard,
so nothing below imports from above; and no package has an import circle (a registry and an engine, a verdict
and a rule module, or two CLIs importing each other). Imports inside functions count: a late import is still a
dependency. A package's __init__ re-exporting its modules is how a package is read, not a circle."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest
from helpers.paths import REPO

# package -> what none of its modules may import. collectors is the bottom layer (the run format and the readers:
# no torch, no streamlit, neither the trainer nor the dashboard); the dashboard reads runs, never the trainer;
# the diagnosis is pure (no streamlit, nor the dashboard's streamlit modules). The trainer may run the guard.
FORBIDDEN = {
    "collectors": ("grpo_core", "dashboard", "torch", "streamlit"),
    "dashboard": ("grpo_core",),
    "dashboard.diagnosis": ("streamlit", "dashboard.app", "dashboard.data", "dashboard.ui", "dashboard.views"),
}


def modules(package: str) -> dict[str, Path]:
    out = {}
    for f in (REPO / package).rglob("*.py"):
        parts = f.relative_to(REPO).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def imports(path: Path) -> set[str]:
    """Every module name an `import` or `from ... import` in the file names (absolute imports only)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


def test_nothing_below_imports_from_above():
    bad = []
    for package, banned in FORBIDDEN.items():
        for name, path in modules(package.split(".")[0]).items():
            if name != package and not name.startswith(package + "."):
                continue
            bad += [f"{name} imports {imp}" for imp in imports(path)
                    if any(imp == b or imp.startswith(b + ".") for b in banned)]
    assert bad == []


def _graph(package: str) -> dict[str, set[str]]:
    mods = modules(package)
    graph = {}
    for name, path in mods.items():
        if path.name == "__init__.py":
            continue
        graph[name] = {m for m in imports(path) if m in mods and m != name and mods[m].name != "__init__.py"}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative enough here)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


PACKAGES = ("grpo_core", "collectors", "dashboard")


@pytest.mark.parametrize("package", PACKAGES)
def test_no_package_has_an_import_circle(package):
    """Imports under `if TYPE_CHECKING:` count too: a type named from the module that calls you is still a
    module that must load before you (grpo_core's train.py and dynamic_sampling.py were one such pair)."""
    assert _cycles(_graph(package)) == []


def test_every_package_is_checked():
    """A new top-level package joins PACKAGES, or this fails: the circle check covers every package the project
    installs (pyproject's setuptools `include` patterns)."""
    include = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    assert {pattern.rstrip("*") for pattern in include["include"]} == set(PACKAGES)
