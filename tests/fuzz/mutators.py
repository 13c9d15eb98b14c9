"""Seeded mutations of a valid file: what crashing trainers, half-synced folders and hand edits leave behind.

Each mutator is a pure function `(data: bytes, rng: random.Random) -> bytes` registered by name; `mutate`
picks one with the case's own Random, so a case is reproduced from (seed file, case number) alone. They
work on bytes, so the same ones apply to JSON, JSONL, CSV, console logs, Parquet, TensorBoard event files
and wandb's record log; the text-aware ones fall back to byte edits where the file is not text.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable

import pyarrow as pa
import pyarrow.parquet as pq

Mutator = Callable[[bytes, random.Random], bytes]
MUTATORS: dict[str, Mutator] = {}

# Values a reader must decide about on purpose: out of float range, beyond int64, non-finite spelled every
# way JSON writers spell it (Python's json writes NaN/Infinity), NaN as a string.
ODD_NUMBERS = [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400", b"1208925819614629174706176",  # 2**80
               b"1" + b"0" * 400, b'"NaN"', b'"inf"', b"-0", b"1e-400", b"9223372036854775808", b"nan", b"inf"]
ODD_VALUES = ["[]", "{}", '"x"', "null", "true", '[1, 2]', '{"a": 1}', '"1e400"', "-1", "0"]
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
DEEP = 50_000  # nesting far beyond Python's recursion limit
# keys of a wide record (one wandb record logging every parameter's norm); the suite lowers it, because the
# diagnosis of a 20,000-column run takes seconds per case and CI runs hundreds
WIDE_KEYS = 20_000


def mutator(fn: Mutator) -> Mutator:
    MUTATORS[fn.__name__] = fn
    return fn


def _pos(data: bytes, rng: random.Random) -> int:
    return rng.randrange(len(data) + 1)


@mutator
def truncate(data: bytes, rng: random.Random) -> bytes:
    """A writer killed mid-write (no atomic rename) or a half-synced copy."""
    return data[: _pos(data, rng)]


@mutator
def flip_bytes(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return b"\xff"
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


@mutator
def insert_garbage(data: bytes, rng: random.Random) -> bytes:
    junk = rng.choice([bytes(rng.randrange(256) for _ in range(rng.randint(1, 64))), b"\x00", b"\xff\xfe\xfd",
                       b"\n{not json\n", b"\r\n", b",,,\n", b"\x1b[31mred\x1b[0m", "é漢".encode()])
    p = _pos(data, rng)
    return data[:p] + junk + data[p:]


@mutator
def delete_span(data: bytes, rng: random.Random) -> bytes:
    a = _pos(data, rng)
    return data[:a] + data[min(len(data), a + rng.randint(1, 4096)):]


@mutator
def duplicate_span(data: bytes, rng: random.Random) -> bytes:
    a = _pos(data, rng)
    b = min(len(data), a + rng.randint(1, 4096))
    return data[:b] + data[a:b] + data[b:]


@mutator
def empty(data: bytes, rng: random.Random) -> bytes:
    return b""


@mutator
def binary(data: bytes, rng: random.Random) -> bytes:
    """Random bytes of the same size: a file overwritten by something else entirely."""
    return rng.randbytes(max(1, min(len(data), 1 << 16)))


@mutator
def odd_number(data: bytes, rng: random.Random) -> bytes:
    """Replace a number in the file with NaN, Infinity, 1e400, 2**80, 10**400, "NaN", ..."""
    spans = [m.span() for m in _NUMBER.finditer(data, 0, 1 << 20)]
    if not spans:
        return insert_garbage(data, rng)
    out = data
    for a, b in sorted(rng.sample(spans, min(len(spans), rng.randint(1, 4))), reverse=True):
        out = out[:a] + rng.choice(ODD_NUMBERS) + out[b:]
    return out


@mutator
def wrong_type(data: bytes, rng: random.Random) -> bytes:
    """In a JSON document or a JSONL line, one value replaced by another JSON type."""
    doc, where = _json_piece(data, rng)
    if doc is None:
        return odd_number(data, rng)
    return _put_json(data, where, _replace_value(doc, rng, lambda: json.loads(rng.choice(ODD_VALUES))))


@mutator
def deep_nesting(data: bytes, rng: random.Random) -> bytes:
    """Nesting deeper than Python's recursion limit, as text (valid JSON) or spliced into the bytes."""
    deep = b"[" * DEEP + b"]" * DEEP
    doc, where = _json_piece(data, rng)
    if doc is None or rng.random() < 0.3:
        p = _pos(data, rng)
        return data[:p] + deep + data[p:]
    marker = "\x00deep\x00"
    text = json.dumps(_replace_value(doc, rng, lambda: marker)).encode()
    return _put_json(data, where, None, raw=text.replace(json.dumps(marker).encode(), deep, 1))


