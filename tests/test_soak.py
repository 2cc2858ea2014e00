"""The soak benchmark (``benchmarks/soak.py``) on a short run: every registered environment is played by its
rule-based agent, the oracle and the random agent with no error, and the figures are printed and written."""

from __future__ import annotations

import json

import pytest

import clinical_gym
from clinical_gym.benchmarks import soak


def test_a_short_soak_covers_every_environment_without_errors(tmp_path, capsys):
    n_envs = len(clinical_gym.env_ids())
    episodes = 3 * n_envs * 2  # every agent twice on every environment
    code = soak.main(["--episodes", str(episodes), "--window", str(episodes // 2), "--max-growth", "1.0", "--quiet",
                      "--json", str(tmp_path / "soak.json")])
    out = capsys.readouterr().out
    result = json.loads((tmp_path / "soak.json").read_text())
    assert code == 0 and out.strip().endswith("PASS")
    assert result["errors"] == {} and result["episodes"] == episodes
    assert result["episodes_by_env"] == {env_id: 6 for env_id in clinical_gym.env_ids()}
    assert result["steps"] >= episodes and result["peak_rss_end_mib"] >= result["peak_rss_start_mib"] > 0
    assert "episodes/s" in out and "errors: 0" in out


def test_an_episode_that_raises_is_counted_and_the_soak_goes_on(monkeypatch):
    calls = []

    def flaky(env, agent, seed):
        calls.append(seed)
        if seed == 1:
            raise RuntimeError("simulated crash")
        return 1, None

    monkeypatch.setattr(soak, "play_episode", flaky)
    result = soak.soak(episodes=4, window=2, progress=False)
    assert calls == [0, 1, 2, 3]
    assert sum(result.errors.values()) == 1 and "RuntimeError: simulated crash" in next(iter(result.errors))


def test_bad_arguments_exit_with_a_message(capsys):
    with pytest.raises(SystemExit) as exited:
        soak.main(["--episodes", "10", "--window", "20"])
    assert exited.value.code == 2
    assert "window <= episodes" in capsys.readouterr().err
