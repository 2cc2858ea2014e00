"""Task generators of the tool domains: speed, variety and answer balance (``clinical_gym.tool_env.generation``).

    python benchmarks/perf_task_generators.py [--env ID[,ID...]|all] [--n 10000] [--seed 0] [--validate 500]

Each domain runs in its own process on one core (threads pinned to 1). Per domain it prints:

* the one-off setup (importing the domain, loading its catalogues and, where used, the disease table and the ICD-10-CM
  titles the case generator checks denials against; a 1-task generation), then the time to generate ``--n`` tasks
  and the database holding their records (goal: 10,000 in under 20 s on one core, setup excluded as in
  ``perf_generator.py``). The goal is judged on the process's CPU time, which the other work on a shared machine
  does not inflate; the wall-clock time is printed beside it;
* distinct tasks by content hash with the task id, patient, study and question ids and personal names left out
  (``Draft.content_hash``; goal: at least 2,000 of 10,000, aim 95%);
* distinct expected answers (an option's text for multiple choice) and the share of the most common one (goal: at
  most 25%, unless the domain has fewer than four distinct answers);
* with ``--validate K``: the time to validate the first K tasks, the scripted expert's episode included, and the
  problems found (goal: none).

One summary line per goal and domain ends with PASS or SHORT.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter

GOAL_SECONDS = 20.0
GOAL_DISTINCT = 2_000
AIM_DISTINCT = 0.95
GOAL_SHARE = 0.25


def measure(env_id: str, n: int, seed: int, validate: int) -> dict:
    """The figures of one domain, in this process."""
    start = time.perf_counter()
    from clinical_gym.tool_env.generation import generator_for, validate_generated

    generator = generator_for(env_id)
    generator.generate(1, seed + 1)
    setup = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    generated = generator.generate(n, seed)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    answers = Counter(t.options[t.answer] if t.options else t.answer for t in generated.tasks)
    figures = {"env": env_id, "n": n, "setup_s": setup, "generate_s": elapsed, "cpu_s": cpu,
               "distinct_tasks": len({d.content_hash() for d in generated.drafts}),
               "distinct_answers": len(answers), "top_answer": answers.most_common(1)[0][0],
               "top_share": answers.most_common(1)[0][1] / n,
               "test_share": sum(t.split == "test" for t in generated.tasks) / n}
    if validate:
        subset = generator.generate(validate, seed)
        start = time.perf_counter()
        problems = validate_generated(subset, generator)
        figures.update(validated=validate, validate_s=time.perf_counter() - start, problems=len(problems),
                       first_problem=problems[0] if problems else "")
    return figures


def report(f: dict) -> list[str]:
    """The lines of one domain: figures, then one line per goal ending PASS or SHORT."""
    env, n = f["env"], f["n"]
    verdict = lambda ok: "PASS" if ok else "SHORT"  # noqa: E731
    top = f["top_answer"] if len(f["top_answer"]) <= 50 else f["top_answer"][:47] + "..."
    lines = [f"{env}: {n:,} tasks in {f['cpu_s']:.1f} s of CPU ({f['generate_s']:.1f} s wall, {n / f['cpu_s']:,.0f} "
             f"tasks per CPU second) after a {f['setup_s']:.1f} s setup; test split "
             f"{f['test_share']:.1%}; most common answer {top!r}"]
    scale = n / 10_000
    lines.append(f"goal speed {env}: {f['cpu_s']:.1f} CPU s for {n:,} tasks on one core (< {GOAL_SECONDS * scale:.0f} s) "
                 f"{verdict(f['cpu_s'] < GOAL_SECONDS * scale)}")
    distinct = f["distinct_tasks"]
    lines.append(f"goal distinct tasks {env}: {distinct:,} of {n:,} ({distinct / n:.1%}; >= {GOAL_DISTINCT * scale:,.0f}, "
                 f"aim {AIM_DISTINCT:.0%}) {verdict(distinct >= GOAL_DISTINCT * scale)}")
    few = f["distinct_answers"] < 4
    lines.append(f"goal answer balance {env}: {f['distinct_answers']:,} distinct answers, most common "
                 f"{f['top_share']:.1%} (<= {GOAL_SHARE:.0%}{', fewer than four classes' if few else ''}) "
                 f"{verdict(few or f['top_share'] <= GOAL_SHARE)}")
    if "validated" in f:
        lines.append(f"goal valid {env}: {f['problems']} problem(s) in {f['validated']:,} validated tasks "
                     f"({f['validate_s']:.1f} s, the scripted expert's episode included)"
                     + (f"; first: {f['first_problem']}" if f["problems"] else "") + f" {verdict(f['problems'] == 0)}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--env", default="all", help="environment ids, comma-separated, or all (default)")
    ap.add_argument("--n", type=int, default=10_000, help="tasks per domain (default 10,000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--validate", type=int, default=0, help="also validate this many tasks per domain")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # run one domain, print JSON
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.env, args.n, args.seed, args.validate)))
        return
    from clinical_gym.tool_env.generation import generator_env_ids

    envs = generator_env_ids() if args.env == "all" else [e.strip() for e in args.env.split(",")]
    single = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    for env_id in envs:
        done = subprocess.run([sys.executable, __file__, "--one", "--env", env_id, "--n", str(args.n), "--seed",
                               str(args.seed), "--validate", str(args.validate)], capture_output=True, text=True,
                              env=single)
        if done.returncode != 0:
            print(f"{env_id}: failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
            print(f"goal speed {env_id}: not measured SHORT")
            continue
        print("\n".join(report(json.loads(done.stdout.strip().splitlines()[-1]))), flush=True)


if __name__ == "__main__":
    main()
