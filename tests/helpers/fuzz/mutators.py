"""Seeded mutations of a valid file: what crashing trainers, half-synced folders and hand edits leave behind.

Each mutator is a pure function `(data: bytes, rng: random.Random) -> bytes` registered by name; `mutate`
picks one with the case's own Random, so a case is reproduced from (seed file, case number) alone. They
work on bytes, so the same ones apply to JSON, JSONL, CSV, console logs, Parquet, TensorBoard event files
and wandb's record log; the text-aware ones fall back to byte edits where the file is not text.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

Mutator = Callable[[bytes, random.Random], bytes]
ONLY_ENV = "GRPOSCOPE_FUZZ_MUTATORS"
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
    """Nesting from 60 levels to far past Python's recursion limit (DEPTHS), lists or objects: as a value of a
    JSON document or line, of a TensorBoard `args` text or hparams summary, of a wandb config item or history
    value, or spliced into the bytes."""
    if rng.random() < 0.2:
        p = _pos(data, rng)
        return data[:p] + b"[" * DEEP + b"]" * DEEP + data[p:]
    return _poison(data, rng, lambda: _deep(rng))


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


@mutator
def huge_integer(data: bytes, rng: random.Random) -> bytes:
    """An integer of more than 4,300 digits (past what Python's int() converts): in place of a number of a text,
    as a value of a JSON document or line, of a TensorBoard `args` text or hparams summary, of a wandb config
    item or history value."""
    if _json_piece(data, rng)[0] is None and _text_like(data) and rng.random() < 0.7:
        spans = [m.span() for m in _NUMBER.finditer(data, 0, 1 << 20)]
        if spans:
            a, b = rng.choice(spans)
            return data[:a] + _huge(rng) + data[b:]
    return _poison(data, rng, lambda: _huge(rng))


@mutator
def lone_surrogate(data: bytes, rng: random.Random) -> bytes:
    """A lone UTF-16 surrogate: JSON's escape `\\ud800` (valid JSON whose text no UTF-8 can hold) in a key or a
    text value of a JSON document or line, a TensorBoard `args` text, a wandb config item or history value;
    in a Parquet text column as its CESU-8 bytes; in a console log inside a metric's name (a Python dict printed
    by TRL holds it as an escape too)."""
    if data.startswith(b"PAR1"):
        out = _parquet_surrogate(data, rng)
        if out is not None:
            return out
    escape = rng.choice(SURROGATES)
    strings = [m.span() for m in _JSON_STRING.finditer(data, 0, 1 << 20)] if not _binary_format(data) else []
    if strings and rng.random() < 0.6:  # inside a key or a text as it lies: JSON, a printed dict, a CSV cell
        a, b = rng.choice(strings)
        p = rng.randint(a + 1, b - 1)
        return data[:p] + escape + data[p:]
    if not _binary_format(data) and _json_piece(data, rng)[0] is None:
        keys = [m.start("key") for m in _KEY_VALUE.finditer(data, 0, 1 << 20)]
        if keys:
            p = rng.choice(keys) + 1
            return data[:p] + rng.choice([escape, b"\xed\xa0\x80"]) + data[p:]
    return _poison(data, rng, lambda: b'"' + escape + rng.choice([b"", b"x", b"\\u00e9"]) + b'"')


@mutator
def renamed_duplicate(data: bytes, rng: random.Random) -> bytes:
    """A key logged twice in one row under names that land on one column once renamed: verl's scaled
    `actor/lr(1e-4)` beside `actor/lr`, another case or separator (`Reward`, `avg response len`), a logger
    prefix added or dropped, the canonical name beside the logged one, the same name twice in one JSON object,
    a nested object beside its flattened name, a step or bookkeeping key (`step`, `_seq`, `wall_time`,
    `_timestamp`) among the metrics. In JSON, console logs (key: value, key=value, printed dicts), Parquet
    columns, TensorBoard tags and wandb history items."""
    from helpers.fuzz import formats

    variant = lambda key: key_variant(key, rng)
    if (out := formats.tb_rename_edit(data, rng, variant)) is not None:
        return out
    if (out := formats.wandb_history_edit(data, rng, variant=variant)) is not None:
        return out
    if data.startswith(b"PAR1"):
        return _parquet_duplicate(data, rng, variant)
    doc, where = _json_piece(data, rng)
    if doc is not None:
        return _put_json(data, where, None, raw=_json_with_key(doc, rng, variant))
    matches = list(_KEY_VALUE.finditer(data, 0, 1 << 20))
    if not matches:
        return duplicate_span(data, rng)
    m = rng.choice(matches)
    key = m["key"].decode("utf-8", "replace")
    new = variant(key).encode("utf-8", "surrogatepass")
    quote = m["quote"] or b""
    after = data[m.end():m.end() + 3]
    gap = b" - " if after.startswith(b" - ") else b", " if after[:1] in (b",", b"}") else b" "
    pair = gap + quote + new + quote + m["sep"] + m["value"]
    return data[:m.end()] + pair + data[m.end():]


def key_variant(key: str, rng: random.Random) -> str:
    """Another name for `key` that a reader maps to the same column (or to a column it keeps for itself)."""
    from collectors.readers.synonyms import canonical

    bare = key.split("/", 1)[-1]
    return rng.choice([
        f"{key}(1e-4)",  # verl: actor/lr(1e-4) is actor/lr scaled
        key.upper(), key.replace("_", " ").title(), key.replace("_", "-"),  # the synonyms' normalisation
        f"train/{key}", bare, f"train/{bare}",  # a logger prefix added or dropped
        canonical(key, {}),  # our own name for it, logged beside it
        key, key,  # the very same name again
        *rng.sample(RESERVED_KEYS, 2),
    ])


RESERVED_KEYS = ["step", "train/step", "_step", "global_step", "train/global_step", "iteration", "_seq",
                 "wall_time", "_timestamp", "_runtime", "data", "step(1e-4)", "epoch"]
SURROGATES = [b"\\ud800", b"\\udfff", b"\\udc00", b"\\ud83d", b"\\uDBFF"]  # high without low, low alone
HUGE_DIGITS = [4_301, 5_000, 50_000]
DEPTHS = [60, 500, 990, 3_000, DEEP]
_JSON_STRING = re.compile(rb'"[^"\\\n]{1,64}"')
# `key: 1.5`, `key=1.5`, `'key': 1.5`, `"key": 1.5`: a logged metric in a console line, a printed dict or JSON
_KEY_VALUE = re.compile(rb"(?P<quote>['\"]?)(?P<key>[A-Za-z_][\w/.\-]{0,60})(?P=quote)(?P<sep>\s?[:=]\s?)"
                        rb"(?P<value>-?\d[\d.eE+\-]{0,30})")


def _huge(rng: random.Random) -> bytes:
    digits = rng.choice(HUGE_DIGITS)
    return rng.choice([b"", b"-"]) + b"1" + b"0" * (digits - 1) + rng.choice([b"", b"", b".5", b"e3"])


def _deep(rng: random.Random) -> bytes:
    depth = rng.choice(DEPTHS)
    if rng.random() < 0.5:
        return b"[" * depth + b"1" + b"]" * depth
    return b'{"a": ' * depth + b"1" + b"}" * depth


def _binary_format(data: bytes) -> bool:
    from helpers.fuzz import formats

    return data.startswith((b"PAR1", formats._WB_HEADER)) or formats.is_event_file(data) or b"\x00" in data[:4096]


def _text_like(data: bytes) -> bool:
    return not _binary_format(data)


def _poison(data: bytes, rng: random.Random, poison) -> bytes:
    """`poison()` (raw JSON text) where a reader parses JSON: a TensorBoard config text or hparams summary, a
    wandb config item or history value, a value of a JSON document or line; else spliced into the bytes."""
    from helpers.fuzz import formats

    if (out := formats.tb_config_edit(data, rng, poison)) is not None:
        return out
    if data.startswith(formats._WB_HEADER):
        edit = rng.choice([formats.wandb_config_edit, formats.wandb_config_edit, formats.wandb_history_edit])
        if (out := edit(data, rng, poison)) is not None:
            return out
    doc, where = _json_piece(data, rng)
    if doc is not None:
        return _put_json(data, where, None, raw=formats.poisoned_json(json.dumps(doc).encode(), rng, poison))
    p = _pos(data, rng)
    return data[:p] + poison() + data[p:]


def _json_with_key(doc: object, rng: random.Random, variant) -> bytes:
    """`doc` as JSON text with a key added to one of its objects: a variant of one of that object's keys,
    with a copy of its value (or a number), possibly as a nested object beside a dotted name."""
    objects: list[dict] = []

    def walk(node: object, depth: int) -> None:
        if len(objects) > 2000 or depth > 20:
            return
        if isinstance(node, dict):
            objects.append(node)
        for v in node.values() if isinstance(node, dict) else node if isinstance(node, list) else ():
            walk(v, depth + 1)

    walk(doc, 0)
    objects = [o for o in objects if o] or objects
    if not objects:
        return json.dumps(doc).encode()
    target = rng.choice(objects)
    key = rng.choice(list(target)) if target else "loss"
    value = target.get(key, 1.5)
    marker = "\x00dup\x00"
    target[marker] = marker
    text = json.dumps(doc).encode()
    new = variant(key)
    sep = "." if "." in new else "/" if "/" in new else None
    if sep and rng.random() < 0.3:  # {"a": {"b": v}} beside "a.b": the same column once flattened
        head, tail = new.split(sep, 1)
        pair = json.dumps({head: {tail: value}})[1:-1]
    else:
        pair = f"{json.dumps(new)}: {json.dumps(rng.choice([value, 0.5, 'x', None]))}"
    return text.replace(f"{json.dumps(marker)}: {json.dumps(marker)}".encode(), pair.encode(), 1)


def _parquet_table(data: bytes):
    try:
        return pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError):
        return None


def _parquet_bytes(table) -> bytes:
    out = pa.BufferOutputStream()
    pq.write_table(table, out)
    return out.getvalue().to_pybytes()


def _parquet_duplicate(data: bytes, rng: random.Random, variant) -> bytes:
    """A column added under a variant of another's name (the same name included), holding its values."""
    table = _parquet_table(data)
    if table is None or not table.num_columns:
        return wrong_type(data, rng)
    i = rng.randrange(table.num_columns)
    table = table.append_column(variant(table.column_names[i]), table.column(i))
    try:
        return _parquet_bytes(table)
    except (pa.ArrowException, OSError):
        return data


