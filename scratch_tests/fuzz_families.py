"""Issue 38's mutation families, for tests/fuzz/mutators.py (tests/helpers/fuzz/ after the layout move): append
this file's functions there (they use its `mutator`, `_pos`, `_parquet_table` and `_parquet_bytes`).

- `null_values`: a Parquet column with some or all values null, its type kept, `step` and `_seq` most often
  (found: "cannot convert float NaN to integer" from a `_seq` of nulls; a null step read as -2**63).
- `endless_line`: a line past linetail.MAX_LINE (NULs, as a sparse or preallocated file reads, or text), ended
  or not (found: a 10 GB sparse log taken into memory whole by one read()).
- `long_record`: a wandb history value or JSON text of several MB, which framing splits over hundreds of
  32 KiB chunks (found: the record joined by bytes + bytes, quadratic).
"""

import random

import pyarrow as pa

ENDLESS = [17 << 20, 24 << 20]  # just past linetail.MAX_LINE (16 MiB): each case stays within the harness's memory


@mutator  # noqa: F821 - defined in mutators.py
def null_values(data: bytes, rng: random.Random) -> bytes:
    """A Parquet column with nulls in it (a damaged part, a writer that lost values), its type kept."""
    table = _parquet_table(data)  # noqa: F821
    if table is None or not table.num_columns or not table.num_rows:
        return data
    names = table.column_names
    pick = [n for n in ("step", "_seq") if n in names]
    name = rng.choice(pick) if pick and rng.random() < 0.7 else rng.choice(names)
    values = table[name].to_pylist()
    for i in range(len(values)) if rng.random() < 0.4 else rng.sample(range(len(values)), rng.randint(1, len(values))):
        values[i] = None
    i = names.index(name)
    try:
        return _parquet_bytes(table.set_column(i, name, pa.array(values, table.schema.field(i).type)))  # noqa: F821
    except (pa.ArrowException, OSError):
        return data


@mutator  # noqa: F821
def endless_line(data: bytes, rng: random.Random) -> bytes:
    """A line longer than any reader keeps: NULs (a sparse or preallocated file) or text, with or without an
    end, at a line's start or at the end of the file."""
    run = (b"\0" if rng.random() < 0.5 else b"x") * rng.choice(ENDLESS)
    p = _pos(data, rng) if rng.random() < 0.5 else len(data)  # noqa: F821
    p = data.rfind(b"\n", 0, p) + 1
    return data[:p] + run + (b"\n" if rng.random() < 0.5 else b"") + data[p:]


LONG = [2 << 20, 8 << 20]  # 64 to 256 chunks of 32 KiB: bytes + bytes joining was quadratic in this count


@mutator  # noqa: F821
def long_record(data: bytes, rng: random.Random) -> bytes:
    """A JSON text of several MB where a reader parses JSON: a wandb history value or config item (framed
    again over hundreds of chunks, valid CRCs), a TensorBoard config text, a JSON value."""
    return _poison(data, rng, lambda: b'"' + b"y" * rng.choice(LONG) + b'"')  # noqa: F821
