"""Sharded GRPO, PPO and TT-OPD runs for tests/test_fsdp_training.py, launched with ``torchrun --nproc_per_node 2`` (gloo on CPU):
for full fine-tuning (with a sharded reference copy, beta > 0) and LoRA, a straight run of 3 steps and a run of
1 step resumed to 3, and for full fine-tuning the same run unsharded (DDP); PPO with full fine-tuning (value head
and reference) likewise, and TT-OPD with LoRA (teacher adapter) and full fine-tuning (teacher copy), whose EMA
teachers must resume exactly too; rank 0 writes what the test checks as
JSON to argv[1]."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from test_grpo_toy_env import DONOR, HEART, QuizEnv  # noqa: E402
from test_ttopd_toy_env import ConfirmQuizEnv  # noqa: E402

from clinical_gym.trainers.common import sharding  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.grpo.config import GRPOConfig  # noqa: E402
from clinical_gym.trainers.grpo.train import main as grpo_main  # noqa: E402
from clinical_gym.trainers.ppo.config import PPOConfig  # noqa: E402
from clinical_gym.trainers.ppo.train import main as ppo_main  # noqa: E402
from clinical_gym.trainers.ttopd.config import TTOPDConfig  # noqa: E402
from clinical_gym.trainers.ttopd.train import main as ttopd_main  # noqa: E402

TOTAL = 3


COMMON = dict(model="in-memory", env="QuizEnv", total_steps=TOTAL, save_every=1, keep_checkpoints=1, group_size=4,
              groups_per_step=2, num_minibatches=2, max_turn_tokens=3, max_episode_tokens=64, learning_rate=1e-2,
              seed=3, progress=False, report_to="none", fsdp=True, generation_engine="transformers", cpu=True,
              torch_threads=1)


def config(run: Path, **overrides: object) -> GRPOConfig | PPOConfig:
    """GRPO's settings (beta > 0: a reference), or PPO's with ``ppo=True`` (kl_coef > 0, a value head)."""
    if overrides.pop("ttopd", False):
        return TTOPDConfig(**{**COMMON, "output_dir": str(run), "num_iterations": 2, "beta": 0.05,
                              "dynamic_sampling": False, "max_episode_tokens": 256, "ema_alpha": 0.5,
                              "ema_interval": 1, "hard_copy_interval": 3,
                              # a sharded teacher keeps the model's dtype; the DDP run it is compared with too
                              "teacher_dtype": "model", **overrides})
    if overrides.pop("ppo", False):
        return PPOConfig(**{**COMMON, "output_dir": str(run), "num_epochs": 2, "value_learning_rate": 3e-2,
                            "kl_coef": 0.05, **overrides})
    return GRPOConfig(**{**COMMON, "output_dir": str(run), "num_iterations": 2, "beta": 0.05, **overrides})


def fresh(tokenizer):
    torch.manual_seed(0)  # the same initial weights on every process
    return tiny_llama(tokenizer)


def metric_rows(run: Path) -> list[dict]:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.endswith("_s")} for r in rows]


def final_state(run: Path) -> dict[str, torch.Tensor]:
    folder = run / "checkpoints" / f"step-{TOTAL:06d}" / "model"
    if (folder / sharding.FULL_STATE_FILE).exists():
        return torch.load(folder / sharding.FULL_STATE_FILE)
    from safetensors.torch import load_file

    return load_file(folder / ("model.safetensors" if (folder / "model.safetensors").exists()
                               else "adapter_model.safetensors"))


def reset_accelerate() -> None:
    from accelerate.state import AcceleratorState

    AcceleratorState._reset_state(reset_partial_state=False)


def scenario(root: Path, tokenizer, **overrides: object) -> dict:
    quiz = lambda: QuizEnv((DONOR, HEART))  # noqa: E731
    main = ppo_main if overrides.get("ppo") else grpo_main
    if overrides.get("ttopd"):
        main, quiz = ttopd_main, (lambda: ConfirmQuizEnv((DONOR, HEART)))  # noqa: E731
    seen = {"collected": 0}

    def count(trajectories):  # an on_collect hook: rollouts were generated (with gathered parameters)
        seen["collected"] += len(trajectories)

    main(config(root / "straight", **overrides), env_factory=quiz, model=fresh(tokenizer), tokenizer=tokenizer,
         on_collect=[count])
    reset_accelerate()
    model = fresh(tokenizer)
    main(config(root / "resumed", total_steps=1, **overrides), env_factory=quiz, model=model, tokenizer=tokenizer)
    reset_accelerate()
    main(config(root / "resumed", resume=True, **overrides), env_factory=quiz, model=fresh(tokenizer),
         tokenizer=tokenizer)
    reset_accelerate()
    straight, resumed = final_state(root / "straight"), final_state(root / "resumed")
    initial = fresh(tokenizer).state_dict()
    matches_ddp = None
    if overrides.get("lora_r") is None:  # the same run unsharded (DDP): equal up to float summation order
        main(config(root / "ddp", fsdp=False, **overrides), env_factory=quiz, model=fresh(tokenizer),
             tokenizer=tokenizer)
        reset_accelerate()
        ddp = final_state(root / "ddp")
        losses = [(a[name], b[name]) for name in ("losses/policy_loss", "losses/kl_ref")
                  for a, b in zip(metric_rows(root / "straight"), metric_rows(root / "ddp"), strict=True)]
        if (root / "ddp" / "checkpoints" / f"step-{TOTAL:06d}" / "value_head.safetensors").exists():
            from safetensors.torch import load_file

            head = load_file(root / "ddp" / "checkpoints" / f"step-{TOTAL:06d}" / "value_head.safetensors")
            ddp = {**{f"policy.{k}": v for k, v in ddp.items()}, **{f"value_head.{k}": v for k, v in head.items()}}
        # Adam turns float-rounding differences of near-zero gradients (a step whose advantages are all 0 leaves
        # only the KL term's) into steps of up to the learning rate (1e-2) on single weights; over the policy's
        # weights the two runs' updates (final - initial) must agree to 1%
        start = {k: initial[k.removeprefix("policy.")] for k in ddp if k.removeprefix("policy.") in initial}
        gap = sum(float((straight[k] - ddp[k]).double().pow(2).sum()) for k in start) ** 0.5
        moved = sum(float((ddp[k] - v).double().pow(2).sum()) for k, v in start.items()) ** 0.5
        matches_ddp = (all(torch.allclose(straight[k], v, atol=1e-2) for k, v in ddp.items()) and gap <= 1e-2 * moved
                       and all(abs(a - b) <= 1e-5 + 1e-3 * abs(b) for a, b in losses)
                       and metric_rows(root / "straight")[0]["rollout/gen_tokens_per_turn"]
                       == metric_rows(root / "ddp")[0]["rollout/gen_tokens_per_turn"])
    first = torch.load(root / "straight" / "checkpoints" / f"step-{TOTAL:06d}" / "optimizer.pt")
    teachers = [root / run / "checkpoints" / f"step-{TOTAL:06d}" / "teacher" / "teacher.safetensors"
                for run in ("straight", "resumed")]
    same_teacher = None
    if teachers[0].exists():
        from safetensors.torch import load_file

        a, b = (load_file(t) for t in teachers)
        same_teacher = sorted(a) == sorted(b) and all(torch.equal(a[k], b[k]) for k in a) and all(
            tuple(a[k].shape) == tuple(v.shape) for k, v in a.items())
    return {"same_teacher": same_teacher, "same_weights": sorted(straight) == sorted(resumed) and all(torch.equal(straight[k], resumed[k])
                                                                         for k in straight),
            "same_metrics": metric_rows(root / "straight") == metric_rows(root / "resumed"),
            "weights_moved": (any(v.abs().sum() > 0 for k, v in straight.items() if "lora_B" in k)  # LoRA B starts at 0
                              if any("lora_" in k for k in straight) else
                              any(not torch.equal(straight[k], initial[k.removeprefix("policy.")])
                                  for k in straight if k.removeprefix("policy.") in initial)),
            "full_shapes": all(tuple(v.shape) == tuple(initial[k.removeprefix("policy.").replace(
                "base_model.model.", "").replace(".base_layer", "")].shape) for k, v in straight.items()
                if "lora_" not in k and not k.startswith("value_head")),
            "value_head": any(k.startswith("value_head.") for k in straight),
            "optimizer_params": len(first["state"]),
            "finite_loss": all(abs(r["losses/policy_loss"]) < 1e6 for r in metric_rows(root / "straight")),
            "kl_ref": [r["losses/kl_ref"] for r in metric_rows(root / "straight")],
            "grad_norm": [r["losses/grad_norm"] for r in metric_rows(root / "straight")],
            "kl_logged": all(r["losses/kl_ref"] == r["losses/kl_ref"] for r in metric_rows(root / "straight")),
            "steps": len(metric_rows(root / "straight")), "collected": seen["collected"],
            "matches_ddp": matches_ddp}


def sharded_layout(tokenizer) -> dict:
    """How a sharded tiny model's parameters are split on this process."""
    import torch.distributed as dist

    model = sharding.shard(fresh(tokenizer))
    local = {name: tuple(p.to_local().shape) for name, p in model.named_parameters()}
    full = {name: tuple(p.shape) for name, p in model.named_parameters()}
    return {"world": dist.get_world_size(), "local_embed": local["model.embed_tokens.weight"],
            "full_embed": full["model.embed_tokens.weight"], "all_dtensors": all(
                type(p).__name__ == "DTensor" for p in model.parameters())}


if __name__ == "__main__":
    out = Path(sys.argv[1])
    torch.set_num_threads(1)
    tokenizer = tiny_tokenizer()
    from accelerate import PartialState

    state = PartialState(cpu=True)
    results = {"layout": sharded_layout(tokenizer), "full_finetune": scenario(out / "full", tokenizer),
               "lora": scenario(out / "lora", tokenizer, lora_r=4, lora_dropout=0.0),
               "ppo_full_finetune": scenario(out / "ppo", tokenizer, ppo=True),
               "ttopd_lora": scenario(out / "ttopd_lora", tokenizer, ttopd=True, lora_r=4, lora_dropout=0.0),
               "ttopd_full_finetune": scenario(out / "ttopd_full", tokenizer, ttopd=True)}
    if state.is_main_process:
        (out / "result.json").write_text(json.dumps(results, indent=1))
    state.wait_for_everyone()
