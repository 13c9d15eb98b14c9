"""wandb history records decoded together with numpy: Python work per batch of records, none per value.

A history record is `08 num 12 L history`; its items, as wandb-core writes them for `run.log({name:
number})`, are each `0a L 0a|12 KL key 82 01 VL value_json` (the key, field 1, or a one-part `nested_key`,
field 2, then the value's JSON text, field 16; lengths under 128), then `History.step`. For a batch of
records joined in one buffer, the headers are read and the items walked for all records per round, the
layouts checked; keys and value texts are then handed to arrow as ranges of that buffer (a binary array
over it, nothing cut out in Python): keys numbered by its hash table, texts gathered one per line, checked
to be plain JSON numbers on byte classes (`bytes.translate`) and parsed by its string-to-float cast (a
logged NaN, infinity or bool among them too; anything else by one `json.loads`).

A record is left to the per-record reader (`fallback`) when any of its items has another layout (media,
nested dicts, a key of several parts), any value is a string, dict, list or null, a key repeats, its step is
neither a finite number under 2**53 nor wandb's own step, or the key is no UTF-8: what is decoded here is
what the per-record reader gives for the same record (tests/collectors/test_collectors_wandb_bulk.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from collectors.readers.columnar import Points
from collectors.readers.wandb.history import STEP_KEYS

_KEY_FIELDS = np.array([0x0A, 0x12], dtype=np.uint8)  # HistoryItem.key, HistoryItem.nested_key
_NOT_FLAGS = bytes(sorted(set(range(256)) - set(b'"{[n')))  # all but how strings, dicts, lists, null begin
BATCH = 2048  # history records decoded together
_EXACT = 2.0**53  # a step beyond this is not exact as a float: the per-record reader takes it
WIDE = 2**31  # bytes from which arrow's 32-bit offsets would wrap: 64-bit ones instead


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
        for i in np.flatnonzero(~taken).tolist():
            self.fallback(raws[i], orders[i])


def decode(raws: list[bytes], orders: np.ndarray, points: Points) -> np.ndarray:
    """Serialized history `Record`s -> their points added to `points`; returns, per record, whether it was
    taken (bool array, length len(raws))."""
    blob, begin, end = _history_spans(raws)
    take = begin >= 0
    if not take.any():
        return take
    arr = np.frombuffer(blob, dtype=np.uint8)
    starts, rec, tail = _walk(arr, begin, end, take)
    wandb_step, has_num, ok = _wandb_steps(arr, tail, end, take)
    take &= ok
    item_len = arr[starts + 1].astype(np.int64)
    key_len, good = _layout(arr, starts + 2, item_len)
    take &= _all_per_record(good, rec, len(raws))
    value_at, ends = starts + 7 + key_len, starts + 2 + item_len
    item = take[rec]
    text, breaks = _joined(blob, value_at[item], ends[item])
    if (flagged := _flagged(text, breaks)) is not None:  # a string, dict, list or null: the per-record reader's
        bad = np.zeros(len(starts), dtype=bool)
        bad[np.flatnonzero(item)[flagged]] = True
        take &= _all_per_record(~bad, rec, len(raws))
    local, names = _local_codes(blob, starts + 4, key_len, take[rec])
    take &= _all_per_record(local >= 0, rec, len(raws))
    take &= ~_repeated_key(rec, local, take[rec], len(raws))
    if not take.any():
        return take
    if not np.array_equal(take[rec], item):  # records were dropped since the texts were joined
        item = take[rec]
        text, breaks = _joined(blob, value_at[item], ends[item])
    values = _values(text, breaks, int(item.sum()))
    if values is None:
        return np.zeros(len(raws), dtype=bool)
    rec, local = rec[item], local[item]
    is_bool = np.isin(arr[value_at[item]], np.frombuffer(b"tf", dtype=np.uint8))
    steps, has_step = _steps(rec, local, values, is_bool, wandb_step, has_num, names)
    take &= has_step
    kept = take[rec]
    rec, local = rec[kept], local[kept]
    codes = np.full(len(names), -1, dtype=np.int64)
    first = np.full(len(names), len(local))  # where each key first arrives (len(local): it does not)
    np.minimum.at(first, local, np.arange(len(local)))
    for code in np.argsort(first)[:int((first < len(local)).sum())].tolist():  # tags registered in that order
        codes[code] = points.code(names[code])
    points.add_arrays(steps[rec], codes[local], values[kept], orders[rec])
    return take


_PAD = bytes(16)  # room past the end: a walk's look at the bytes after a record, the byte after the last value


def _history_spans(raws: list[bytes]) -> tuple[bytes, np.ndarray, np.ndarray]:
    """The records joined (plus padding), and per record where its history's bytes begin and end in that
    blob; -1 where the record is not `num` (field 1, `08 varint`, optional) then `history` (field 2,
    `12 varint(length)`) and nothing after it. Read for all records at once."""
    sizes = np.fromiter(map(len, raws), dtype=np.int64, count=len(raws))
    blob = b"".join([*raws, _PAD])
    arr = np.frombuffer(blob, dtype=np.uint8)
    start = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    end = start + sizes
    at = start.copy()
    has_num = arr[at] == 0x08
    at[has_num] += 1 + varint_len(arr, at[has_num] + 1)
    length_at = np.minimum(at + 1, len(arr) - 8)
    length_len = varint_len(arr, length_at, limit=5)
    length = np.zeros(len(raws), dtype=np.int64)
    for k in range(5):  # the history's length, a varint of at most 5 bytes
        byte = arr[length_at + k].astype(np.int64)
        length |= np.where(k < length_len, (byte & 0x7F) << (7 * k), 0)
    begin = length_at + length_len
    ok = (arr[np.minimum(at, len(arr) - 1)] == 0x12) & (at < end) & (length_len > 0) & (begin + length == end)
    return blob, np.where(ok, begin, -1), np.where(ok, end, -1)


def varint_len(arr: np.ndarray, at: np.ndarray, limit: int = 10) -> np.ndarray:
    """Bytes of the varint starting at each position (0 when none ends within `limit` bytes)."""
    size = np.zeros(len(at), dtype=np.int64)
    open_ = np.ones(len(at), dtype=bool)
    for k in range(limit):
        ends_here = open_ & (arr[np.minimum(at + k, len(arr) - 1)] < 0x80)
        size[ends_here] = k + 1
        open_ &= ~ends_here
    return size


def _walk(arr: np.ndarray, begin: np.ndarray, end: np.ndarray,
          live: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The history items (`0a L item`, L < 128) at the start of each history, walked for all records at
    once, one item per round: (item starts in blob order, their record, per record where its items stop:
    its end, or an item of another kind, which `_wandb_steps` refuses)."""
    heads = _u16(arr)  # an item's tag and length in one read
    tail = np.where(live, begin, 0)
    rec = np.flatnonzero(live & (begin < end))
    pos, stop = begin[rec], end[rec]  # of the records still walking, kept compact
    found_rec, found_at = [], []
    while len(rec):
        head = heads[pos]
        item = (head & 0x80FF) == 0x0A
        if not item.all():  # an item of another kind: that record's walk ends
            tail[rec[~item]] = pos[~item]
            rec, pos, stop, head = rec[item], pos[item], stop[item], head[item]
        found_rec.append(rec)
        found_at.append(pos)
        pos = pos + 2 + (head >> 8)
        if not (going := pos < stop).all():
            tail[rec[~going]] = pos[~going]
            rec, pos, stop = rec[going], pos[going], stop[going]
    if not found_rec:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), tail
    # round r found item r of each record still walking: item r of record i goes to first[i] + r
    recs = np.concatenate(found_rec)
    count = np.bincount(recs, minlength=len(begin))
    into = (np.cumsum(count) - count)[recs] + np.repeat(np.arange(len(found_rec)), [len(r) for r in found_rec])
    at, rec = np.empty(len(recs), dtype=np.int64), np.empty(len(recs), dtype=np.int64)
    at[into], rec[into] = np.concatenate(found_at), recs
    return at, rec, tail


