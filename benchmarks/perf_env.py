"""Environment step throughput and latency with the embedded (rule-based) simulators.

    python benchmarks/perf_env.py [--steps 20000] [--env ClinicalInquiry-v1]

Prints, per environment: steps/s, p50/p99 step latency, and the time of ``import clinical_gym``. A scripted
agent per family (questions for ClinicalInquiry, exam orders for DiagnosticWorkup) concludes every few turns,
so episodes reset regularly; resets are included in the step latency.
Single process, single thread (one core). Goals (``GOAL`` lines at the end): import < 500 ms; every environment
>= 2,000 steps/s (issue #2).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: the goal lines live next to it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from goals import print_goal
else:
    from clinical_gym.benchmarks.goals import print_goal

QUESTIONS = [
    "When did it start?", "Where exactly is the pain?", "How bad is it?", "Have you had a fever?", "Any cough?",
    "Any nausea or vomiting?", "Do you take any medications?", "Any allergies?", "Do you smoke?", "Does anything make it worse?",
    "Any shortness of breath?", "Any changes in your bowel habits?", "Any family history of illness?", "Have you travelled recently?",
    "What do you think is wrong with you?", "Have you lost weight?", "Any pain when you pee?", "Is it constant?",
]


EXAMS = [
    "Complete Blood Count", "CBC", "Basic Metabolic Panel", "LFTs", "Troponin I", "Chest X-ray", "ECG", "Urinalysis", "Lipase",
    "CT head without contrast", "C-Reactive Protein", "D-dimer", "Blood cultures", "abdominal examination", "quantum flux scan",
]


def doctor_actions(rng: np.random.Generator, n: int) -> list[str]:
    """A reproducible stream of doctor replies: mostly questions, a diagnosis every 8th turn, some malformed."""
    out = []
    for i in range(n):
        if i % 8 == 7:
            out.append("<think>enough</think><answer>Diagnosis: viral illness\nRecommendation: rest and fluids</answer>")
        elif i % 13 == 5:
            out.append("malformed reply without tags")
        else:
            q = QUESTIONS[int(rng.integers(len(QUESTIONS)))]
            out.append(f"<think>next</think><answer>Question: {q}</answer>")
    return out


def workup_actions(rng: np.random.Generator, n: int) -> list[str]:
    """Exam orders drawn from a fixed list (one unknown name among them), a diagnosis every 6th turn."""
    out = []
    for i in range(n):
        if i % 6 == 5:
            out.append("The available information is sufficient to make a diagnosis.\nDiagnosis: viral illness\nReason: x")
        else:
            exam = EXAMS[int(rng.integers(len(EXAMS)))]
            out.append(f"Current diagnosis: unclear\nBased on the current findings, the following additional investigation(s) are needed: {exam}\nReason: x")
    return out


TOOL_CALLS = [
    '{"name": "think", "arguments": {"thought": "review the chart first"}}',
    '{"name": "search_knowledge", "arguments": {"query": "chest pain troponin", "k": 3}}',
    '{"name": "no_such_tool", "arguments": {}}',
    "not a tool call at all",
]


def tool_actions(rng: np.random.Generator, n: int) -> list[str]:
    """Tool calls: a patient READ tool on the task's patient when the env has one, others from a fixed list, a
    submit every 8th turn. Built lazily per env in ``bench_env`` (patient ids differ per domain)."""
    out = []
    for i in range(n):
        if i % 8 == 7:
            out.append('{"name": "submit_answer", "arguments": {"answer": "viral illness"}}')
        else:
            out.append(TOOL_CALLS[int(rng.integers(len(TOOL_CALLS)))])
    return out


ACTION_STREAMS = {"inquiry": doctor_actions, "workup": workup_actions, "tool": tool_actions}


def bench_env(env_id: str, steps: int, seed: int = 0) -> dict[str, float]:
    import gymnasium as gym

    import clinical_gym  # noqa: F401

    family = next(e.family for e in clinical_gym.ENVIRONMENTS if e.id == env_id)
    env = gym.make(env_id)
    actions = ACTION_STREAMS[family](np.random.default_rng(seed), steps)
    env.reset(seed=seed)
    for a in actions[:200]:  # warm up caches (question analysis, per-case indexes)
        if env.step(a)[2]:
            env.reset()
    lat = np.empty(steps)
    episode = 0
    env.reset(seed=seed)
    start = time.perf_counter()
    for i, a in enumerate(actions):
        t0 = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(a)
        if terminated or truncated:
            episode += 1
            env.reset(seed=seed + episode)
        lat[i] = time.perf_counter() - t0
    total = time.perf_counter() - start
    return {"steps_per_s": steps / total, "p50_ms": float(np.percentile(lat, 50) * 1e3),
            "p99_ms": float(np.percentile(lat, 99) * 1e3), "episodes": episode}


def import_time() -> float:
    code = "import time; t = time.perf_counter(); import clinical_gym; print(time.perf_counter() - t)"
    return min(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout) for _ in range(3))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--env", action="append", help="environment id (repeatable); default: every registered id")
    args = ap.parse_args()
    import clinical_gym

    imported = import_time() * 1e3
    print(f"import clinical_gym: {imported:.0f} ms (goal < 500 ms)")
    print(f"{'environment':<24} {'steps/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'episodes':>9}")
    rates = {}
    for env_id in args.env or clinical_gym.env_ids():
        r = bench_env(env_id, args.steps)
        rates[env_id] = r["steps_per_s"]
        print(f"{env_id:<24} {r['steps_per_s']:>9.0f} {r['p50_ms']:>8.3f} {r['p99_ms']:>8.3f} {r['episodes']:>9}")
    print_goal("import clinical_gym", imported, 500, at_least=False, unit=" ms", digits=0)
    slowest = min(rates, key=rates.get)
    print_goal(f"steps/s of the slowest environment ({slowest}), one core", rates[slowest], 2000, digits=0)


if __name__ == "__main__":
    main()
