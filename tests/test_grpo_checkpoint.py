"""Checkpoints: exact resume after a kill, atomic writes (partial checkpoints are never used), weights and RNG
round trips, pruning, and the resumable case order."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="trainers need the [train] extra")

from accelerate import Accelerator  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
from test_grpo_toy_env import DONOR, HEART, QuizEnv, one_torch_thread  # noqa: E402,F401

from clinical_gym.trainers.common import checkpoint as ckpt  # noqa: E402
from clinical_gym.trainers.common.checkpoint import latest_checkpoint, load_weights, save_checkpoint, save_weights  # noqa: E402
from clinical_gym.trainers.common.config import TrainerConfig  # noqa: E402
from clinical_gym.trainers.common.model import prepare_model  # noqa: E402
from clinical_gym.trainers.common.sampler import CaseSampler  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.grpo.config import GRPOConfig  # noqa: E402
from clinical_gym.trainers.grpo.train import main  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

KILLED_AFTER, TOTAL = 2, 4


def two_case_quiz() -> QuizEnv:
    return QuizEnv((DONOR, HEART))


class Killed(Exception):
    """Stands in for SIGKILL: the run stops wherever it is, saving nothing."""



@pytest.fixture(scope="module")
def tiny() -> tuple[object, object]:
    tokenizer = tiny_tokenizer()
    return tokenizer, tiny_llama(tokenizer)


def grpo_config(run: Path, **overrides: object) -> GRPOConfig:
    settings = dict(model="in-memory", env="QuizEnv", output_dir=str(run), total_steps=TOTAL, save_every=1,
                    keep_checkpoints=1, group_size=4, groups_per_step=2, num_iterations=2, num_minibatches=2,
                    max_turn_tokens=3, max_episode_tokens=64, learning_rate=1e-2, beta=0.01, lora_r=4,
                    lora_dropout=0.1, seed=3, progress=False, report_to="none")
    return GRPOConfig(**{**settings, **overrides})


def metric_rows(run: Path) -> list[dict]:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.endswith("_s")} for r in rows]  # drop timings


def test_resume_after_a_kill_matches_an_uninterrupted_run(tmp_path, tiny):
    tokenizer, base = tiny
    main(grpo_config(tmp_path / "straight"), env_factory=two_case_quiz, model=copy.deepcopy(base), tokenizer=tokenizer)

    interrupted = tmp_path / "interrupted"

    def dies_after_step_k() -> QuizEnv:
        found = latest_checkpoint(interrupted / "checkpoints")
        if found is not None and found.name == f"step-{KILLED_AFTER:06d}":
            raise Killed  # during the rollouts of step k + 1
        return two_case_quiz()

    with pytest.raises(Killed):
        main(grpo_config(interrupted), env_factory=dies_after_step_k, model=copy.deepcopy(base), tokenizer=tokenizer)
    assert len(metric_rows(interrupted)) == KILLED_AFTER
    torch.manual_seed(12345), np.random.seed(6), random.seed(7)  # whatever state the dead run left behind
    main(grpo_config(interrupted, resume=True), env_factory=two_case_quiz, model=copy.deepcopy(base),
         tokenizer=tokenizer)

    final = f"checkpoints/step-{TOTAL:06d}/model/adapter_model.safetensors"
    straight, resumed = load_file(tmp_path / "straight" / final), load_file(interrupted / final)
    assert straight.keys() == resumed.keys() and straight
    assert all(torch.equal(straight[k], resumed[k]) for k in straight)
    assert any(v.abs().sum() > 0 for k, v in resumed.items() if "lora_B" in k)  # training moved the adapter
    assert metric_rows(interrupted) == metric_rows(tmp_path / "straight")
    assert sorted(p.name for p in (interrupted / "checkpoints").iterdir()) == [f"step-{TOTAL:06d}"]  # pruned


def test_resume_without_checkpoints_starts_from_step_one(tmp_path, tiny):
    tokenizer, base = tiny
    run = tmp_path / "fresh"
    main(grpo_config(run, total_steps=1, resume=True), env_factory=QuizEnv, model=copy.deepcopy(base),
         tokenizer=tokenizer)
    assert [r["step"] for r in metric_rows(run)] == [1]


def test_metrics_of_steps_after_the_resumed_checkpoint_are_dropped(tmp_path):
    from clinical_gym.trainers.common.metrics_log import MetricsLog

    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "x": s}) + "\n" for s in (1, 2, 3)))
    log = MetricsLog(tmp_path, Accelerator(cpu=True), total_steps=5, start_step=2, progress=False)
    log.log(3, {"x": float("nan")})
    log.close()
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert rows == [{"step": 1, "x": 1}, {"step": 2, "x": 2}, {"step": 3, "x": None}]


def test_partial_and_temporary_folders_are_never_picked_up(tmp_path):
    root = tmp_path / "checkpoints"
    for name in ("step-000002", "step-000007", ".tmp-step-000009"):
        (root / name).mkdir(parents=True)
    (root / "step-000002" / ckpt.STATE_FILE).write_text("{}")
    (root / ".tmp-step-000009" / ckpt.STATE_FILE).write_text("{}")
    assert latest_checkpoint(root) == root / "step-000002"
    assert latest_checkpoint(tmp_path / "missing") is None


def test_a_crash_while_saving_leaves_the_previous_checkpoint_in_use(tmp_path, tiny, monkeypatch):
    tokenizer, base = tiny
    accelerator = Accelerator(cpu=True)
    model = copy.deepcopy(base)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)
    parts = dict(accelerator=accelerator, model=model, optimizer=optimizer, scheduler=scheduler)
    save_checkpoint(tmp_path, 1, state={"sampler": {"epoch": 0, "position": 1}}, **parts)

    real_save = torch.save

    def fail_on_optimizer(obj: object, path: object, *args: object, **kwargs: object) -> None:
        if str(path).endswith("optimizer.pt"):
            raise OSError("disk full")
        real_save(obj, path, *args, **kwargs)

    monkeypatch.setattr(ckpt.torch, "save", fail_on_optimizer)
    with pytest.raises(OSError):
        save_checkpoint(tmp_path, 2, state={"sampler": {"epoch": 0, "position": 2}}, **parts)
    assert (tmp_path / ".tmp-step-000002").exists()
    assert latest_checkpoint(tmp_path) == tmp_path / "step-000001"
    monkeypatch.setattr(ckpt.torch, "save", real_save)
    save_checkpoint(tmp_path, 2, state={}, **parts)  # the next save clears the leftover
    assert latest_checkpoint(tmp_path) == tmp_path / "step-000002"
    assert not (tmp_path / ".tmp-step-000002").exists()


@pytest.mark.parametrize("lora_r", [0, 4])
def test_weights_round_trip_exactly(tmp_path, tiny, lora_r):
    tokenizer, base = tiny
    cfg = TrainerConfig(model="unused", lora_r=lora_r)
    trained, fresh = prepare_model(copy.deepcopy(base), cfg), prepare_model(copy.deepcopy(base), cfg)
    with torch.no_grad():
        for p in trained.parameters():
            if p.requires_grad:
                p.add_(torch.randn_like(p))
    save_weights(trained, tmp_path / "model")
    load_weights(fresh, tmp_path / "model")
    assert all(torch.equal(a, b) for a, b in zip(trained.state_dict().values(), fresh.state_dict().values()))
    expected = "adapter_model.safetensors" if lora_r else "model.safetensors"
    assert (tmp_path / "model" / expected).is_file()


def test_rng_states_round_trip():
    state = ckpt.capture_rng()
    first = (random.random(), np.random.rand(), torch.rand(1).item())
    ckpt.restore_rng(state)
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == first


def test_case_order_resumes_from_its_position():
    ids = [f"case-{i}" for i in range(7)]
    straight = CaseSampler(ids, seed=1)
    drawn = straight.next(5) + straight.next(6)  # crosses into the second epoch
    resumed = CaseSampler(ids, seed=1)
    resumed.next(5)
    state = resumed.state_dict()
    again = CaseSampler(ids, seed=1)
    again.load_state_dict(state)
    assert drawn[5:] == again.next(6)
    assert sorted(drawn[:7]) == ids and drawn[:7] != ids  # each epoch is a shuffle of every case
    shards = [CaseSampler(ids, seed=1, rank=r, world=2).next(3) for r in (0, 1)]
    assert not set(shards[0]) & set(shards[1])
