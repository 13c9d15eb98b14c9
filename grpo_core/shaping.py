"""Changes to the rewards and to the loss mask made before the advantages, from a rollout's lengths.

Pure tensor functions; lengths [B] long (completion tokens, end token included), truncated [B] bool.
"""

from __future__ import annotations

import torch


def soft_overlong_penalty(lengths: torch.Tensor, max_len: int, buffer: int, factor: float) -> torch.Tensor:
    """DAPO's soft overlong punishment (Yu et al. 2025, eq. 13), added to the reward. [B] -> [B].

    0 up to max_len - buffer tokens, then falling linearly to -factor at max_len:
    ((max_len - buffer) - |y|) / buffer * factor. buffer = 0 turns it off (all zeros).
    """
    if buffer <= 0:
        return torch.zeros_like(lengths, dtype=torch.float32)
    over = (lengths.float() - (max_len - buffer)).clamp(min=0)
    return -over / buffer * factor


def loss_mask(completion_mask: torch.Tensor, truncated: torch.Tensor, mask_truncated: bool) -> torch.Tensor:
    """The tokens the loss sees: completion_mask [B, N], less the truncated responses' rows when asked
    (TRL's mask_truncated_completions, DAPO's overlong filtering). A truncated response still counted in
    its group's mean and std; it only stops pulling the policy towards or away from an unfinished answer."""
    return completion_mask & ~truncated[:, None] if mask_truncated else completion_mask
