"""A TRL run's GRPOConfig from its `training_args.bin`, read without torch, transformers or trl, and safely.

`Trainer` saves its arguments with `torch.save(args)`: a zip whose `*/data.pkl` pickles the GRPOConfig
dataclass (its fields as a state dict) plus enums (`SchedulerType("linear")`), `torch.device`, accelerate's
state. Unpickling that with `pickle.load` would import those classes and run whatever a tampered file names,
so the unpickler here never imports anything: every global becomes an inert placeholder class that only
records its constructor arguments and state. Enum-like placeholders (one plain argument) turn into that
argument, which is what `TrainingArguments.to_dict()` writes for them too.
"""

from __future__ import annotations

import io
import pickle
import zipfile
import zlib
from pathlib import Path
from typing import Any

from collectors.meta import RunError, flatten_config

ARGS_FILE = "training_args.bin"
_PRIMITIVE = (str, int, float, bool, type(None))
_RUNTIME = ("distributed_state",)  # accelerate's process state, cached on the object: not an argument


class _Placeholder:
    """Stands in for any class the pickle names; never calls into the real one."""

    qualname = "?"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args, self.state = args, None

    def __setstate__(self, state: Any) -> None:
        self.state = state

    def __setitem__(self, key: Any, value: Any) -> None:  # dict subclasses are rebuilt item by item
        if not isinstance(self.state, dict):
            self.state = {}
        self.state[key] = value


class _InertUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> type:
        return type(name, (_Placeholder,), {"qualname": f"{module}.{name}"})

    def persistent_load(self, pid: Any) -> None:
        return None  # a tensor storage: not part of a config


def _plain(value: Any, depth: int = 0) -> Any:
    """Placeholders and containers -> JSON-like values (enum -> its value, dataclass -> its field dict)."""
    if depth > 20:
        return "..."
    if isinstance(value, _PRIMITIVE):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, _Placeholder):
        if value.state is None and len(value.args) == 1 and isinstance(value.args[0], _PRIMITIVE):
            return value.args[0]
        if isinstance(value.state, dict):
            return {str(k): _plain(v, depth + 1) for k, v in value.state.items() if not str(k).startswith("_")}
        return value.qualname
    return repr(value)


def _first_object(raw: bytes) -> Any:
    """The pickled object: the zip format holds one pickle; the legacy format (torch < 1.6) a stream of
    pickles, magic number, protocol version and system info first, then the object."""
    stream = io.BytesIO(raw)
    obj = _InertUnpickler(stream).load()
    for _ in range(3):
        if isinstance(obj, _Placeholder) or stream.tell() >= len(raw):
            break
        obj = _InertUnpickler(stream).load()
    return obj


def _pickle_bytes(path: Path) -> bytes:
    """The pickle inside a torch.save zip, or the whole file when it is no zip (the legacy format)."""
    try:
        with zipfile.ZipFile(path) as z:
            pkl = next((n for n in z.namelist() if n.endswith("/data.pkl") or n == "data.pkl"), None)
            if pkl is None:
                raise RunError(f"{path}: no data.pkl inside; not a torch.save file")
            return z.read(pkl)
    except zipfile.BadZipFile:
        pass  # a CRC error in a zip also lands here; read as a plain pickle, it then fails as one
    except (EOFError, ValueError, RuntimeError, NotImplementedError, zlib.error):  # cut short, encrypted, packed oddly
        raise RunError(f"{path}: a damaged zip (cut short, or packed in a way it cannot be read)") from None
    return path.read_bytes()  # the legacy (pre-zip) torch format starts with a plain pickle


def read_training_args(path: Path) -> dict[str, Any]:
    """The flat config saved in a TRL/transformers `training_args.bin`; RunError naming the file otherwise.

    Secrets are not kept: fields named `*_token` (hub tokens) are redacted, as `to_dict()` does.
    """
    try:
        raw = _pickle_bytes(path)
    except OSError as e:
        raise RunError(f"{path}: cannot read ({e.strerror})") from e
    try:
        obj = _first_object(raw)
    except Exception as e:  # any malformed pickle is the same "cannot read" for the user
        raise RunError(f"{path}: not a readable training-arguments pickle (damaged, cut short, or not written by "
                       "torch.save)") from e
    fields = _plain(obj)
    if not isinstance(fields, dict):
        raise RunError(f"{path}: holds {str(fields)[:80]!r}, not a training-arguments object")
    for key in _RUNTIME:
        fields.pop(key, None)
    for key, value in fields.items():
        if key.endswith("_token") and value is not None:
            fields[key] = "<redacted>"
    return flatten_config(fields)
