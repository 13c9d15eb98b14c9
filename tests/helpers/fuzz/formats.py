"""Record-level edits of the binary formats, framed again with valid checksums: TensorBoard event files
(TFRecord framing, masked CRC32C) and wandb run files (LevelDB-log framing, CRC32).

A byte edit of such a file is caught by its checksum, so it never reaches what a reader does with a record's
contents: the `args` text summary transformers writes (read as the config), an hparams summary, a scalar's
tag, a wandb config item or history value. These edits decode the records with the writers' own protobufs,
change one thing inside, and write every record back with correct framing, as a writer that logged that
content would have. Each `*_edit` returns the new bytes, or None when `data` is not that format (the caller
falls back to an edit of another kind).
"""

from __future__ import annotations

import json
import random
import struct
import zlib
from collections.abc import Callable

from collectors.readers.tensorboard.tfrecord import CRC32C, masked

# -- TensorBoard -------------------------------------------------------------------------------------------
_TB_HEAD = struct.Struct("<QI")
_U32 = struct.Struct("<I")
CONFIG_TAG = "args/text_summary"  # what transformers' TensorBoardCallback writes TrainingArguments under


def _crc32c(data: bytes) -> int:
    if CRC32C is not None:
        return CRC32C(data)
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import crc32c

    return crc32c(data)


def is_event_file(data: bytes) -> bool:
    """Whether `data` begins with an event file's first record (its file_version event)."""
    if len(data) < 12:
        return False
    length, _ = _TB_HEAD.unpack_from(data, 0)
    if length > 1024 or 12 + length > len(data):
        return False
    try:
        from tensorboard.compat.proto.event_pb2 import Event

        return bool(Event.FromString(data[12:12 + length]).file_version)
    except Exception:  # noqa: BLE001 - anything that does not parse is not an event file
        return False


def tb_records(data: bytes) -> list[bytes] | None:
    """The records of an event file, or None when `data` is not one whole, undamaged event file."""
    if not is_event_file(data):
        return None
    out, pos = [], 0
    while pos < len(data):
        if pos + 12 > len(data):
            return None
        length, _ = _TB_HEAD.unpack_from(data, pos)
        end = pos + 12 + length + 4
        if end > len(data):
            return None
        out.append(data[pos + 12:pos + 12 + length])
        pos = end
    return out


def tb_frame(records: list[bytes]) -> bytes:
    parts = []
    for r in records:
        head = struct.pack("<Q", len(r))
        parts += [head, _U32.pack(masked(_crc32c(head))), r, _U32.pack(masked(_crc32c(r)))]
    return b"".join(parts)


def _event(step: int, summary) -> bytes:
    from tensorboard.compat.proto.event_pb2 import Event

    return Event(wall_time=1.7e9 + step, step=step, summary=summary).SerializeToString()


def _text_summary(tag: str, text: bytes):
    from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
    tensor = TensorProto(dtype=7, string_val=[text], tensor_shape=TensorShapeProto())  # DT_STRING
    return Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=tensor)])


def _scalars(tb: list[bytes]) -> list[tuple[int, str]]:
    """(step, tag) of the scalar values in the records."""
    from tensorboard.compat.proto.event_pb2 import Event

    out = []
    for r in tb[:2000]:
        try:
            e = Event.FromString(r)
        except Exception:  # noqa: BLE001, S112
            continue
        out += [(e.step, v.tag) for v in e.summary.value if v.WhichOneof("value") == "simple_value"]
    return out


def tb_config_edit(data: bytes, rng: random.Random, poison: Callable[[], bytes]) -> bytes | None:
    """The `args` text summary (the config) made to hold `poison()` (raw JSON text) at one of its values, or
    replaced by it whole; a run without one gets one. Or an hparams summary whose values hold the poison."""
    records = tb_records(data)
    if records is None:
        return None
    from tensorboard.compat.proto.event_pb2 import Event

    if rng.random() < 0.25:  # the hparams plugin's summary: its values as text (a config a user logged)
        from tensorboard.plugins.hparams import summary_v2 as hp

        raw = poison()
        text = raw.decode("utf-8", "surrogatepass") if rng.random() < 0.5 else raw.decode("utf-8", "replace")
        try:
            summary = hp.hparams_pb({"config": text.encode("utf-8", "replace").decode(), "lr": 1e-6})
        except Exception:  # noqa: BLE001 - the hparams writer refuses some texts; put the poison in `args`
            summary = None
        if summary is not None:
            at = rng.randrange(1, len(records) + 1)
            return tb_frame(records[:at] + [_event(0, summary)] + records[at:])
    for i, r in enumerate(records):
        try:
            e = Event.FromString(r)
        except Exception:  # noqa: BLE001, S112
            continue
        for v in e.summary.value:
            if v.tag in (CONFIG_TAG, "args") and len(v.tensor.string_val) == 1:
                v.tensor.string_val[0] = poisoned_json(v.tensor.string_val[0], rng, poison)
                return tb_frame(records[:i] + [e.SerializeToString()] + records[i + 1:])
    text = poisoned_json(b'{"learning_rate": 1e-06, "seed": 42, "output_dir": "out"}', rng, poison)
    return tb_frame(records[:1] + [_event(0, _text_summary(CONFIG_TAG, text))] + records[1:])


