"""The texts a Python source can show a user, read from its syntax tree: what the i18n tests scan for English
that has no Chinese (tests/diagnosis/test_i18n.py on the rules, tests/dashboard/test_i18n_pages.py on the pages).

One walk for every scan: `scopes` gives each function of a set of files with what its names are assigned,
`calls_named` the calls of a name in it, `texts` every text an expression there can give."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

from helpers.paths import REPO

DIAGNOSIS = REPO / "dashboard" / "diagnosis"

Assigned = dict[str, list[ast.AST]]


def rule_sources() -> list[Path]:
    return sorted(p for p in DIAGNOSIS.rglob("*.py"))


def assignments(fn: ast.AST) -> Assigned:
    """name -> every expression assigned to it in `fn` (`a = x`; `a, b = x, y` pairwise)."""
    assigned: Assigned = {}
    for n in ast.walk(fn):
        if not isinstance(n, ast.Assign):
            continue
        for t in n.targets:
            pairs = (zip(t.elts, n.value.elts) if isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple)
                     else [(t, n.value)])
            for target, value in pairs:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(value)
    return assigned


def scopes(paths: Iterable[Path]) -> Iterator[tuple[Path, ast.FunctionDef, Assigned]]:
    """(file, function, its assignments) for every function (nested ones too) in `paths`."""
    for path in paths:
        tree = ast.parse(path.read_text())
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            yield path, fn, assignments(fn)


def call_name(call: ast.Call) -> str | None:
    """`f(...)` -> "f", `x.f(...)` -> "f"."""
    return getattr(call.func, "id", getattr(call.func, "attr", None))


def calls_named(node: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and call_name(n) == name]


def _pieces(value: ast.AST, assigned: Assigned, depth: int) -> list[str]:
    """What one part of an f-string can read: a literal as it is, an inline `a if c else b` of texts as each of
    them (the KL climb's ", to the end of the log"), any other placeholder as "1"."""
    if isinstance(value, ast.Constant):
        return [str(value.value)]
    if isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.IfExp):
        body = texts(value.value.body, assigned, depth + 1)
        orelse = texts(value.value.orelse, assigned, depth + 1)
        if body and orelse:  # both sides texts; a number or an unknown name stays "1"
            return body + orelse
    return ["1"]


def texts(node: ast.AST, assigned: Assigned, depth: int = 0) -> list[str]:
    """Every text an expression can give, with each {placeholder} of an f-string as "1"; [] when unknown."""
    if depth > 5:
        return []
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        out = [""]
        for v in node.values:
            out = [a + b for a in out for b in _pieces(v, assigned, depth)]
        return out
    if isinstance(node, ast.IfExp):
        return texts(node.body, assigned, depth + 1) + texts(node.orelse, assigned, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [a + b for a in texts(node.left, assigned, depth + 1)
                for b in texts(node.right, assigned, depth + 1)]
    if isinstance(node, ast.Name):
        return [s for v in assigned.get(node.id, []) for s in texts(v, assigned, depth + 1)]
    return []
