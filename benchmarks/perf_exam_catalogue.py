"""Exam-name resolution speed of the DiagnosticWorkup catalogue.

    python benchmarks/perf_exam_catalogue.py [--repeat 2000] [--cold 100]

Prints the catalogue load time, then µs per ``Catalogue.resolve`` call for four kinds of request: an exact canonical
name, an alias or abbreviation, a typo, and an unknown name. "warm" repeats requests already seen (the per-request
cache answers); "cold" sends each request once (distinct whitespace padding defeats the caches, so the normalisation,
index look-ups and, for typos and unknown names, the fuzzy search all run). Single thread.
Goal (issue "DiagnosticWorkup-v1"): an exact alias resolves in < 50 µs after warm-up.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from clinical_gym.domains.workup.catalogue import Catalogue, load_catalogue

if __package__ in (None, ""):  # run as a script: the goal lines live next to it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from goals import print_goal
else:
    from clinical_gym.benchmarks.goals import print_goal

REQUESTS = {
    "exact": ["Complete blood count", "Chest X-ray", "Lipase", "CT head without contrast", "Urinalysis"],
    "alias": ["CBC", "please order a stat CXR", "U&Es", "hs-troponin", "non-contrast CT head", "potassium"],
    "typo": ["complet blood count", "troponn", "urinanalysis", "chest xary", "magnesiun"],
    "unknown": ["quantum flux scan", "banana", "give aspirin 300 mg", "admit to ICU"],
}


def per_call_us(fn: Callable[[str], object], requests: list[str]) -> float:
    start = time.perf_counter()
    for r in requests:
        fn(r)
    return (time.perf_counter() - start) / len(requests) * 1e6


def padded(name: str, i: int) -> str:
    """The i-th distinct spelling of ``name`` that differs only in surrounding whitespace."""
    return " " * (i % 16) + name + " " * (i // 16 + 1)


def bench(catalogue: Catalogue, repeat: int, cold_repeat: int) -> dict[str, tuple[float, float]]:
    out = {}
    for kind, names in REQUESTS.items():
        for n in names:  # warm-up: the answers are cached from here on
            catalogue.resolve(n)
        warm = per_call_us(catalogue.resolve, names * repeat)
        cold = per_call_us(catalogue.resolve, [padded(n, i) for i in range(cold_repeat) for n in names])
        out[kind] = (warm, cold)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=2000, help="warm calls per request name")
    ap.add_argument("--cold", type=int, default=100, help="distinct cold spellings per request name")
    args = ap.parse_args()
    start = time.perf_counter()
    catalogue = load_catalogue()
    print(f"load_catalogue: {(time.perf_counter() - start) * 1e3:.0f} ms ({len(catalogue)} exams)")
    print(f"{'request':<9} {'warm µs':>9} {'cold µs':>9}")
    timings = bench(catalogue, args.repeat, args.cold)
    for kind, (warm, cold) in timings.items():
        print(f"{kind:<9} {warm:>9.2f} {cold:>9.1f}")
    print_goal("alias resolution after warm-up", timings["alias"][0], 50, at_least=False, unit=" µs")


if __name__ == "__main__":
    main()