@mutator
def long_line(data: bytes, rng: random.Random) -> bytes:
    """A line of a few MB (a dumped tensor, a log without newlines)."""
    p = _pos(data, rng)
    return data[:p] + b"x" * rng.choice([1 << 16, 1 << 21, 5 << 20]) + data[p:]


@mutator
def wide_record(data: bytes, rng: random.Random) -> bytes:
    """A JSON object with WIDE_KEYS keys (one history record logging every parameter's norm)."""
    doc, where = _json_piece(data, rng)
    wide = {f"w/{i}": float(i) for i in range(WIDE_KEYS)}
    if not isinstance(doc, dict):
        p = _pos(data, rng)
        return data[:p] + json.dumps(wide).encode() + b"\n" + data[p:]
    return _put_json(data, where, doc | wide)


@mutator
def non_utf8(data: bytes, rng: random.Random) -> bytes:
    """Latin-1 or broken UTF-8 in a text file (a locale, a truncated multibyte character)."""
    p = _pos(data, rng)
    return data[:p] + rng.choice([b"\xe9", b"\xe6\xbc", b"\xc3", b"\x80\x80", b"\xed\xa0\x80"]) + data[p:]


@mutator
def parquet_types(data: bytes, rng: random.Random) -> bytes:
    """A Parquet file rewritten with one column of another type, dropped, or a stray column added: what a
    hand-made or foreign part file holds (a step as text, a reward as a list, no step at all)."""
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError):
        return wrong_type(data, rng)
    if not table.num_columns:
        return data
    i = rng.randrange(table.num_columns)
    n = table.num_rows
    how = rng.choice(["string", "list", "drop", "null", "huge", "bool", "extra"])
    if how == "drop":
        table = table.remove_column(i)
    elif how == "extra":
        table = table.append_column(rng.choice(["step", "_seq", "x", ""]) + "_", pa.array([b"\xff"] * n))
    else:
        new = {"string": lambda: pa.array([rng.choice(["1", "NaN", "x", ""]) for _ in range(n)]),
               "list": lambda: pa.array([[1.0, 2.0]] * n),
               "null": lambda: pa.nulls(n),
               "huge": lambda: pa.array([rng.choice([2**63 - 1, -(2**63), 0]) for _ in range(n)], pa.int64()),
               "bool": lambda: pa.array([True] * n)}[how]()
        table = table.set_column(i, table.schema.field(i).name, new)
    out = pa.BufferOutputStream()
    pq.write_table(table, out)
    return out.getvalue().to_pybytes()


def mutate(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """(mutator name, mutated bytes); sometimes two mutations in a row."""
    names = sorted(MUTATORS)
    name = rng.choice(names)
    out = MUTATORS[name](data, rng)
    if rng.random() < 0.15:
        second = rng.choice(names)
        out, name = MUTATORS[second](out, rng), f"{name}+{second}"
    return name, out


# -- JSON helpers ------------------------------------------------------------------------------------
def _json_piece(data: bytes, rng: random.Random) -> tuple[object, tuple[int, int] | None]:
    """A parsed JSON document: the whole file, else one JSONL line; with its byte span (None: whole)."""
    if len(data) > 8 << 20:
        return None, None
    try:
        return json.loads(data), None
    except (ValueError, RecursionError):
        pass
    lines = [m.span() for m in re.finditer(rb"[^\n]+", data)][:5000]
    rng.shuffle(lines)
    for a, b in lines[:20]:
        try:
            doc = json.loads(data[a:b])
        except (ValueError, RecursionError):
            continue
        if isinstance(doc, (dict, list)):
            return doc, (a, b)
    return None, None


def _put_json(data: bytes, where: tuple[int, int] | None, doc: object, raw: bytes | None = None) -> bytes:
    text = raw if raw is not None else json.dumps(doc).encode()
    if where is None:
        return text
    return data[: where[0]] + text + data[where[1]:]


def _replace_value(doc: object, rng: random.Random, new: Callable[[], object]) -> object:
    """A copy of `doc` with one value (anywhere in it, at any depth) replaced by `new()`."""
    paths: list[tuple] = []

    def walk(node: object, path: tuple) -> None:
        if len(paths) > 20_000:
            return
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            paths.append(path + (k,))
            walk(v, path + (k,))

    walk(doc, ())
    if not paths:
        return new()
    path = rng.choice(paths)
    doc = json.loads(json.dumps(doc))
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = new()
    return doc
