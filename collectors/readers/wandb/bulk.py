"""wandb history records decoded together with numpy: Python work per batch of records, none per value.

A history record is `08 num 12 L history`; its items, as wandb-core writes them for `run.log({name:
number})`, are each `0a L 0a|12 KL key 82 01 VL value_json` (the key, field 1, or a one-part `nested_key`,
field 2, then the value's JSON text, field 16; lengths under 128), then `History.step`. For a batch of
records joined in one buffer, the headers are read and the items walked for all records per round, the
layouts checked, keys compared as 8-byte words, and the value texts joined one per line and parsed at
once (pyarrow's float parser when all are plain JSON numbers, else one `json.loads`).

A record is left to the per-record reader (`fallback`) when any of its items has another layout (media,
nested dicts, a key of several parts), any value is a string, dict, list or null, a key repeats, its step is
neither a finite number under 2**53 nor wandb's own step, or the key is no UTF-8: what is decoded here is
what the per-record reader gives for the same record (tests/test_collectors_wandb_bulk.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from collectors.readers.columnar import Points
from collectors.readers.wandb.history import STEP_KEYS

_KEY_FIELDS = np.array([0x0A, 0x12], dtype=np.uint8)  # HistoryItem.key, HistoryItem.nested_key
_NOT_PLAIN = np.array([ord('"'), ord("{"), ord("[")], dtype=np.uint8)  # strings, dicts, lists
BATCH = 2048  # history records decoded together
_EXACT = 2.0**53  # a step beyond this is not exact as a float: the per-record reader takes it


class BulkHistory:
    """History records gathered by `add(raw, order)` and decoded by `flush()` into `points`; the records it
    does not take go to `fallback(raw, order)` in arrival order."""

    def __init__(self, points: Points, fallback: Callable[[bytes, int], None]) -> None:
        self.points, self.fallback = points, fallback
        self._raws: list[bytes] = []
        self._orders: list[int] = []

    def add(self, raw: bytes, order: int) -> None:
        self._raws.append(raw)
        self._orders.append(order)

    def flush(self) -> None:
        raws, orders = self._raws, self._orders
        self._raws, self._orders = [], []
        if not raws:
            return
        order_array = np.array(orders, dtype=np.int64)
        # in batches: each pass over the bytes then stays within a few MB (whole-run arrays of hundreds of
        # MB cost more in fresh memory than the passes themselves: 100,000 rows took 12x 20,000 rows)
        taken = np.concatenate([decode(raws[i:i + BATCH], order_array[i:i + BATCH], self.points)
                                for i in range(0, len(raws), BATCH)])
        for raw, order, ok in zip(raws, orders, taken.tolist(), strict=True):
            if not ok:
                self.fallback(raw, order)


def decode(raws: list[bytes], orders: np.ndarray, points: Points) -> np.ndarray:
    """Serialized history `Record`s -> their points added to `points`; returns, per record, whether it was
    taken (bool array, length len(raws))."""
    blob, begin, end = _history_spans(raws)
    take = begin >= 0
    if not take.any():
        return take
    arr = np.frombuffer(blob, dtype=np.uint8)
    starts, rec, tail, ok = _walk(arr, begin, end, take)
    take &= ok
    wandb_step, has_num, ok = _wandb_steps(arr, tail, end, take)
    take &= ok
    item_len = arr[starts + 1].astype(np.int64)
    key_len, good = _layout(arr, starts + 2, item_len)
    take &= _all_per_record(good, rec, len(raws))
    value_at, ends = starts + 7 + key_len, starts + 2 + item_len
    item = take[rec]
    joined = _joined(arr, value_at[item], ends[item])
    if (flagged := _flagged(joined)) is not None:  # a string, dict, list or null: the per-record reader's
        bad = np.zeros(len(starts), dtype=bool)
        bad[np.flatnonzero(item)[flagged]] = True
        take &= _all_per_record(~bad, rec, len(raws))
    local, names = _local_codes(arr, starts + 4, key_len, take[rec])
    take &= _all_per_record(local >= 0, rec, len(raws))
    take &= ~_repeated_key(rec, local, take[rec], len(raws))
    if not take.any():
        return take
    if not np.array_equal(take[rec], item):  # records were dropped since the texts were joined
        item = take[rec]
        joined = _joined(arr, value_at[item], ends[item])
    values = _values(joined, int(item.sum()))
    if values is None:
        return np.zeros(len(raws), dtype=bool)
    rec, local = rec[item], local[item]
    is_bool = np.isin(arr[value_at[item]], np.frombuffer(b"tf", dtype=np.uint8))
    steps, has_step = _steps(rec, local, values, is_bool, wandb_step, has_num, names)
    take &= has_step
    kept = take[rec]
    rec, local = rec[kept], local[kept]
    codes = np.full(len(names), -1, dtype=np.int64)
    distinct, first = np.unique(local, return_index=True)
    for code in distinct[np.argsort(first)].tolist():  # tags registered in the order they first arrive
        codes[code] = points.code(names[code])
    points.add_arrays(steps[rec], codes[local], values[kept], orders[rec])
    return take


_PAD = bytes(8 * 18)  # room past the end: a key's last 8-byte word, a walk's look at a byte after


def _history_spans(raws: list[bytes]) -> tuple[bytes, np.ndarray, np.ndarray]:
    """The records joined (plus padding), and per record where its history's bytes begin and end in that
    blob; -1 where the record is not `num` (field 1, `08 varint`, optional) then `history` (field 2,
    `12 varint(length)`) and nothing after it. Read for all records at once."""
    sizes = np.fromiter(map(len, raws), dtype=np.int64, count=len(raws))
    blob = b"".join(raws) + _PAD
    arr = np.frombuffer(blob, dtype=np.uint8)
    start = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    end = start + sizes
    at = start.copy()
    has_num = arr[at] == 0x08
    at[has_num] += 1 + _varint_len(arr, at[has_num] + 1)
    length_at = np.minimum(at + 1, len(arr) - 8)
    length_len = _varint_len(arr, length_at, limit=5)
    length = np.zeros(len(raws), dtype=np.int64)
    for k in range(5):  # the history's length, a varint of at most 5 bytes
        byte = arr[length_at + k].astype(np.int64)
        length |= np.where(k < length_len, (byte & 0x7F) << (7 * k), 0)
    begin = length_at + length_len
    ok = (arr[np.minimum(at, len(arr) - 1)] == 0x12) & (at < end) & (length_len > 0) & (begin + length == end)
    return blob, np.where(ok, begin, -1), np.where(ok, end, -1)


def _varint_len(arr: np.ndarray, at: np.ndarray, limit: int = 10) -> np.ndarray:
    """Bytes of the varint starting at each position (0 when none ends within `limit` bytes)."""
    size = np.zeros(len(at), dtype=np.int64)
    open_ = np.ones(len(at), dtype=bool)
    for k in range(limit):
        ends_here = open_ & (arr[np.minimum(at + k, len(arr) - 1)] < 0x80)
        size[ends_here] = k + 1
        open_ &= ~ends_here
    return size


def _walk(arr: np.ndarray, begin: np.ndarray, end: np.ndarray,
          live: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The history items (`0a L item`, L < 128) at the start of each history, walked for all records at
    once, one item per round: (item starts in blob order, their record, per record where its items stop,
    per record whether the walk ended inside its history)."""
    pos = np.where(live, begin, 0)
    stop = np.where(live, end, 0)
    ok = np.ones(len(begin), dtype=bool)
    found_rec, found_at = [], []
    active = np.flatnonzero(pos < stop)
    while len(active):
        p = pos[active]
        length = arr[p + 1]
        step = (arr[p] == 0x0A) & (length < 0x80)
        ok[active[(arr[p] == 0x0A) & (length >= 0x80)]] = False
        active, p = active[step], p[step]
        found_rec.append(active)
        found_at.append(p)
        pos[active] = p + 2 + length[step]
        active = active[pos[active] < stop[active]]
    rec = np.concatenate(found_rec) if found_rec else np.zeros(0, dtype=np.int64)
    at = np.concatenate(found_at) if found_at else np.zeros(0, dtype=np.int64)
    order = np.argsort(at, kind="stable")
    return at[order], rec[order], pos, ok & (pos <= stop)


