"""Sharded GRPO, PPO and TT-OPD (``--fsdp``) with two real processes on the CPU (torchrun, gloo): parameters split
between the processes, generation with gathered parameters, full fine-tuning with a sharded reference copy, LoRA,
PPO's value head, TT-OPD's EMA teacher (a second adapter, or a sharded copy), exact resume from a checkpoint (student
and teacher), and the same result as the unsharded (DDP) run."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="trainers need the [train] extra")

from clinical_gym.trainers.ppo.config import PPOConfig  # noqa: E402
from clinical_gym.trainers.grpo.config import GRPOConfig  # noqa: E402
from clinical_gym.trainers.ttopd.config import TTOPDConfig  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def failure_report(stdout: str, stderr: str) -> str:
    """What a failed two-process run printed, each rank's own lines first: the rank that crashed first is often not
    the last to print (the survivor's collective error and torchrun's summary pushed the root cause out of the
    tail once)."""
    lines = stderr.splitlines()
    ranks = [f"--- rank {r} ---\n" + "\n".join(line for line in lines if line.startswith(f"[rank{r}]"))[-4000:]
             for r in (0, 1)]
    return "\n".join(ranks) + "\n--- stdout ---\n" + stdout[-2000:] + "\n--- stderr ---\n" + stderr[-3000:]


def test_two_process_sharded_trainers_resume_exactly_and_match_ddp(tmp_path):
    result = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr",
                             "127.0.0.1", "--master_port", str(free_port()), "tests/fsdp_grpo_run.py", str(tmp_path)],
                            cwd=ROOT,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, failure_report(result.stdout, result.stderr)
    found = json.loads((tmp_path / "result.json").read_text())
    assert found["layout"] == {"world": 2, "local_embed": [80, 64], "full_embed": [160, 64], "all_dtensors": True}
    for name in ("full_finetune", "lora", "ppo_full_finetune", "ttopd_lora", "ttopd_full_finetune"):
        run = found[name]
        assert run["steps"] == 3 and run["collected"] > 0 and run["finite_loss"] and run["kl_logged"], (name, run)
        assert run["weights_moved"] and run["full_shapes"], (name, run)
        assert run["same_weights"] and run["same_metrics"], (name, "resume is not exact", run)
        # once the policy has taken a step (a step with a gradient), the reference must differ from it
        after_moves = [kl for kl, grad in zip(run["kl_ref"][1:], run["grad_norm"], strict=False) if grad > 0]
        assert after_moves and all(kl > 0 for kl in after_moves), (name, "the reference is the trained policy", run)
    for name in ("full_finetune", "ppo_full_finetune", "ttopd_full_finetune"):
        assert found[name]["matches_ddp"] is True, name
    assert found["ttopd_lora"]["same_teacher"] and found["ttopd_full_finetune"]["same_teacher"]  # EMA teachers
    assert found["ppo_full_finetune"]["value_head"]  # the value head is in the sharded checkpoint


def test_fsdp_needs_the_transformers_engine():
    for config in (GRPOConfig, PPOConfig, TTOPDConfig):
        assert config(model="m", fsdp=True, generation_engine="transformers").fsdp
        with pytest.raises(ValueError, match="--generation-engine transformers"):
            config(model="m", fsdp=True)
