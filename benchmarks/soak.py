"""Soak test: many episodes across every registered environment with the scripted agents, watching memory.

    python benchmarks/soak.py                      # 100,000 episodes, windows of 10,000
    python benchmarks/soak.py --episodes 2000 --window 500

Episodes go round-robin over every registered id; each environment alternates its rule-based agent, the oracle
and the random agent (``clinical_gym.benchmarks.agents``), each driven through its ``Policy`` as the runner drives it (text
mode, no model). One environment per id lives for the whole run, as in a long training job. Printed: episodes/s,
peak RSS at the start and at the end, the current RSS after the first and the last window, errors (exceptions and
``info["error"]``), and whether memory grew more than ``--max-growth`` (default 10%) between those two windows
(exit code 1 if it did, or if any episode raised).
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym  # noqa: E402

import clinical_gym  # noqa: E402
from clinical_gym.benchmarks.agents import AgentSettings, parse_agent_specs  # noqa: E402
from clinical_gym.rollout.policy import Prompt  # noqa: E402

AGENTS = "baseline,oracle,random"
MAX_STEPS = 60  # a scripted agent that loops is cut here and counted as an error


def rss_mib() -> float:
    """The current resident set size in MiB (from /proc; the peak where /proc is missing)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * resource.getpagesize() / 2**20
    except OSError:
        return peak_rss_mib()


def peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


@dataclass
class SoakResult:
    episodes: int
    seconds: float
    episodes_per_s: float
    steps: int
    peak_rss_start_mib: float
    peak_rss_end_mib: float
    rss_first_window_mib: float
    rss_last_window_mib: float
    growth: float
    errors: dict[str, int] = field(default_factory=dict)
    episodes_by_env: dict[str, int] = field(default_factory=dict)


def play_episode(env: gym.Env, agent, seed: int) -> tuple[int, str | None]:
    """One episode; returns the steps taken and an error description (None when it ended cleanly)."""
    obs, info = env.reset(seed=seed)
    if agent.on_reset is not None:
        agent.on_reset(obs, info, env.unwrapped)
    for step in range(1, MAX_STEPS + 1):
        reply = agent.policy.generate([Prompt(env.unwrapped.messages, max_new_tokens=512)], seed=seed)[0].text
        obs, _, terminated, truncated, info = env.step(reply)
        if "error" in info:
            return step, f"info error: {str(info['error'])[:80]}"
        if terminated or truncated:
            return step, None
    return MAX_STEPS, f"no end within {MAX_STEPS} steps"


def soak(episodes: int, window: int, seed: int = 0, progress: bool = True) -> SoakResult:
    env_ids = clinical_gym.env_ids()
    envs = {env_id: gym.make(env_id).unwrapped for env_id in env_ids}
    families = {e.id: e.family for e in clinical_gym.ENVIRONMENTS}
    specs = parse_agent_specs(AGENTS)
    agents = {env_id: [s.build(families[env_id], AgentSettings(seed=seed)) for s in specs] for env_id in env_ids}
    gc.collect()
    peak_start = peak_rss_mib()
    errors: Counter[str] = Counter()
    by_env: Counter[str] = Counter()
    steps = 0
    window_rss: list[float] = []
    began = time.perf_counter()
    for k in range(episodes):
        env_id = env_ids[k % len(env_ids)]
        agent = agents[env_id][(k // len(env_ids)) % len(specs)]
        try:
            taken, error = play_episode(envs[env_id], agent, seed + k)
        except Exception as e:  # noqa: BLE001 (a soak counts every failure and goes on)
            taken, error = 0, f"{type(e).__name__}: {str(e)[:80]}"
        steps += taken
        by_env[env_id] += 1
        if error is not None:
            errors[f"{env_id}: {error}"] += 1
        if (k + 1) % window == 0:
            gc.collect()
            window_rss.append(rss_mib())
            if progress:
                rate = (k + 1) / (time.perf_counter() - began)
                print(f"  {k + 1:>7,} episodes  {rate:,.0f}/s  RSS {window_rss[-1]:.1f} MiB", file=sys.stderr)
    seconds = time.perf_counter() - began
    first, last = (window_rss[0], window_rss[-1]) if window_rss else (rss_mib(), rss_mib())
    return SoakResult(episodes=episodes, seconds=round(seconds, 2), episodes_per_s=round(episodes / seconds, 1),
                      steps=steps, peak_rss_start_mib=round(peak_start, 1), peak_rss_end_mib=round(peak_rss_mib(), 1),
                      rss_first_window_mib=round(first, 1), rss_last_window_mib=round(last, 1),
                      growth=round(last / first - 1, 4), errors=dict(errors), episodes_by_env=dict(by_env))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--window", type=int, default=10_000, help="episodes between memory readings")
    parser.add_argument("--max-growth", type=float, default=0.10, help="allowed RSS growth, first to last window")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if args.episodes < 1 or not 1 <= args.window <= args.episodes:
        parser.error("need episodes >= 1 and 1 <= window <= episodes")
    result = soak(args.episodes, args.window, args.seed, progress=not args.quiet)
    ok = result.growth <= args.max_growth and not result.errors
    print(f"episodes: {result.episodes:,} over {len(result.episodes_by_env)} environments in {result.seconds:.1f} s "
          f"({result.episodes_per_s:,.0f} episodes/s, {result.steps:,} steps)")
    print(f"peak RSS: {result.peak_rss_start_mib:.1f} MiB at the start, {result.peak_rss_end_mib:.1f} MiB at the end")
    print(f"RSS after the first / last window of {args.window:,}: {result.rss_first_window_mib:.1f} / "
          f"{result.rss_last_window_mib:.1f} MiB (growth {result.growth:+.1%}, limit {args.max_growth:.0%})")
    print(f"errors: {sum(result.errors.values())}")
    for what, count in sorted(result.errors.items()):
        print(f"  {count:>6} x {what}")
    print("PASS" if ok else "FAIL")
    if args.json:
        args.json.write_text(json.dumps(asdict(result), indent=1), encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