def _wandb_steps(arr: np.ndarray, tail: np.ndarray, end: np.ndarray,
                 live: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What follows the items: nothing, or `History.step` (`12 L 08 varint`, or `12 00` for 0). Per record
    wandb's step.num, whether it has one, and whether the tail was one of those (all records at once)."""
    size = np.where(live, end - tail, -1)
    t = np.where(live, tail, 0)
    head = (arr[t] == 0x12) & (arr[t + 1] == np.maximum(size - 2, 0))
    zero = (size == 2) & head
    varint = (size >= 4) & (size <= 13) & head & (arr[t + 2] == 0x08)
    value = np.zeros(len(t), dtype=np.uint64)
    for k in range(10):  # byte k of the varint: continued before its last byte, not at it
        byte = arr[t + 3 + k]
        inside = k < size - 3
        last = k == size - 4
        varint &= ~inside | np.where(last, byte < 0x80, byte >= 0x80)
        value |= np.where(inside, (byte.astype(np.uint64) & np.uint64(0x7F)) << np.uint64(7 * k), np.uint64(0))
    ok = (size == 0) | zero | varint
    return np.where(varint, value.view(np.int64), 0), zero | varint, ok


def _layout(arr: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(key length, whether the item at `starts` of `lens` bytes is exactly key + value_json, both
    lengths in one byte and non-zero)."""
    last = len(arr) - 1
    key_len = arr[starts + 1].astype(np.int64)
    value_len = arr[np.minimum(starts + 4 + key_len, last)].astype(np.int64)
    good = ((lens >= 6) & np.isin(arr[starts], _KEY_FIELDS) & (key_len >= 1) & (key_len < 0x80)
            & (arr[np.minimum(starts + 2 + key_len, last)] == 0x82)
            & (arr[np.minimum(starts + 3 + key_len, last)] == 0x01)
            & (value_len >= 1) & (value_len < 0x80) & (lens == 5 + key_len + value_len))
    return key_len, good


def _joined(arr: np.ndarray, value_at: np.ndarray, ends: np.ndarray) -> bytes:
    """The value texts [value_at, ends), one per line (the padding guarantees a byte after each)."""
    if not len(value_at):
        return b""
    text = arr.copy()
    inside = _mask(len(arr), value_at, ends)
    text[ends] = ord("\n")
    inside[ends] = True
    return text[inside].tobytes()[:-1]


def _flagged(joined: bytes) -> np.ndarray | None:
    """Which values (by position) hold a string, dict, list or null; None when none does."""
    text = np.frombuffer(joined, dtype=np.uint8)
    odd = (text == _NOT_PLAIN[0]) | (text == _NOT_PLAIN[1]) | (text == _NOT_PLAIN[2])
    odd[:-1] |= (text[:-1] == ord("n")) & (text[1:] == ord("u"))  # "null"
    hit = np.flatnonzero(odd)
    if not len(hit):
        return None
    return np.searchsorted(np.flatnonzero(text == ord("\n")), hit)  # a byte's value: the lines before it


def _mask(n: int, begin: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Bytes inside any of the ranges [begin, end), which neither overlap nor are empty."""
    delta = np.zeros(n + 1, dtype=np.int8)
    delta[begin] = 1
    delta[end] = -1
    return np.cumsum(delta[:-1], dtype=np.int8).view(bool)


def _all_per_record(ok: np.ndarray, rec: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(rec[~ok], minlength=n) == 0


def _local_codes(arr: np.ndarray, key_at: np.ndarray, key_len: np.ndarray,
                 wanted: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Per item, the index of its key among the distinct keys of the `wanted` items, in order of first
    arrival (-1 for the other items and for a key that is no UTF-8), and those keys as text. Keys are
    compared as 8-byte words (16 at most: a key is under 128 bytes), read from 8 views of the blob shifted
    by 0-7 bytes, so no key is cut out one by one."""
    picked = np.flatnonzero(wanted)
    codes = np.full(len(key_at), -1, dtype=np.int64)
    if not len(picked):
        return codes, []
    at, n = key_at[picked], key_len[picked]
    words = _words(arr, at, n)
    hashed = np.zeros(len(picked), dtype=np.uint64)
    for col in words:
        hashed = hashed * np.uint64(0x100000001B3) ^ col
    hashed ^= n.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    inverse = pd.factorize(hashed)[0]  # numbered in order of first arrival
    # the first item of each key: numbered by arrival, key c first shows where the running maximum reaches c
    first = np.flatnonzero(np.diff(np.maximum.accumulate(inverse), prepend=-1) > 0)
    if not all((col == col[first][inverse]).all() for col in [n, *words]):
        return _local_codes_slow(arr, at, n, picked, codes)  # two keys with one hash: compare them as bytes
    names: list[str | None] = []
    for i in first.tolist():
        try:
            names.append(arr[at[i]:at[i] + n[i]].tobytes().decode("utf-8"))
        except UnicodeDecodeError:
            names.append(None)
    valid = np.array([name is not None for name in names], dtype=bool)
    codes[picked] = np.where(valid[inverse], inverse, -1)
    return codes, [name or "" for name in names]


def _words(arr: np.ndarray, at: np.ndarray, n: np.ndarray) -> list[np.ndarray]:
    """The bytes [at, at + n) as little-endian 8-byte words, one uint64 array per word, zero past n."""
    usable = (len(arr) // 8 - 1) * 8
    views = [np.frombuffer(arr.data, dtype="<u8", count=(usable - s) // 8, offset=s) for s in range(8)]
    shift = at % 8
    groups = [(np.flatnonzero(shift == s), s) for s in range(8)]
    out = []
    for k in range(int((n.max() + 7) // 8)):
        word = np.empty(len(at), dtype=np.uint64)
        for rows, s in groups:
            word[rows] = views[s][(at[rows] - s) // 8 + k]
        keep = np.clip(n - 8 * k, 0, 8).astype(np.uint64)  # bytes of this word inside the key
        out.append(word & np.where(keep == 8, np.uint64(0xFFFFFFFFFFFFFFFF),
                                   (np.uint64(1) << (np.uint64(8) * keep)) - np.uint64(1)))
    return out


def _local_codes_slow(arr: np.ndarray, at: np.ndarray, n: np.ndarray, picked: np.ndarray,
                      codes: np.ndarray) -> tuple[np.ndarray, list[str]]:
    keys = [arr[a:a + k].tobytes() for a, k in zip(at.tolist(), n.tolist(), strict=True)]
    index = dict.fromkeys(keys, -1)
    names: list[str] = []
    for key in index:
        try:
            names.append(key.decode("utf-8"))
        except UnicodeDecodeError:
            names.append("")
            continue
        index[key] = len(names) - 1
    codes[picked] = [index[k] for k in keys]
    return codes, names


def _repeated_key(rec: np.ndarray, local: np.ndarray, wanted: np.ndarray, n: int) -> np.ndarray:
    """Records in which a key appears twice (which value counts is the per-record reader's call)."""
    width = int(local.max()) + 2
    pair = rec[wanted] * width + local[wanted]
    if n * width <= 1 << 24:  # a count per (record, key): one pass
        return (np.bincount(pair, minlength=n * width).reshape(n, width) > 1).any(axis=1)
    uniq, count = np.unique(pair, return_counts=True)
    bad = np.zeros(n, dtype=bool)
    bad[uniq[count > 1] // width] = True
    return bad


def _values(joined: bytes, count: int) -> np.ndarray | None:
    """The value texts, one per line, as floats; None unless that gives `count` numbers (the records then
    go to the per-record reader). Texts that are all plain JSON numbers (`json_numbers`) are parsed by
    pyarrow's CSV reader (its float parser rounds correctly, as Python's does), 4x faster than json.loads
    here; anything else (NaN, Infinity, true, false) by one json.loads of them all."""
    import json

    if (plain := json_numbers(joined)) is not None:
        try:
            out = _arrow_floats(joined)
        except (ValueError, TypeError):
            out = None
        if out is not None and out.shape == (count,):
            negative_zero = np.flatnonzero((out == 0) & np.signbit(out))
            out[negative_zero[~plain[negative_zero]]] = 0.0  # JSON's -0 is the integer 0, not the float -0.0
            return out
    try:
        out = np.array(json.loads(b"[" + joined.replace(b"\n", b",") + b"]"), dtype=np.float64)
    except (ValueError, TypeError, OverflowError):
        return None
    return out if out.shape == (count,) else None


# byte classes of a JSON number, and which class may follow which (a line break ends a number; a number
# starts with a digit or a minus; a sign, a dot or an exponent is followed by a digit, the exponent also
# by a sign; a digit by anything but a sign)
SEP, ZERO, DIGIT, MINUS, PLUS, DOT, EXP, OTHER = range(8)
_CLASS = np.full(256, OTHER, dtype=np.uint8)
_CLASS[ord("\n")], _CLASS[ord("0")], _CLASS[ord("-")], _CLASS[ord("+")], _CLASS[ord(".")] = SEP, ZERO, MINUS, PLUS, DOT
_CLASS[ord("1"):ord("9") + 1] = DIGIT
_CLASS[ord("e")] = _CLASS[ord("E")] = EXP
_FOLLOWS = np.zeros(64, dtype=bool)
for _a, _bs in {SEP: (ZERO, DIGIT, MINUS), MINUS: (ZERO, DIGIT), PLUS: (ZERO, DIGIT), DOT: (ZERO, DIGIT),
                EXP: (ZERO, DIGIT, MINUS, PLUS), ZERO: (ZERO, DIGIT, DOT, EXP, SEP),
                DIGIT: (ZERO, DIGIT, DOT, EXP, SEP)}.items():
    _FOLLOWS[[_a * 8 + _b for _b in _bs]] = True


_TWICE = np.array([DOT * 8 + DOT, EXP * 8 + EXP, EXP * 8 + DOT], dtype=np.uint8)


def json_numbers(joined: bytes) -> np.ndarray | None:
    """Per line, whether its number has a fraction or exponent, when every line is a JSON number
    (`-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`); None when any line is not (a literal, or text that
    JSON would refuse). Checked on byte classes: each pair of neighbours (`_FOLLOWS`), no leading zero, and
    in the sequence of separators, dots and exponents no dot or exponent twice in a line, nor a dot after
    the exponent."""
    cls = _CLASS[np.frombuffer(b"\n" + joined + b"\n", dtype=np.uint8)]
    if not _FOLLOWS[cls[:-1] * np.uint8(8) + cls[1:]].all():
        return None
    digit_next = (cls[2:] == ZERO) | (cls[2:] == DIGIT)
    zero = np.flatnonzero((cls[1:-1] == ZERO) & digit_next) + 1  # a 0 followed by a digit: a leading zero?
    if ((cls[zero - 1] == SEP) | ((cls[zero - 1] == MINUS) & (cls[np.maximum(zero - 2, 0)] == SEP))).any():
        return None
    marks = cls[(cls == SEP) | (cls == DOT) | (cls == EXP)]
    if np.isin(marks[:-1] * np.uint8(8) + marks[1:], _TWICE).any():
        return None
    return np.diff(np.flatnonzero(marks == SEP)) > 1  # a line with a dot or an exponent


def _arrow_floats(joined: bytes) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(
        pa.py_buffer(joined),
        read_options=pacsv.ReadOptions(column_names=["v"], use_threads=False),
        parse_options=pacsv.ParseOptions(quote_char=False, double_quote=False, escape_char=False),
        convert_options=pacsv.ConvertOptions(column_types={"v": pa.float64()}, null_values=[],
                                             strings_can_be_null=False))
    return table.column(0).to_numpy().copy()


def _steps(rec: np.ndarray, local: np.ndarray, values: np.ndarray, is_bool: np.ndarray, wandb_step: np.ndarray,
           has_num: np.ndarray, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per record: the trainer's step, the value of the first STEP_KEYS key it holds when that is a number
    (not a bool), finite and exact as a float, else wandb's `step.num`; and whether it has either. A step
    value beyond 2**53 is left to the per-record reader (no step here), which keeps it exact."""
    n = len(has_num)
    chosen = np.full(n, np.nan)
    present = np.zeros(n, dtype=bool)
    usable_type = np.zeros(n, dtype=bool)
    for key in reversed(STEP_KEYS):  # the first key of STEP_KEYS present wins: written last
        if key not in names:
            continue
        at = np.flatnonzero(local == names.index(key))
        chosen[rec[at]] = values[at]
        present[rec[at]] = True
        usable_type[rec[at]] = ~is_bool[at]
    number = present & usable_type & np.isfinite(chosen)
    exact = number & (np.abs(chosen) < _EXACT)
    steps = np.where(exact, np.trunc(np.where(exact, chosen, 0.0)).astype(np.int64), wandb_step)
    return steps, exact | (has_num & ~number)
