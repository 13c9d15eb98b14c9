"""Key maps, one module per framework: `their name -> canonical name` (collectors/schema.py).

Each module's docstring names the version and the functions read. A framework's keys are recognised by their
names: no two maps give one key different meanings (tests/collectors/test_keymaps.py), so every reader applies them all
(`keymap.canonical_name`), in FAMILIES order; a key a later map shares with an earlier one (NeMo-RL's `loss`,
slime's `entropy_loss`) was checked to mean the same there. Where the meaning follows the run's config rather
than the key (TRL's and ms-swift's importance-sampling level), collectors/levels.py places the column.
"""

from __future__ import annotations

from collectors.readers.keymaps.areal import AREAL
from collectors.readers.keymaps.ms_swift import MS_SWIFT
from collectors.readers.keymaps.nemo_rl import NEMO_RL
from collectors.readers.keymaps.open_instruct import OPEN_INSTRUCT
from collectors.readers.keymaps.openrlhf import OPENRLHF
from collectors.readers.keymaps.prime_rl import PRIME_RL
from collectors.readers.keymaps.rlinf import RLINF
from collectors.readers.keymaps.roll import ROLL
from collectors.readers.keymaps.slime import SLIME
from collectors.readers.keymaps.tinker import TINKER
from collectors.readers.keymaps.trl import TRAINER_SUMMARY_KEYS, TRL
from collectors.readers.keymaps.verl import VERL

FAMILIES: dict[str, dict[str, str]] = {"trl": TRL, "verl": VERL, "openrlhf": OPENRLHF, "nemo_rl": NEMO_RL,
                                       "slime": SLIME, "areal": AREAL, "prime_rl": PRIME_RL, "ms_swift": MS_SWIFT,
                                       "roll": ROLL, "open_instruct": OPEN_INSTRUCT, "rlinf": RLINF, "tinker": TINKER}

__all__ = ["AREAL", "FAMILIES", "MS_SWIFT", "NEMO_RL", "OPENRLHF", "OPEN_INSTRUCT", "PRIME_RL", "RLINF", "ROLL",
           "SLIME", "TINKER", "TRAINER_SUMMARY_KEYS", "TRL", "VERL"]
