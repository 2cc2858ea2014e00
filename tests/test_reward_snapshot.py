"""Every tool domain's rewards stay what they were: the expert, baseline and random agents on every bundled task give
the stored reward, components, dimension scores, result, violations and terminal-info digest, bit for bit
(``tests/reward_snapshot.py`` says what is stored). Speed work on the reward must never change a value.

A deliberate reward change (a new safety rule, another weight) changes stored values: regenerate them with
``.venv/bin/python tests/reward_snapshot.py --write`` and review ``git diff tests/data/reward_snapshot.json``."""

from __future__ import annotations

import json

import pytest
from reward_snapshot import SNAPSHOT, dumps, episodes, tool_env_ids

STORED = json.loads(SNAPSHOT.read_text(encoding="utf-8"))


@pytest.mark.parametrize("env_id", tool_env_ids())
def test_rewards_match_the_stored_values(env_id):
    now = dict(episodes([env_id]))
    stored = {k: v for k, v in STORED.items() if k.split("/")[0] == env_id}
    assert stored, f"no stored values for {env_id}: regenerate with tests/reward_snapshot.py --write"
    assert sorted(now) == sorted(stored), "tasks were added or removed: regenerate the stored values"
    changed = [k for k in now if dumps({k: now[k]}) != dumps({k: stored[k]})]
    assert not changed, f"{len(changed)} episodes changed, e.g. {changed[0]}: stored {stored[changed[0]]}, " \
                        f"now {now[changed[0]]}"


def test_every_agent_and_outcome_is_covered():
    agents = {k.rsplit("/", 1)[1] for k in STORED}
    results = {v["result"] for v in STORED.values()}
    assert agents == {"expert", "baseline", "random"}
    assert results == {"correct", "partially", "wrong", "no_answer"}
    assert any(v["violations"] for v in STORED.values()) and any("critical_cap" in v["components"]
                                                                  for v in STORED.values())
    assert any("severe_penalty" in v["components"] for v in STORED.values())
