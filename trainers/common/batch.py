"""Trajectories as right-padded tensors for the loss, with per-token values aligned to next-token targets."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import torch

from clinical_gym.rollout import Trajectory


@dataclass
class TokenBatch:
    """Sequences ``input_ids``/``attention_mask`` [N, T]; per-token tensors [N, T-1] where column ``t`` is about
    token ``t + 1`` (the prediction target): ``loss_mask`` (1 on generated tokens), ``sample_logprobs`` (from the
    rollout), and ``old_logprobs``/``ref_logprobs`` once computed; ``advantages`` [N]. ``vision``: for a
    vision-language model, each row's pixel inputs (``clinical_gym.rollout.vision.VisionInputs``), which
    ``model_inputs()`` joins for the forward pass."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    loss_mask: torch.Tensor
    sample_logprobs: torch.Tensor
    advantages: torch.Tensor
    old_logprobs: torch.Tensor | None = None
    ref_logprobs: torch.Tensor | None = None
    vision: list[dict[str, torch.Tensor]] | None = None

    def __len__(self) -> int:
        return self.input_ids.shape[0]

    def select(self, rows: Sequence[int] | torch.Tensor) -> TokenBatch:
        """The given rows, cut to their longest sequence."""
        index = torch.as_tensor(rows, dtype=torch.long, device=self.input_ids.device)
        width = int(self.attention_mask[index].sum(dim=1).max())
        parts = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "vision":
                parts[f.name] = None if value is None else [value[i] for i in index.tolist()]
            elif value is None or f.name == "advantages":
                parts[f.name] = value if value is None else value[index]
            else:
                parts[f.name] = value[index, : width if value.shape[1] == self.input_ids.shape[1] else width - 1]
        return replace(self, **parts)

    def to(self, device: torch.device | str) -> TokenBatch:
        moved = replace(self, **{f.name: getattr(self, f.name).to(device) for f in fields(self)
                                 if f.name != "vision" and getattr(self, f.name) is not None})
        if self.vision is not None:
            moved.vision = [{k: v.to(device) for k, v in row.items()} for row in self.vision]
        return moved

    def model_inputs(self) -> dict[str, torch.Tensor]:
        """What the model's forward pass takes besides the tokens: the rows' pixel inputs joined (empty for text)."""
        if not self.vision:
            return {}
        from clinical_gym.rollout.vision import VisionInputs

        return VisionInputs.collate(self.vision)


def pack(trajectories: Sequence[Trajectory], advantages: Sequence[float], pad_token_id: int,
         vision: Callable[[Sequence[Mapping[str, Any]]], dict[str, torch.Tensor]] | None = None) -> TokenBatch:
    """Right-pad the trajectories' token sequences into a ``TokenBatch``; ``vision`` (a ``VisionInputs``) gives
    each row the pixel inputs of its conversation's images."""
    sequences = [t.token_ids() for t in trajectories]
    width = max(len(s) for s in sequences)
    n = len(sequences)
    input_ids = torch.full((n, width), pad_token_id, dtype=torch.long)
    attention = torch.zeros((n, width), dtype=torch.long)
    loss_mask = torch.zeros((n, width - 1))
    sample_logprobs = torch.zeros((n, width - 1))
    for i, (trajectory, ids) in enumerate(zip(trajectories, sequences)):
        input_ids[i, :len(ids)] = torch.tensor(ids, dtype=torch.long)
        attention[i, :len(ids)] = 1
        loss_mask[i, :len(ids) - 1] = torch.tensor(trajectory.loss_mask()[1:], dtype=torch.float)
        sample_logprobs[i, :len(ids) - 1] = torch.tensor(trajectory.token_logprobs()[1:], dtype=torch.float)
    return TokenBatch(input_ids, attention, loss_mask, sample_logprobs,
                      torch.tensor(list(advantages), dtype=torch.float),
                      vision=None if vision is None else [vision(t.messages) for t in trajectories])
