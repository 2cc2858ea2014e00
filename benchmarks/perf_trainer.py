"""Our GRPO step against TRL's ``GRPOTrainer`` step: same tiny model, batch and lengths; time and peak memory.

    python benchmarks/perf_trainer.py [--prompts 4] [--generations 4] [--completion-tokens 32] [--steps 5]

Both trainers start from the same randomly initialised Llama (``--hidden``, ``--layers``) over SmolLM2's tokenizer
(or the in-memory one), saved once to a temporary folder; each runs in its own process so peak memory is its own.
Same settings on both sides: ``--prompts`` prompts x ``--generations`` completions per step, single-turn, at most
``--completion-tokens`` new tokens (a random model rarely stops early), full fine-tuning, one optimizer step per
batch, beta 0 (no reference model), clip 0.2 / 0.28, token-level loss, random rewards. Printed: mean seconds per
step after the first (warm-up) step, the time ratio ours / TRL, and peak memory (RSS on CPU, allocated CUDA
memory on GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from clinical_gym.spaces import UnicodeText

QUESTIONS = ("the patient has a fever and a cough since yesterday. what is the most likely cause?",
             "how many chambers does the heart have?", "which blood group is the universal red cell donor?",
             "what is the triage category for a patient who is not breathing?")
SYSTEM = "answer in one sentence"


class PromptEnv(gym.Env[str, str]):
    """One turn per episode: a fixed question, a random reward in [0, 1] (seeded by reset)."""

    def __init__(self) -> None:
        self.cases = [SimpleNamespace(id=str(i)) for i in range(len(QUESTIONS))]
        self.observation_space = self.action_space = UnicodeText(10_000)
        self.question = QUESTIONS[0]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self.question = QUESTIONS[int((options or {}).get("case_id", 0))]
        return self.question, {"system_prompt": SYSTEM}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        reward = float(self.np_random.random())
        return "", reward, True, False, {"reward_components": {"random": reward}, "outcome": {"success": False}}


def peak_memory_mb() -> float:
    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run_ours(args: argparse.Namespace) -> list[float]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from clinical_gym.trainers.grpo.config import GRPOConfig
    from clinical_gym.trainers.grpo.train import main

    model = AutoModelForCausalLM.from_pretrained(args.folder)
    tokenizer = AutoTokenizer.from_pretrained(args.folder)
    batch = args.prompts * args.generations
    with tempfile.TemporaryDirectory() as out:
        cfg = GRPOConfig(model=args.folder, env="PromptEnv", output_dir=out, total_steps=args.steps,
                         group_size=args.generations, groups_per_step=args.prompts, dynamic_sampling=False,
                         max_turn_tokens=args.completion_tokens, max_episode_tokens=args.completion_tokens + 256,
                         num_envs=batch, micro_batch_size=batch, num_minibatches=1, num_iterations=1, beta=0.0,
                         ref_kl_monitor=False, learning_rate=1e-5, save_every=args.steps, progress=False,
                         report_to="none", seed=0, cpu=not torch.cuda.is_available(), generation_engine="transformers")
        main(cfg, env_factory=PromptEnv, model=model, tokenizer=tokenizer)
        rows = [json.loads(line) for line in open(os.path.join(out, "metrics.jsonl"))]
    return [r["charts/step_s"] for r in rows]


def run_trl(args: argparse.Namespace) -> list[float]:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    class StepTimer(TrainerCallback):
        def __init__(self) -> None:
            self.times: list[float] = []

        def on_step_begin(self, *a: Any, **k: Any) -> None:
            self.began = time.perf_counter()

        def on_step_end(self, *a: Any, **k: Any) -> None:
            self.times.append(time.perf_counter() - self.began)

    rng = np.random.default_rng(0)
    prompts = [[{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]}]
               for i in range(args.prompts * args.steps)]
    timer = StepTimer()
    with tempfile.TemporaryDirectory() as out:
        config = GRPOConfig(output_dir=out, per_device_train_batch_size=args.prompts * args.generations,
                            num_generations=args.generations, max_completion_length=args.completion_tokens,
                            max_steps=args.steps, num_iterations=1, beta=0.0, epsilon=0.2, epsilon_high=0.28,
                            loss_type="dapo", learning_rate=1e-5, temperature=1.0, save_strategy="no",
                            report_to="none", logging_steps=10**6, disable_tqdm=True, seed=0, shuffle_dataset=False,
                            use_cpu=not torch.cuda.is_available(), bf16=False)
        trainer = GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(args.folder),
                              processing_class=AutoTokenizer.from_pretrained(args.folder),
                              reward_funcs=lambda completions, **_: rng.random(len(completions)).tolist(),
                              args=config, train_dataset=Dataset.from_dict({"prompt": prompts}), callbacks=[timer])
        trainer.train()
    return timer.times


def child(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    times = run_ours(args) if args.child == "ours" else run_trl(args)
    print(json.dumps({"times": times, "peak_mb": peak_memory_mb()}))


def prepare(folder: str, hidden: int, layers: int) -> None:
    from clinical_gym.trainers.common.tiny_models import load_smollm2, smollm2_dir, tiny_llama, tiny_tokenizer

    tokenizer = load_smollm2(with_model=False)[0] if smollm2_dir() else tiny_tokenizer()
    tiny_llama(tokenizer, hidden_size=hidden, num_layers=layers).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--completion-tokens", type=int, default=32)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--child", choices=("ours", "trl"), help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    with tempfile.TemporaryDirectory() as folder:
        prepare(folder, args.hidden, args.layers)
        results = {}
        for name in ("ours", "trl"):
            command = [sys.executable, __file__, "--child", name, "--folder", folder,
                       *(f"--{k.replace('_', '-')}={v}" for k, v in vars(args).items() if k not in ("child", "folder"))]
            out = subprocess.run(command, capture_output=True, text=True, check=True)
            results[name] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"tiny Llama hidden={args.hidden} layers={args.layers}; {args.prompts} prompts x {args.generations} "
          f"generations, <= {args.completion_tokens} new tokens, {args.steps} steps, threads={args.threads}, "
          f"device={'cuda' if torch.cuda.is_available() else 'cpu'}")
    for name, label in (("ours", "clinical-gym GRPO"), ("trl", "TRL GRPOTrainer")):
        times = results[name]["times"][1:] or results[name]["times"]
        results[name]["step_s"] = float(np.mean(times))
        print(f"{label:18s} {results[name]['step_s']:7.3f} s/step (steps 2..{args.steps})   peak memory "
              f"{results[name]['peak_mb']:8.1f} MiB")
    print(f"time ratio ours / TRL: {results['ours']['step_s'] / results['trl']['step_s']:.2f}")


if __name__ == "__main__":
    main()
