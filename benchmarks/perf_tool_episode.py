"""One tool episode, side by side: ClinicalDiagnosis-v1 against the Healthcare AI GYM's clinical_diagnosis domain.

    python benchmarks/perf_tool_episode.py [--episodes 3000] [--rounds 3] [--peer PATH] [--baseline-tree PATH]

The episode (issue #23): ``reset``, 5 valid ``get_patient_info`` calls on the task's patient, 1 truncated JSON call,
then ``submit_answer``, which ends the episode and computes the final reward (the 5-dimension reward here). The peer
has no ``submit_answer`` tool and ends episodes only at its turn limit, so it runs with ``max_turns=7``: its seventh
step (the same submit text, an unknown tool there) ends the episode and computes its final reward.

Every side runs in its own process pinned to the same core (``--core``), ``--rounds`` times in turn (ours, peer,
baseline, ours, ...), so load from other processes falls on all of them alike; latencies are per call
(``perf_counter``), and the figures are medians (p50), which a busy machine disturbs least. Sides:

* ``clinical-gym``: the checkout this script is in, through ``gym.make`` (as users run it);
* ``clinical-gym, answers varied``: the same with a different answer text each episode (no text memo hits), for
  information;
* ``peer`` (``--peer PATH``): a checkout of the Healthcare AI GYM code (github.com/minstar/BIOAgents: ``bioagents/``
  and ``data/domains/clinical_diagnosis/``), through ``gym.make("BioAgent-v0", domain="clinical_diagnosis")``;
  ``PATH/site`` is added to ``sys.path`` when present (its ``loguru``);
* ``baseline`` (``--baseline-tree PATH``): another clinical-gym checkout, e.g. ``git worktree add /tmp/base
  <commit>``, to compare the final step before and after a change.

Goals (issue #23): the episode p50 at least 10x the peer's, and the final step (the reward) at least 5x cheaper than
the baseline's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
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

NAMESPACED = ("tools", "domains", "trainers", "benchmarks", "knowledge_base")
CALL = '{"name": "get_patient_info", "arguments": {"patient_id": "%s"}}'
TRUNCATED = '{"name": "get_patient_info", "arguments": {"patient_id": '
SUBMIT = '{"name": "submit_answer", "arguments": {"answer": "%s", "reasoning": "Fever, cough and crackles."}}'
WARM_UP = 200


def use_tree(tree: str) -> None:
    """Import ``clinical_gym`` (and its namespaced top-level folders) from the checkout at ``tree``."""
    import importlib.util

    sys.path.insert(0, tree)

    class TreeFinder:
        @staticmethod
        def find_spec(name: str, path: object = None, target: object = None) -> object:
            parts = name.split(".")
            if parts[0] != "clinical_gym" or len(parts) > 2 or (len(parts) == 2 and parts[1] not in NAMESPACED):
                return None
            folder = os.path.join(tree, *(parts[1:] or ["clinical_gym"]))
            return importlib.util.spec_from_file_location(name, os.path.join(folder, "__init__.py"),
                                                          submodule_search_locations=[folder])

    sys.meta_path.insert(0, TreeFinder)


def ours(episodes: int, varied: bool) -> dict[str, list[float]]:
    import gymnasium as gym

    import clinical_gym  # noqa: F401

    # a baseline tree from before the -v1 ids registers ClinicalDiagnosis-v0: the same environment
    env_id = next(i for i in ("ClinicalDiagnosis-v1", "ClinicalDiagnosis-v0") if i in gym.registry)
    env = gym.make(env_id)
    patient = lambda: env.unwrapped.task.patient_id  # noqa: E731
    return _run(env, patient, episodes, varied)


def peer(path: str, episodes: int) -> dict[str, list[float]]:
    for extra in (os.path.join(path, "site"), path):
        if os.path.isdir(extra):
            sys.path.insert(0, extra)
    import gymnasium as gym
    from bioagents.gym.agent_env import register_bioagent_gym

    register_bioagent_gym()
    env = gym.make("BioAgent-v0", domain="clinical_diagnosis", max_turns=7)
    ticket_patient = re.compile(r"\bP\d{3}\b")
    patient = lambda: ticket_patient.search(env.unwrapped._current_task["ticket"]).group(0)  # noqa: E731
    return _run(env, patient, episodes, varied=False)


def _run(env: object, patient: object, episodes: int, varied: bool) -> dict[str, list[float]]:
    """Latencies (seconds) of each part of ``episodes`` scripted episodes, after a warm-up: wall clock
    (``perf_counter``) and this thread's CPU time (``thread_time``, which time spent preempted by other processes
    does not inflate)."""
    def stamp() -> tuple[float, float]:
        return time.perf_counter(), time.thread_time()

    parts = ("episode", "reset", "tool_step", "final_step")
    out: dict[str, list[float]] = {f"{clock}_{part}": [] for clock in ("wall", "cpu") for part in parts}
    out["reward"] = []

    def note(part: str, start: tuple[float, float], end: tuple[float, float]) -> None:
        out[f"wall_{part}"].append(end[0] - start[0])
        out[f"cpu_{part}"].append(end[1] - start[1])

    for i in range(-WARM_UP, episodes):
        answer = f"Community acquired pneumonia {i % 997}" if varied else "Community-acquired pneumonia"
        began = stamp()
        env.reset(seed=i + WARM_UP)  # type: ignore[attr-defined]
        reset_done = stamp()
        pid = patient()  # type: ignore[operator]
        steps = []
        for action in [CALL % pid] * 5 + [TRUNCATED]:
            t = stamp()
            env.step(action)  # type: ignore[attr-defined]
            steps.append((t, stamp()))
        t = stamp()
        _, reward, terminated, truncated, _ = env.step(SUBMIT % answer)  # type: ignore[attr-defined]
        ended = stamp()
        if not (terminated or truncated):
            raise RuntimeError("the scripted episode did not end at its seventh step")
        if i >= 0:
            note("episode", began, ended)
            note("reset", began, reset_done)
            for start, end in steps:
                note("tool_step", start, end)
            note("final_step", t, ended)
            out["reward"].append(float(reward))
    return out


def child(args: argparse.Namespace) -> None:
    os.sched_setaffinity(0, {args.core})
    if args.child == "peer":
        result = peer(args.peer, args.episodes)
    else:
        if args.tree:
            use_tree(args.tree)
        result = ours(args.episodes, varied=args.child == "varied")
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3000, help="episodes per side and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peer", help="checkout of the Healthcare AI GYM (bioagents/ and data/)")
    parser.add_argument("--baseline-tree", help="another clinical-gym checkout to compare the final step with")
    parser.add_argument("--core", type=int, default=0, help="the CPU core every side is pinned to")
    parser.add_argument("--child", choices=("ours", "varied", "baseline", "peer"), help=argparse.SUPPRESS)
    parser.add_argument("--tree", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    here = str(Path(__file__).resolve().parent.parent)  # this checkout (whatever clinical_gym is installed)
    sides = {"clinical-gym": ["--child", "ours", "--tree", here],
             "clinical-gym, answers varied": ["--child", "varied", "--tree", here]}
    if args.peer:
        sides["peer (Healthcare AI GYM)"] = ["--child", "peer", "--peer", args.peer]
    if args.baseline_tree:
        sides["baseline tree"] = ["--child", "baseline", "--tree", args.baseline_tree]
    results: dict[str, dict[str, list[float]]] = {name: {} for name in sides}
    load_before = os.getloadavg()
    for _ in range(args.rounds):
        for name, extra in sides.items():
            command = [sys.executable, __file__, *extra, "--episodes", str(args.episodes), "--core", str(args.core)]
            out = subprocess.run(command, capture_output=True, text=True, check=True)
            for key, values in json.loads(out.stdout.strip().splitlines()[-1]).items():
                results[name].setdefault(key, []).extend(values)
    load_after = os.getloadavg()

    p50 = {name: {k: float(np.median(v)) * 1e3 for k, v in r.items() if k != "reward"} for name, r in results.items()}
    print(f"{args.rounds} rounds x {args.episodes} episodes per side, each side pinned to core {args.core}; "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after ({os.cpu_count()} cores)")
    for clock, label in (("cpu", "CPU time (thread_time)"), ("wall", "wall clock")):
        print(f"p50 in ms, {label}:")
        print(f"  {'side':30s} {'episode':>9s} {'reset':>8s} {'tool step':>10s} {'final step':>11s} "
              f"{'reward part':>12s} {'mean reward':>12s}")
        for name, r in p50.items():
            reward_part = r[f"{clock}_final_step"] - r[f"{clock}_tool_step"]
            print(f"  {name:30s} {r[f'{clock}_episode']:9.3f} {r[f'{clock}_reset']:8.3f} "
                  f"{r[f'{clock}_tool_step']:10.3f} {r[f'{clock}_final_step']:11.3f} {reward_part:12.3f} "
                  f"{np.mean(results[name]['reward']):12.3f}")
    print("(reward part: final step minus a tool step, i.e. what grading the episode adds to the step)")
    ours_p50 = p50["clinical-gym"]
    peer_p50 = p50.get("peer (Healthcare AI GYM)")
    base_p50 = p50.get("baseline tree")
    reward = lambda r: r["cpu_final_step"] - r["cpu_tool_step"]  # noqa: E731
    print_goal("episode speed vs the peer (CPU p50 ratio)",
               peer_p50["cpu_episode"] / ours_p50["cpu_episode"] if peer_p50 else float("nan"), 10, unit="x")
    print_goal("5D reward (final step minus tool step) cheaper than the baseline tree (CPU p50 ratio)",
               reward(base_p50) / reward(ours_p50) if base_p50 else float("nan"), 5, unit="x")


if __name__ == "__main__":
    main()
