"""Exact resume of TT-OPD: a run killed after step k and resumed ends with the same student, the same teacher
(weights and counters) and the same metrics as an uninterrupted run (tiny model, LoRA, EMA every step and a hard
copy after the resume)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="TT-OPD needs the [train] extra")

from safetensors.torch import load_file  # noqa: E402
from test_grpo_toy_env import DONOR, HEART, one_torch_thread  # noqa: E402,F401
from test_ttopd_toy_env import ConfirmQuizEnv  # noqa: E402

from clinical_gym.trainers.common.checkpoint import latest_checkpoint  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.ttopd.config import TTOPDConfig  # noqa: E402
from clinical_gym.trainers.ttopd.train import main  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

KILLED_AFTER, TOTAL = 2, 4


class Killed(Exception):
    """Stands in for SIGKILL: the run stops wherever it is, saving nothing."""


def two_case_quiz() -> ConfirmQuizEnv:
    return ConfirmQuizEnv((DONOR, HEART))


def ttopd_config(run: Path, **overrides: object) -> TTOPDConfig:
    settings = dict(model="in-memory", env="ConfirmQuiz", output_dir=str(run), total_steps=TOTAL, save_every=1,
                    keep_checkpoints=1, group_size=4, groups_per_step=2, num_iterations=2, num_minibatches=2,
                    dynamic_sampling=False, max_turn_tokens=3, max_episode_tokens=256, learning_rate=1e-2,
                    lora_r=4, lora_dropout=0.1, ema_alpha=0.5, ema_interval=1, hard_copy_interval=3, seed=3,
                    progress=False, report_to="none")
    return TTOPDConfig(**{**settings, **overrides})


def metric_rows(run: Path) -> list[dict]:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.endswith("_s")} for r in rows]  # drop timings


def test_resume_after_a_kill_restores_student_and_teacher_exactly(tmp_path):
    tokenizer = tiny_tokenizer()
    base = tiny_llama(tokenizer)
    main(ttopd_config(tmp_path / "straight"), env_factory=two_case_quiz, model=copy.deepcopy(base),
         tokenizer=tokenizer)

    interrupted = tmp_path / "interrupted"

    def dies_after_step_k() -> ConfirmQuizEnv:
        found = latest_checkpoint(interrupted / "checkpoints")
        if found is not None and found.name == f"step-{KILLED_AFTER:06d}":
            raise Killed  # during the rollouts of step k + 1
        return two_case_quiz()

    with pytest.raises(Killed):
        main(ttopd_config(interrupted), env_factory=dies_after_step_k, model=copy.deepcopy(base),
             tokenizer=tokenizer)
    torch.manual_seed(12345), np.random.seed(6), random.seed(7)  # whatever state the dead run left behind
    main(ttopd_config(interrupted, resume=True), env_factory=two_case_quiz, model=copy.deepcopy(base),
         tokenizer=tokenizer)

    final = Path("checkpoints") / f"step-{TOTAL:06d}"
    for file in ("model/adapter_model.safetensors", "teacher/teacher.safetensors"):
        straight, resumed = load_file(tmp_path / "straight" / final / file), load_file(interrupted / final / file)
        assert straight.keys() == resumed.keys() and straight
        assert all(torch.equal(straight[k], resumed[k]) for k in straight), file
    counters = json.loads((interrupted / final / "teacher" / "teacher.json").read_text())
    assert counters == json.loads((tmp_path / "straight" / final / "teacher" / "teacher.json").read_text())
    assert (counters["copies"], counters["last_copy_step"], counters["ema_updates"]) == (1, 3, 3)
    assert metric_rows(interrupted) == metric_rows(tmp_path / "straight")
    assert sorted(p.name for p in (interrupted / "checkpoints").iterdir()) == [f"step-{TOTAL:06d}"]  # pruned, tidy
