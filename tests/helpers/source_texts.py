"""The texts a Python source can show a user, read from its syntax tree: what the i18n tests scan for English
that has no Chinese (tests/diagnosis/test_i18n.py on the rules, tests/dashboard/test_i18n_pages.py on the pages)."""

from __future__ import annotations

import ast
from pathlib import Path

from helpers.paths import REPO

DIAGNOSIS = REPO / "dashboard" / "diagnosis"


def rule_sources() -> list[Path]:
    return sorted(p for p in DIAGNOSIS.rglob("*.py"))


def texts(node: ast.AST, assigned: dict[str, list[ast.AST]], depth: int = 0) -> list[str]:
    """Every text an expression can give, with each {placeholder} of an f-string as "1"; [] when unknown."""
    if depth > 5:
        return []
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else "1" for v in node.values)]
    if isinstance(node, ast.IfExp):
        return texts(node.body, assigned, depth + 1) + texts(node.orelse, assigned, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [a + b for a in texts(node.left, assigned, depth + 1)
                for b in texts(node.right, assigned, depth + 1)]
    if isinstance(node, ast.Name):
        return [s for v in assigned.get(node.id, []) for s in texts(v, assigned, depth + 1)]
    return []