def _u16(arr: np.ndarray) -> np.ndarray:
    """Every two neighbouring bytes of `arr` as a little-endian uint16 (a view: element i is arr[i:i + 2])."""
    return np.ndarray(shape=(len(arr) - 1,), dtype="<u2", buffer=arr, strides=(1,))


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


def _joined(blob: bytes, value_at: np.ndarray, ends: np.ndarray) -> tuple[bytes, np.ndarray]:
    """The value texts [value_at, ends) of `blob` in blob order, one per line, as `lines` gives them:
    gathered by arrow (no pass over the other bytes), each with the byte after it (the padding guarantees
    one), which becomes its line break."""
    if not len(value_at):
        return lines(b"")
    _, offsets, data = _spans(blob, value_at, ends + 1).take(np.arange(0, 2 * len(value_at), 2)).buffers()
    width = np.int64 if len(blob) >= WIDE else np.int32  # as `_spans` chose
    breaks = np.frombuffer(offsets, dtype=width, count=len(value_at) + 1).astype(np.int64)
    text = np.empty(int(breaks[-1]) + 1, dtype=np.uint8)
    text[0] = ord("\n")
    text[1:] = np.frombuffer(data, dtype=np.uint8, count=int(breaks[-1]))
    text[breaks[1:]] = ord("\n")
    return text.tobytes(), breaks


