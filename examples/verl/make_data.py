"""Write the parquet files verl's trainer reads (data.train_files / data.val_files) for a clinical-gym environment.

    python examples/verl/make_data.py --env ClinicalInquiry-v1 --out data/inquiry --repeat 4
    python examples/verl/make_data.py --env Triage-v1 --out data/triage

Each row: the environment's system prompt and opening observation (``prompt``), ``agent_name: clinical_gym_agent``
and ``extra_info`` with the environment id, case id and reset seed, which ``ClinicalAgentLoop`` plays.
"""

from __future__ import annotations

import argparse
import os

from clinical_gym.integrations.verl import write_dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="ClinicalInquiry-v1", help="registered environment id")
    parser.add_argument("--out", required=True, help="folder for train.parquet and val.parquet")
    parser.add_argument("--repeat", type=int, default=1, help="copies of the training cases (epochs per file)")
    parser.add_argument("--seed", type=int, default=0, help="reset seed of every row")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for split, name in (("train", "train.parquet"), ("validation", "val.parquet")):
        rows = write_dataset(os.path.join(args.out, name), args.env, env_kwargs={"split": split}, seed=args.seed,
                             repeat=args.repeat if split == "train" else 1)
        print(f"{name}: {rows} rows")


if __name__ == "__main__":
    main()