def _parquet_surrogate(data: bytes, rng: random.Random) -> bytes | None:
    """A text column (or a column's name) holding the CESU-8 bytes of a lone surrogate, as a writer that
    encoded with `surrogatepass` leaves them."""
    table = _parquet_table(data)
    if table is None or not table.num_columns:
        return None
    texts = [i for i, t in enumerate(table.schema.types) if pa.types.is_string(t) or pa.types.is_large_string(t)]
    if not texts or rng.random() < 0.3:
        i = rng.randrange(table.num_columns)
        names = list(table.column_names)
        names[i] += rng.choice(["\\ud800", "\ufffd"])  # Arrow names are UTF-8: the escape as text, or U+FFFD
        try:
            return _parquet_bytes(table.rename_columns(names))
        except (pa.ArrowException, OSError):
            return None
    i = rng.choice(texts)
    n = table.num_rows
    values = [b"\xed\xa0\x80" + rng.choice([b"", b"x", b"\xed\xbf\xbf"]) for _ in range(n)]
    offsets = np.cumsum([0] + [len(v) for v in values]).astype(np.int32)
    arr = pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(values))])
    try:
        return _parquet_bytes(table.set_column(i, table.schema.field(i).name, arr))
    except (pa.ArrowException, OSError):
        return None


def mutate(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """(mutator name, mutated bytes); sometimes two mutations in a row. GRPOSCOPE_FUZZ_MUTATORS (names, comma
    separated) limits the choice to those (`fuzz_readers.py --mutators`); case i is then another mutation."""
    only = [n for n in os.environ.get(ONLY_ENV, "").split(",") if n]
    names = sorted(n for n in MUTATORS if not only or n in only)
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


# Issue 38's families: each found a bug the others did not reach.
# - null_values: a `_seq` of nulls ("cannot convert float NaN to integer"), a null step read as -2**63.
# - endless_line: a 10 GB sparse log taken into memory whole by one read().
# - long_record: a wandb record of hundreds of 32 KiB chunks joined by bytes + bytes (quadratic).
ENDLESS = [17 << 20, 24 << 20]  # just past linetail.MAX_LINE (16 MiB): each case stays within the harness's memory


# how a text log holds a metric that was not measured: JSON's null, Python's json NaN, a NaN as text, an empty value
MISSING_JSON = [None, float("nan"), "nan", "NaN", ""]
MISSING_TEXT = [b"", b"nan", b"NaN", b"null", b"None", b"-nan"]


@mutator
def null_values(data: bytes, rng: random.Random) -> bytes:
    """Values missing where numbers were: in a Parquet column, nulls of the column's type (a damaged part, a
    writer that lost values); in a JSON document or line, numbers replaced by null, NaN, "nan" or ""; in other
    text (CSV, a console line), numbers replaced by nothing, nan, NaN, null or None."""
    if data.startswith(b"PAR1"):
        return _parquet_nulls(data, rng)
    if _binary_format(data):
        return data
    doc, where = _json_piece(data, rng)
    if doc is not None and (out := _json_nulls(doc, rng)) is not None:
        return _put_json(data, where, out)
    spans = [m.span() for m in _NUMBER.finditer(data, 0, 1 << 20)]
    if not spans:
        return data
    out = data
    for a, b in sorted(rng.sample(spans, min(len(spans), rng.randint(1, 4))), reverse=True):
        out = out[:a] + rng.choice(MISSING_TEXT) + out[b:]
    return out


def _json_nulls(doc: object, rng: random.Random) -> object | None:
    """A copy of `doc` with one to four of its numbers (not booleans) missing; None when it holds no number."""
    paths: list[tuple] = []

    def walk(node: object, path: tuple) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            if len(paths) > 20_000:
                return
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                paths.append(path + (k,))
            walk(v, path + (k,))

    walk(doc, ())
    if not paths:
        return None
    doc = json.loads(json.dumps(doc))
    for path in rng.sample(paths, min(len(paths), rng.randint(1, 4))):
        node = doc
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = rng.choice(MISSING_JSON)
    return doc


def _parquet_nulls(data: bytes, rng: random.Random) -> bytes:
    table = _parquet_table(data)
    if table is None or not table.num_columns or not table.num_rows:
        return data
    names = table.column_names
    pick = [n for n in ("step", "_seq") if n in names]
    name = rng.choice(pick) if pick and rng.random() < 0.7 else rng.choice(names)
    n = table.num_rows
    gone = set(range(n)) if rng.random() < 0.4 else set(rng.sample(range(n), rng.randint(1, n)))
    mask = pa.array([r in gone for r in range(n)])
    i = names.index(name)
    try:  # by Arrow, not through Python values: a text column may hold bytes no UTF-8 decodes (lone_surrogate first)
        column = pc.if_else(mask, pa.scalar(None, table.schema.field(i).type), table[name])
        return _parquet_bytes(table.set_column(i, name, column))
    except (pa.ArrowException, OSError):
        return data


@mutator
def endless_line(data: bytes, rng: random.Random) -> bytes:
    """A line longer than any reader keeps: NULs (a sparse or preallocated file) or text, with or without an
    end, at a line's start or at the end of the file."""
    run = (b"\0" if rng.random() < 0.5 else b"x") * rng.choice(ENDLESS)
    p = _pos(data, rng) if rng.random() < 0.5 else len(data)
    p = data.rfind(b"\n", 0, p) + 1
    return data[:p] + run + (b"\n" if rng.random() < 0.5 else b"") + data[p:]


LONG = [2 << 20, 8 << 20]  # 64 to 256 chunks of 32 KiB: bytes + bytes joining was quadratic in this count


@mutator
def long_record(data: bytes, rng: random.Random) -> bytes:
    """A JSON text of several MB where a reader parses JSON: a wandb history value or config item (framed
    again over hundreds of chunks, valid CRCs), a TensorBoard config text, a JSON value."""
    return _poison(data, rng, lambda: b'"' + b"y" * rng.choice(LONG) + b'"')
