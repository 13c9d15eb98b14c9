"""Opening a tracker's SQLite file read-only, with what went wrong said in one line naming the file.

The file is opened through a `file:...?mode=ro` URI: a run that is still writing is never locked or changed
by us (SQLite readers take no write lock; a WAL database is read with the writer's shared memory). A file
that is not SQLite, a damaged one, or one without the tracker's tables is a RunError naming it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

from collectors.meta import RunError

MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite 3 database (sqlite.org/fileformat.html)
BUSY_TIMEOUT_S = 2.0  # a writer in the middle of a checkpoint: wait a little, never block the reader long


def is_sqlite(path: Path) -> bool:
    """True for a regular file that starts like an SQLite 3 database (one read of 16 bytes)."""
    try:
        if not path.is_file():
            return False
        with open(path, "rb") as f:
            return f.read(16) == MAGIC
    except OSError:
        return False


def connect(path: Path) -> sqlite3.Connection:
    """`path` opened read-only; a RunError naming the file when SQLite refuses it."""
    uri = "file:" + quote(str(Path(path).absolute()), safe="/") + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # a damaged header or schema shows here
    except sqlite3.Error as e:
        raise RunError(f"{path}: {_why(path, e)}") from None
    return conn


def tables(conn: sqlite3.Connection, only: Iterable[str] | None = None) -> dict[str, set[str]]:
    """{table name: its column names} of an open database (of the tables in `only`, when given)."""
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    wanted = set(only) if only is not None else None
    return {n: {r[1] for r in conn.execute(f'PRAGMA table_info("{n}")')} for n in names
            if wanted is None or n in wanted}


def has_tables(path: Path, wanted: dict[str, Iterable[str]]) -> bool | None:
    """Whether the SQLite file holds each table in `wanted` with those columns; None when it cannot be read
    as SQLite at all (damaged); False for a file that is no SQLite. For detection: cheap, never raises."""
    if not is_sqlite(path):
        return False
    try:
        conn = connect(path)
    except RunError:
        return None
    try:
        have = tables(conn, wanted)
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return all(t in have and set(cols) <= have[t] for t, cols in wanted.items())


def check_tables(conn: sqlite3.Connection, path: Path, wanted: dict[str, Iterable[str]],
                 what: str) -> dict[str, set[str]]:
    """The columns of the tables in `wanted`; a RunError naming the file when a table or column of `wanted` is
    missing (a foreign database)."""
    try:
        have = tables(conn, wanted)
    except sqlite3.Error as e:
        raise RunError(f"{path}: {_why(path, e)}") from None
    for table, cols in wanted.items():
        if table not in have:
            raise RunError(f"{path}: an SQLite database, but not {what} (no {table!r} table)")
        if missing := sorted(set(cols) - have[table]):
            raise RunError(f"{path}: an SQLite database, but not {what} (table {table!r} has no "
                           f"{', '.join(missing)} column)")
    return have


def query(conn: sqlite3.Connection, path: Path, sql: str, args: tuple = ()) -> list[tuple]:
    """Rows of a query; a damaged page met while reading is a RunError naming the file."""
    try:
        return conn.execute(sql, args).fetchall()
    except sqlite3.Error as e:
        raise RunError(f"{path}: {_why(path, e)}") from None


def _why(path: Path, error: sqlite3.Error) -> str:
    text = str(error)
    if not os.path.exists(path):
        return "no such file"
    if "not a database" in text or not is_sqlite(Path(path)):
        return "not an SQLite database (damaged, or another kind of file)"
    if "malformed" in text:
        return "the SQLite database is damaged (SQLite: database disk image is malformed)"
    return f"SQLite cannot read it ({text.splitlines()[0] if text else 'no reason given'})"


def mtime(path: Path) -> float | None:
    """The newest modification time of an SQLite file and its write-ahead log (a live WAL writer touches
    only the -wal file)."""
    times = []
    for p in (Path(path), Path(f"{path}-wal")):
        try:
            times.append(p.stat().st_mtime)
        except OSError:
            continue
    return max(times) if times else None
