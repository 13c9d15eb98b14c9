"""What the base install leaves out, and the one line that says which extra brings it.

`pip install grposcope` reads and diagnoses runs; TensorBoard, wandb, transformers (the TRL callback) and
torch (our trainer) come with extras. A reader or command that needs one imports it through `require`, so a
user without it is told `pip install 'grposcope[tensorboard]'` instead of seeing an ImportError traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from collectors.meta import RunError

# extra -> what it brings, as the message says it
EXTRAS: dict[str, str] = {
    "train": "torch (grpo-train, our trainer)",
    "tensorboard": "the tensorboard package (reading TensorBoard event files)",
    "wandb": "the wandb package (reading wandb runs)",
    "trl": "transformers (GrpoScopeCallback inside a TRL trainer)",
}


class MissingExtra(RunError, ImportError):
    """A RunError (callers print one line) that is also an ImportError (code that tries an import sees one)."""


# what to install before an extra where pip alone would choose badly: torch from PyPI is the CUDA build (GBs of
# CUDA libraries); without a GPU, the CPU build from PyTorch's own index (scripts/install_torch.sh does the same
# in a checkout; a wheel has no scripts/)
CPU_TORCH = "pip install 'torch>=2.2,<3' --index-url https://download.pytorch.org/whl/cpu"
FIRST: dict[str, str] = {"train": f"on a machine without a GPU, first the CPU build of torch: {CPU_TORCH}"}


def install_hint(extra: str) -> str:
    hint = f"pip install 'grposcope[{extra}]'"
    return f"{hint} ({FIRST[extra]})" if extra in FIRST else hint


def require(module: str, extra: str, what: str) -> ModuleType:
    """import_module(module), or MissingExtra: "<what> needs <package>: pip install 'grposcope[<extra>]'".

    Only an absent top package (`wandb` for "wandb.proto") is turned into the hint; a module missing inside
    an installed package (another version than expected) is a real error and propagates as it is.
    """
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        top = module.split(".")[0]
        if e.name is None or e.name.split(".")[0] != top or importlib.util.find_spec(top) is not None:
            raise
        raise MissingExtra(f"{what} needs {EXTRAS[extra].split(' (')[0]}, which the base install leaves out: "
                           f"{install_hint(extra)}") from None
