"""The installed grposcope's version, printed by every command's --version (one source: pyproject.toml)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _installed

DIST = "grposcope"


def version() -> str:
    """The version in the package metadata; a source tree that was never installed says so."""
    try:
        return _installed(DIST)
    except PackageNotFoundError:
        return "unknown (not installed: pip install -e . in the source tree)"


def version_flag(prog: str) -> dict:
    """argparse keywords for `--version`: `parser.add_argument("--version", **version_flag(prog))`."""
    return {"action": "version", "version": f"{prog} {version()}", "help": "print the version and exit"}