def lines(joined: bytes) -> tuple[bytes, np.ndarray]:
    """Texts one per line (`joined`) as the decoder holds them: (`\\n` + joined + `\\n`, the positions of its
    line breaks; line i lies between breaks i and i + 1)."""
    text = b"\n" + joined + b"\n"
    return text, np.flatnonzero(np.frombuffer(text, dtype=np.uint8) == ord("\n"))


def _spans(blob: bytes, begin: np.ndarray, end: np.ndarray):
    """Byte ranges [begin, end) of `blob`, in blob order and not overlapping, as an arrow binary array
    over the blob itself (nothing copied): range i at 2i, the gap after it at 2i + 1, null."""
    import pyarrow as pa

    n = len(begin)
    wide = len(blob) >= WIDE
    offsets = np.empty(2 * n, dtype=np.int64 if wide else np.int32)
    offsets[0::2], offsets[1::2] = begin, end
    bits = np.full((2 * n + 6) // 8, 0x55, dtype=np.uint8)  # valid, null, valid, ... (least significant first)
    spans = pa.Array.from_buffers(pa.large_binary() if wide else pa.binary(), 2 * n - 1,
                                  [pa.py_buffer(bits), pa.py_buffer(offsets), pa.py_buffer(blob)])
    spans.validate(full=True)  # offsets in order and inside the blob: arrow reads the bytes unchecked
    return spans


def _flagged(text: bytes, breaks: np.ndarray) -> np.ndarray | None:
    """Which lines (see `lines`) hold a string, dict, list or null; None when none does."""
    if not text.translate(None, _NOT_FLAGS):  # no quote, brace, bracket or n at all: the common case
        return None
    arr = np.frombuffer(text, dtype=np.uint8)
    odd = (arr == ord('"')) | (arr == ord("{")) | (arr == ord("["))
    odd[:-1] |= (arr[:-1] == ord("n")) & (arr[1:] == ord("u"))  # "null"
    hit = np.flatnonzero(odd)
    return np.searchsorted(breaks, hit) - 1 if len(hit) else None


def _all_per_record(ok: np.ndarray, rec: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(rec[~ok], minlength=n) == 0


def _local_codes(blob: bytes, key_at: np.ndarray, key_len: np.ndarray,
                 wanted: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Per item, the index of its key among the distinct keys of the `wanted` items, in order of first
    arrival (-1 for the other items and for a key that is no UTF-8), and those keys as text. The keys are
    numbered by arrow's hash table over the blob's bytes: no key is cut out one by one."""
    import pyarrow.compute as pc

    codes = np.full(len(key_at), -1, dtype=np.int64)
    picked = np.flatnonzero(wanted)
    if not len(picked):
        return codes, []
    at = key_at[picked]
    encoded = pc.dictionary_encode(_spans(blob, at, at + key_len[picked]))
    indices = encoded.indices.buffers()[1]  # the gaps' slots (null) hold nothing that is read
    found = np.frombuffer(indices, dtype=np.int32, count=2 * len(picked) - 1)[0::2].astype(np.int64)
    names: list[str | None] = []
    for key in encoded.dictionary.to_pylist():
        try:
            names.append(key.decode("utf-8"))
        except UnicodeDecodeError:
            names.append(None)
    valid = np.array([name is not None for name in names], dtype=bool)
    codes[picked] = np.where(valid[found], found, -1)
    return codes, [name or "" for name in names]


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


def _values(text: bytes, breaks: np.ndarray, count: int) -> np.ndarray | None:
    """The texts, one per line (see `lines`), as floats; None unless that gives `count` numbers (the
    records then go to the per-record reader). Texts that are all plain JSON numbers (`json_numbers`),
    or the few literals Python's json reads as numbers (NaN, Infinity, -Infinity, true, false) among them,
    are parsed by arrow's string-to-float cast (its parser rounds correctly, as Python's does), 10x faster
    than json.loads here; anything else by one json.loads of them all."""
    import json

    plain, literals = json_numbers(text, breaks), None
    if plain is None and (found := _literals(text, breaks)) is not None:
        numbers, literals = found
        plain = json_numbers(numbers, breaks)
    if plain is not None:
        try:
            out = _arrow_floats(text if literals is None else numbers, breaks)
        except (ValueError, TypeError):
            out = None
        if out is not None and out.shape == (count,):
            negative_zero = np.flatnonzero((out == 0) & np.signbit(out))
            out[negative_zero[~plain[negative_zero]]] = 0.0  # JSON's -0 is the integer 0, not the float -0.0
            if literals is not None:
                out[literals[0]] = literals[1]
            return out
    try:
        out = np.array(json.loads(b"[" + text[1:-1].replace(b"\n", b",") + b"]"), dtype=np.float64)
    except (ValueError, TypeError, OverflowError):
        return None
    return out if out.shape == (count,) else None


_LITERALS = {b"NaN": np.nan, b"Infinity": np.inf, b"-Infinity": -np.inf, b"true": 1.0, b"false": 0.0}


def _literals(text: bytes, breaks: np.ndarray) -> tuple[bytes, tuple[np.ndarray, np.ndarray]] | None:
    """The lines (see `lines`) that are JSON literals Python's json reads as numbers (a logged NaN, an
    infinity, a bool): (the text with each of them written as a number of 1s, (their lines, their values)),
    or None when there is none or a line begins like one and is something else."""
    arr = np.frombuffer(text, dtype=np.uint8)
    first = breaks[:-1] + 1
    c0, c1 = arr[first], arr[first + 1]
    lines = np.flatnonzero(np.isin(c0, np.frombuffer(b"NItf", dtype=np.uint8)) | ((c0 == ord("-")) & (c1 == ord("I"))))
    if not len(lines):
        return None
    numbers, values = bytearray(text), []
    for line, begin, end in zip(lines.tolist(), first[lines].tolist(), breaks[lines + 1].tolist(), strict=True):
        value = _LITERALS.get(text[begin:end])
        if value is None:
            return None
        numbers[begin:end] = b"1" * (end - begin)
        values.append(value)
    return bytes(numbers), (lines, np.array(values, dtype=np.float64))


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
_CLASS_TABLE = _CLASS.tobytes()  # for bytes.translate
_GOOD_PAIRS = bytes(np.flatnonzero(_FOLLOWS).tolist())  # class pairs (8 * first + second) a number may hold
_TWICE = (bytes([DOT, DOT]), bytes([EXP, EXP]), bytes([EXP, DOT]))


def json_numbers(text: bytes, breaks: np.ndarray) -> np.ndarray | None:
    """Per line (see `lines`), whether its number has a fraction or exponent, when every line is a JSON
    number (`-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`); None when any line is not (a literal, or
    text that JSON would refuse). Checked on byte classes (`bytes.translate`, a C loop): each pair of
    neighbours (`_FOLLOWS`), no leading zero (the first bytes of each line), and in the sequence of line
    breaks, dots and exponents no dot or exponent twice in a line, nor a dot after the exponent."""
    classes = text.translate(_CLASS_TABLE)
    cls = np.frombuffer(classes, dtype=np.uint8)
    if (cls[:-1] * np.uint8(8) + cls[1:]).tobytes().translate(None, _GOOD_PAIRS):
        return None  # a pair of neighbours that no JSON number has
    first = breaks[:-1] + 1
    c0, c1, c2 = cls[first], cls[first + 1], cls[np.minimum(first + 2, len(cls) - 1)]
    digit1, digit2 = (c1 == ZERO) | (c1 == DIGIT), (c2 == ZERO) | (c2 == DIGIT)
    if (((c0 == ZERO) & digit1) | ((c0 == MINUS) & (c1 == ZERO) & digit2)).any():
        return None  # a leading zero
    marks = classes.translate(None, bytes([ZERO, DIGIT, MINUS, PLUS]))  # line breaks, dots, exponents
    if any(twice in marks for twice in _TWICE):
        return None
    return np.diff(np.flatnonzero(np.frombuffer(marks, dtype=np.uint8) == SEP)) > 1  # a dot or an exponent


def _arrow_floats(text: bytes, breaks: np.ndarray) -> np.ndarray:
    """The lines of `text` (between the line breaks at `breaks`) parsed as floats by arrow's cast."""
    import pyarrow as pa
    import pyarrow.compute as pc

    lines = _spans(text, breaks[:-1] + 1, breaks[1:])
    return pc.cast(lines, pa.float64()).to_numpy(zero_copy_only=False)[0::2].copy()


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