def tb_rename_edit(data: bytes, rng: random.Random, variant: Callable[[str], str]) -> bytes | None:
    """A scalar logged again at its step under another tag that lands on the same column (`variant`)."""
    records = tb_records(data)
    if records is None:
        return None
    from tensorboard.compat.proto.summary_pb2 import Summary

    scalars = _scalars(records)
    step, tag = rng.choice(scalars) if scalars else (1, "train/reward")
    values = [Summary.Value(tag=variant(tag), simple_value=rng.choice([0.5, 2.0, float("nan"), 1e30]))]
    if rng.random() < 0.5:
        values.append(Summary.Value(tag=tag, simple_value=0.25))  # both in one event
    at = rng.randrange(1, len(records) + 1)
    return tb_frame(records[:at] + [_event(step, Summary(value=values))] + records[at:])


# -- wandb -------------------------------------------------------------------------------------------------
_WB_HEADER = struct.pack("<4sHB", b":W&B", 0xBEE1, 0)
_BLOCK = 32 * 1024
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4


def wandb_records(data: bytes) -> list[bytes] | None:
    """The records of a run file, or None when `data` is not one with undamaged framing."""
    if not data.startswith(_WB_HEADER):
        return None
    out, pending, pos = [], None, len(_WB_HEADER)
    while pos < len(data):
        block_end = (pos // _BLOCK + 1) * _BLOCK
        if block_end - pos < 7:
            pos = block_end
            continue
        if pos + 7 > len(data):
            return None
        crc, length, kind = struct.unpack_from("<IHB", data, pos)
        if crc == 0 and length == 0 and kind == 0:
            pos = block_end
            continue
        body = data[pos + 7:pos + 7 + length]
        if len(body) < length or pos + 7 + length > block_end or zlib.crc32(bytes([kind]) + body) != crc:
            return None
        if kind == _FULL:
            out.append(body)
        elif kind == _FIRST:
            pending = body
        elif kind in (_MIDDLE, _LAST) and pending is not None:
            pending += body
            if kind == _LAST:
                out.append(pending)
                pending = None
        else:
            return None
        pos += 7 + length
    return out


def wandb_frame(records: list[bytes]) -> bytes:
    """wandb's LevelDB-log framing of `records` (collectors/readers/wandb/framing.py), in linear time: a record of
    50 MB (tests/helpers/hostile.py) is sliced by a memoryview, not copied once per block."""
    out, room = [_WB_HEADER], _BLOCK - len(_WB_HEADER)
    for whole in records:
        rest, first = memoryview(whole), True
        while True:
            if room < 7:
                out.append(b"\x00" * room)
                room = _BLOCK
            piece = bytes(rest[:room - 7])
            rest = rest[len(piece):]
            kind = (_FULL if first else _LAST) if not rest else (_FIRST if first else _MIDDLE)
            out.append(struct.pack("<IHB", zlib.crc32(bytes([kind]) + piece), len(piece), kind) + piece)
            room -= 7 + len(piece)
            first = False
            if not rest:
                break
    return b"".join(out)


def _kinds(records: list[bytes]) -> list[str | None]:
    """The record type of each record (`history`, `config`, `run`, ...), read off its first bytes."""
    from wandb.proto import wandb_internal_pb2 as pb

    from collectors.readers.wandb.history import record_type

    fields = {f.number: f.name for f in pb.Record.DESCRIPTOR.oneofs_by_name["record_type"].fields}
    numbers = frozenset(fields)
    return [fields.get(record_type(r, numbers)) for r in records]


def _parse(raw: bytes):
    from wandb.proto import wandb_internal_pb2 as pb

    try:
        return pb.Record.FromString(raw)
    except Exception:  # noqa: BLE001 - a record that does not parse is left as it is
        return None


def wandb_config_edit(data: bytes, rng: random.Random, poison: Callable[[], bytes]) -> bytes | None:
    """One config item (a config record's, or the run record's) made to hold `poison()` as its value_json, at
    one of its values or whole; or a config record of one such item added."""
    from wandb.proto import wandb_internal_pb2 as pb

    records = wandb_records(data)
    if records is None:
        return None
    kinds = _kinds(records)
    holders = []
    for i, kind in enumerate(kinds):
        if kind in ("config", "run") and (rec := _parse(records[i])) is not None:
            config = rec.config if kind == "config" else rec.run.config
            if len(config.update):
                holders.append((i, rec, config))
    if holders and rng.random() < 0.8:
        i, rec, config = rng.choice(holders)
        item = config.update[rng.randrange(len(config.update))]
        item.value_json = poisoned_json(item.value_json.encode(), rng, poison).decode("utf-8", "surrogatepass")
        return wandb_frame(records[:i] + [rec.SerializeToString()] + records[i + 1:])
    value = poisoned_json(b'{"value": {"lr": 1e-06, "seed": 1}}', rng, poison).decode("utf-8", "surrogatepass")
    rec = pb.Record(config=pb.ConfigRecord(update=[pb.ConfigItem(key=rng.choice(["actor", "lr", "_wandb", "a.b"]),
                                                                 value_json=value)]))
    at = rng.randrange(1, len(records) + 1)
    return wandb_frame(records[:at] + [rec.SerializeToString()] + records[at:])


def history_record(step: int, values: dict[str, str]) -> bytes:
    """A serialized history Record: wandb's `_step`, `_timestamp`, `_runtime` and `values` (key -> value_json)."""
    from wandb.proto import wandb_internal_pb2 as pb

    items = [pb.HistoryItem(key="_step", value_json=str(step)),
             pb.HistoryItem(key="_timestamp", value_json=repr(1.7e9 + step)),
             pb.HistoryItem(key="_runtime", value_json=str(step))]
    items += [pb.HistoryItem(key=k, value_json=v) for k, v in values.items()]
    return pb.Record(history=pb.HistoryRecord(item=items, step=pb.HistoryStep(num=step))).SerializeToString()


def wandb_history_edit(data: bytes, rng: random.Random, poison: Callable[[], bytes] | None = None,
                       variant: Callable[[str], str] | None = None) -> bytes | None:
    """In one history record: an item's value_json made `poison()`, or an item added under a `variant` of an
    existing key (a key logged twice under names that land on one column). A run file without history (a run
    that died before wandb synced a metric) gets a few rows first, so the edit has one to land in."""
    records = wandb_records(data)
    if records is None:
        return None
    history = [i for i, kind in enumerate(_kinds(records)) if kind == "history"]
    if not history:
        at = rng.randrange(1, len(records) + 1)
        rows = [history_record(s, {"train/reward": repr(0.1 * s), "train/loss": "0.5", "train/global_step": str(s)})
                for s in range(1, 6)]
        records = records[:at] + rows + records[at:]
        history = list(range(at, at + len(rows)))
    i = rng.choice(history)
    rec = _parse(records[i])
    if rec is None or not len(rec.history.item):
        return wandb_frame(records)
    items = rec.history.item
    item = items[rng.randrange(len(items))]
    key = ".".join(item.nested_key) if item.nested_key else item.key
    if variant is not None:
        value = item.value_json or "1.5"
        items.add(key=variant(key), value_json=rng.choice([value, "0.5", "null", '"x"']))
    else:
        item.value_json = poisoned_json(item.value_json.encode() or b"1", rng, poison).decode("utf-8",
                                                                                              "surrogatepass")
    return wandb_frame(records[:i] + [rec.SerializeToString()] + records[i + 1:])


# -- JSON text with raw poison -----------------------------------------------------------------------------
def poisoned_json(text: bytes, rng: random.Random, poison: Callable[[], bytes]) -> bytes:
    """`text` (a JSON document) with one value, at any depth, replaced by the raw JSON text `poison()`; the
    whole document replaced when it is no JSON or has no value inside."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return poison()
    marker = "\x00poison\x00"
    paths: list[tuple] = []

    def walk(node: object, path: tuple) -> None:  # iterative enough: configs are shallow
        if len(paths) > 5000 or len(path) > 50:
            return
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            paths.append(path + (k,))
            walk(v, path + (k,))

    walk(doc, ())
    if not paths or rng.random() < 0.1:
        return poison()
    path = rng.choice(paths)
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = marker
    return json.dumps(doc).encode().replace(json.dumps(marker).encode(), poison(), 1)
