"""The order in which a trainer visits cases: a fresh seeded shuffle each epoch, resumable from its position."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class CaseSampler:
    """Case ids in epochs; each epoch is a permutation seeded by ``(seed, epoch)``. Process ``rank`` of ``world``
    takes every ``world``-th case, so processes see disjoint cases. ``state_dict`` is the data position."""

    def __init__(self, case_ids: Sequence[str], seed: int, rank: int = 0, world: int = 1) -> None:
        if not case_ids:
            raise ValueError("no cases to sample from")
        self.case_ids = list(case_ids)
        self.seed, self.rank, self.world = seed, rank, world
        self.epoch = 0
        self.position = 0

    def next(self, n: int) -> list[str]:
        """The next ``n`` case ids of this process (wrapping into new epochs)."""
        out: list[str] = []
        while len(out) < n:
            order = self._order(self.epoch)
            mine = order[self.rank::self.world] or order
            take = mine[self.position:self.position + n - len(out)]
            out += take
            self.position += len(take)
            if self.position >= len(mine):
                self.epoch, self.position = self.epoch + 1, 0
        return out

    def _order(self, epoch: int) -> list[str]:
        permutation = np.random.default_rng([self.seed, epoch]).permutation(len(self.case_ids))
        return [self.case_ids[i] for i in permutation]

    def state_dict(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "position": self.position}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.epoch, self.position = int(state["epoch"]), int(state["position"])
