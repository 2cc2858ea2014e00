"""One RL variant of the smoke preset from an efficacy run's SFT model, evaluated on the same held-out episodes
as that SFT model (which it evaluates too, in its own folder); prints one JSON line.

    python benchmarks/gpu_check/variant.py --smoke EFFICACY_OUT --work DIR --name lam1 --seed 0 \\
        [--algorithm ttopd] [--set lambda_distill=1.0 distill_schedule=\"cosine\" ...]

``--set key=JSON`` overrides a trainer setting (the value is read as JSON)."""
import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--algorithm", default="ttopd")
    parser.add_argument("--set", nargs="*", default=[])
    args = parser.parse_args()
    torch.set_num_threads(1)
    from clinical_gym.benchmarks.learning import stages
    from clinical_gym.benchmarks.learning.paired import paired_result
    from clinical_gym.benchmarks.learning.presets import INQUIRY, SMOKE

    overrides = {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)}
    env = next(e for e in SMOKE.envs if e.env_id == INQUIRY)
    smoke = stages.EnvRun(env, Path(args.smoke) / INQUIRY)
    mine = stages.EnvRun(env, Path(args.work) / f"{args.name}-seed{args.seed}")
    mine.folder.mkdir(parents=True, exist_ok=True)
    original = stages.rl_config
    stages.rl_config = lambda *a, **k: replace(original(*a, **k), output_dir=str(mine.folder / "rl"), **overrides)
    began = time.time()
    folder = stages.rl(smoke, SMOKE, args.algorithm, smoke.folder / "sft" / "model", args.seed)
    trained_s = time.time() - began
    trained = stages.evaluate(mine, SMOKE, f"{args.name}-seed{args.seed}", str(folder))
    start = stages.evaluate(mine, SMOKE, "sft", str(smoke.folder / "sft" / "model"), checkpoint=False)
    row = paired_result(INQUIRY, args.algorithm, args.seed, start, trained)
    m = row["metrics"]
    print(json.dumps({"name": args.name, "seed": args.seed, "algorithm": args.algorithm, "set": overrides,
                      "train_s": round(trained_s, 1), "total_s": round(time.time() - began, 1),
                      **{k: [round(m[k][f], 3) for f in ("start", "trained", "ci_low", "ci_high")]
                         for k in ("accuracy", "accuracy_any_format", "format_errors") if k in m}}))


if __name__ == "__main__":
    main()
