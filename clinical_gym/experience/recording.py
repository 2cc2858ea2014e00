"""Turning played turns into experiences: per step inside an environment, or per batch of trajectories after a
training step (the collector hook ``ExperienceRecorder``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from clinical_gym.experience.injection import strip_injection
from clinical_gym.experience.state import dialogue_state, visible_reply
from clinical_gym.experience.store import Experience, ExperienceStore

if TYPE_CHECKING:
    from clinical_gym.rollout.trajectory import Trajectory


def turn_experience(history: Sequence[Mapping[str, str]], action: str, reward: float, case_id: str | None,
                    turn: int) -> Experience | None:
    """The experience of one turn: the dialogue before the reply (``history``) as the state and the reply's visible
    part as the action; None when either is empty."""
    state, said = dialogue_state(history), visible_reply(action)
    if not state or not said:
        return None
    return Experience(state=state, action=said, reward=reward, case_id=case_id, turn=turn)


def trajectory_experiences(trajectory: Trajectory) -> list[Experience]:
    """Every turn of ``trajectory`` as an experience (turns numbered from 1). Injected experience references are
    removed from the observations first, so states hold only the dialogue."""
    history = [{"role": m["role"], "content": strip_injection(m["content"])}
               for m in trajectory.messages if m["role"] != "system"]
    found = []
    for i, turn in enumerate(trajectory.turns):
        experience = turn_experience(history[:1 + 2 * i], turn.action, turn.reward, trajectory.case_id, i + 1)
        if experience is not None:
            found.append(experience)
    return found


class ExperienceRecorder:
    """A collector hook for after each training step: ``recorder(trajectories)`` stores every turn whose reward
    reaches the store's threshold, as one batch, and returns how many rows were added or improved."""

    def __init__(self, store: ExperienceStore) -> None:
        self.store = store

    def __call__(self, trajectories: Sequence[Trajectory]) -> int:
        return self.store.add(e for t in trajectories for e in trajectory_experiences(t))
