"""Stored rewards of every tool domain, for ``tests/test_reward_snapshot.py``: the final reward, its components, the
dimension scores, the result and the violations named, of three agents on every bundled (hand-written) task:

* ``expert``: ``ExpertToolPolicy`` (the task's expected actions, then the gold answer);
* ``baseline``: the benchmark's protocol follower (``clinical_gym.benchmarks.agents.protocol``);
* ``random``: ``RandomToolPolicy`` (random tools with schema-shaped random arguments, seeded per task).

Each entry also keeps ``info_sha256``, a digest of the whole terminal info (evidence strings, coherence checks,
process details, assertions, ``db_hash``...), so any other change to what an episode reports shows up too.
Floats are stored as Python writes them (``repr``), so equal text means equal bits.

A deliberate change to rewards (a new safety rule, a changed weight) changes stored values: regenerate them and
review the diff before committing::

    .venv/bin/python tests/reward_snapshot.py --write     # rewrites tests/data/reward_snapshot.json
    git diff --stat tests/data/reward_snapshot.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym

import clinical_gym
from clinical_gym.benchmarks.agents.protocol import ProtocolReply
from clinical_gym.tool_env.policies import ExpertToolPolicy, RandomToolPolicy

SNAPSHOT = Path(__file__).resolve().parent / "data" / "reward_snapshot.json"
AGENTS = ("expert", "baseline", "random")


def tool_env_ids() -> list[str]:
    return [e.id for e in clinical_gym.ENVIRONMENTS if e.family == "tool"]


def _episode(env: Any, agent: str, task: Any, index: int) -> tuple[float, dict[str, Any]]:
    obs, info = env.reset(seed=index, options={"task_id": task.id})
    if agent == "expert":
        policy: Any = ExpertToolPolicy(task)
    elif agent == "baseline":
        policy = ProtocolReply()
        policy.on_reset(obs, info, env)
    else:
        policy = RandomToolPolicy(info["tools"], seed=index)
    while True:
        _, reward, terminated, truncated, info = env.step(policy(env.messages))
        if terminated or truncated:
            return reward, info


def entry(reward: float, info: dict[str, Any]) -> dict[str, Any]:
    """What is stored of one episode."""
    outcome = info["outcome"]
    return {"reward": reward, "components": info["reward_components"], "scores": outcome["scores"],
            "result": outcome["result"], "violations": outcome["violation_names"],
            "info_sha256": hashlib.sha256(json.dumps(info, sort_keys=True, ensure_ascii=False,
                                                     default=repr).encode()).hexdigest()}


def episodes(env_ids: list[str] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(key, entry)`` for every tool env, bundled task and agent; keys are ``env_id/task_id/agent``."""
    for env_id in env_ids or tool_env_ids():
        env = gym.make(env_id).unwrapped
        for index, task in enumerate(env.tasks):
            for agent in AGENTS:
                yield f"{env_id}/{task.id}/{agent}", entry(*_episode(env, agent, task, index))
        env.close()


def current() -> dict[str, dict[str, Any]]:
    return dict(episodes())


def dumps(values: dict[str, Any]) -> str:
    """One episode per line, so a review diff shows exactly the episodes that changed."""
    lines = [f"{json.dumps(k)}: {json.dumps(values[k], sort_keys=True, ensure_ascii=False)}" for k in sorted(values)]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {SNAPSHOT.name} with the current values")
    args = parser.parse_args(argv)
    values = current()
    if args.write:
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(dumps(values), encoding="utf-8")
        print(f"wrote {len(values)} episodes to {SNAPSHOT}")
        return 0
    stored = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    changed = sorted(k for k in values.keys() | stored.keys() if values.get(k) != stored.get(k))
    print(f"{len(changed)} of {len(values)} episodes differ from {SNAPSHOT.name}")
    for key in changed[:20]:
        print(f"  {key}: stored {stored.get(key)} now {values.get(key)}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
