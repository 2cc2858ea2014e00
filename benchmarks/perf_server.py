"""The environment server under load: 256 concurrent episodes across 4 environments over loopback, checked
against local runs with the same seeds, with step latency and episode throughput beside local ones.

    python benchmarks/perf_server.py [--episodes 256] [--steps 12] [--env ID ...] [--in-process]

One episode per environment warms each side up first (knowledge-base indexes and caches load on first use),
untimed. Each environment gets its own server (``clinical-gym serve`` in a subprocess on 127.0.0.1; ``--in-process``: a
server thread in this process). Every episode opens its own session (``RemoteEnv``) and all run at once, one
client thread each; each plays a scripted action stream (benchmarks/perf_env.py's, seeded per episode, malformed
replies included) for at most ``--steps`` steps. The same episodes then run locally (``gym.make``, one thread).
An episode is identical when every observation, reward, termination flag and info dict (as JSON) matches.
Latency is per step, measured at the client (a round trip for the server); episodes/s counts whole episodes
(session, reset and steps) over the wall time. At full concurrency a step waits behind the other 255 sessions'
steps (its latency is queueing: sessions / throughput), so the latency goal is the round trip of one session at a
time (the first 16 episodes again, one after another); the throughput goal is at full concurrency. Traffic stays on this machine and the run is bounded.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from goals import print_goal  # noqa: E402
from perf_env import ACTION_STREAMS  # noqa: E402

DEFAULT_ENVS = ("ClinicalInquiry-v1", "DiagnosticWorkup-v1", "Triage-v1", "MedicalQA-v1")


@dataclass
class Episode:
    """One scripted episode: environment, reset seed and the replies to send."""

    env_id: str
    seed: int
    actions: list[str]


@dataclass
class Played:
    """What an episode produced (JSON types) and its step latencies in seconds."""

    records: list[Any] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    error: str | None = None


def episodes_for(env_ids: Sequence[str], count: int, steps: int, seed: int = 0) -> list[Episode]:
    """``count`` episodes spread evenly over ``env_ids``, each with its own seed and action stream."""
    import clinical_gym

    family = {e.id: e.family for e in clinical_gym.ENVIRONMENTS}
    out = []
    for i in range(count):
        env_id = env_ids[i % len(env_ids)]
        stream = ACTION_STREAMS[family[env_id]]
        out.append(Episode(env_id, seed + i, stream(np.random.default_rng(seed + i), steps)))
    return out


def play(make_env: Callable[[], Any], episode: Episode) -> Played:
    """Reset with the episode's seed and step until it ends or the actions run out."""
    from clinical_gym.server.protocol import jsonable

    played = Played()
    env = make_env()
    try:
        obs, info = env.reset(seed=episode.seed)
        played.records.append(jsonable([obs, info]))
        for action in episode.actions:
            began = time.perf_counter()
            obs, reward, terminated, truncated, info = env.step(action)
            played.latencies.append(time.perf_counter() - began)
            played.records.append(jsonable([obs, reward, terminated, truncated, info]))
            if terminated or truncated:
                break
    except Exception as e:  # noqa: BLE001 - a failed episode is counted, not fatal
        played.error = f"{type(e).__name__}: {e}"
    finally:
        env.close()
    return played


def run_local(episodes: Sequence[Episode]) -> tuple[list[Played], float]:
    import gymnasium as gym

    import clinical_gym  # noqa: F401

    began = time.perf_counter()
    results = [play(lambda e=e: gym.make(e.env_id), e) for e in episodes]
    return results, time.perf_counter() - began


def run_remote(episodes: Sequence[Episode], urls: dict[str, str]) -> tuple[list[Played], float]:
    """Every episode at once, one thread and one session each."""
    from clinical_gym.server import RemoteEnv

    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(episodes)) as pool:
        results = list(pool.map(lambda e: play(lambda: RemoteEnv(urls[e.env_id], e.env_id), e), episodes))
    return results, time.perf_counter() - began


@contextmanager
def in_process_servers(env_ids: Sequence[str], max_sessions: int) -> Iterator[dict[str, str]]:
    from clinical_gym.server import ServerSettings, running_server

    with ExitStack() as stack:
        yield {env_id: stack.enter_context(running_server(ServerSettings(env_id, max_sessions=max_sessions)))
               for env_id in env_ids}


@contextmanager
def subprocess_servers(env_ids: Sequence[str], max_sessions: int) -> Iterator[dict[str, str]]:
    """``clinical-gym serve`` per environment on free loopback ports; stopped (SIGTERM) on exit."""
    from clinical_gym.server import server_info
    from clinical_gym.server.client import RemoteEnvError

    processes, urls = [], {}
    try:
        for env_id in env_ids:
            port = _free_port()
            processes.append(subprocess.Popen([sys.executable, "-m", "clinical_gym.cli", "serve", "--env", env_id,
                                               "--port", str(port), "--max-sessions", str(max_sessions)]))
            urls[env_id] = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        for url in urls.values():
            while True:
                try:
                    server_info(url, timeout=2)
                    break
                except RemoteEnvError:
                    if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                        raise RuntimeError(f"the server at {url} did not start") from None
                    time.sleep(0.2)
        yield urls
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def compare(local: Sequence[Played], remote: Sequence[Played]) -> list[int]:
    """Indices of episodes whose remote run differs from the local one (or failed)."""
    return [i for i, (a, b) in enumerate(zip(local, remote, strict=True))
            if a.error or b.error or a.records != b.records]


def load_test(env_ids: Sequence[str], episodes: int, steps: int, *, in_process: bool,
              seed: int = 0) -> dict[str, Any]:
    """Run the load test; the figures and the differing episodes."""
    plan = episodes_for(env_ids, episodes, steps, seed)
    per_env = -(-episodes // len(env_ids))
    from clinical_gym.server import RemoteEnv

    servers = in_process_servers if in_process else subprocess_servers
    warm_up = episodes_for(env_ids, len(env_ids), steps, seed=seed + episodes)  # first-use costs (indexes, caches)
    with servers(env_ids, max_sessions=per_env) as urls:
        run_remote(warm_up, urls)
        remote, remote_s = run_remote(plan, urls)
        single = [play(lambda e=e: RemoteEnv(urls[e.env_id], e.env_id), e) for e in plan[:len(env_ids) * 4]]
    run_local(warm_up)
    local, local_s = run_local(plan)

    def lat(results: Sequence[Played], q: float) -> float:
        values = [x for r in results for x in r.latencies]
        return float(np.percentile(values, q) * 1e3) if values else float("nan")

    return {"episodes": episodes, "steps": sum(len(r.latencies) for r in local), "differing": compare(local, remote),
            "errors": [r.error for r in remote if r.error], "remote_s": remote_s, "local_s": local_s,
            "remote_eps": episodes / remote_s, "local_eps": episodes / local_s,
            "remote_p50_ms": lat(remote, 50), "remote_p99_ms": lat(remote, 99),
            "local_p50_ms": lat(local, 50), "local_p99_ms": lat(local, 99),
            "single_p50_ms": lat(single, 50), "single_p99_ms": lat(single, 99),
            "single_local_p50_ms": lat(local[:len(single)], 50), "single_local_p99_ms": lat(local[:len(single)], 99)}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--episodes", type=int, default=256, help="concurrent episodes (default 256)")
    ap.add_argument("--steps", type=int, default=12, help="most steps per episode (default 12)")
    ap.add_argument("--env", action="append", help=f"environment id (repeatable; default {', '.join(DEFAULT_ENVS)})")
    ap.add_argument("--in-process", action="store_true", help="server threads in this process, not subprocesses")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    env_ids = tuple(args.env or DEFAULT_ENVS)
    r = load_test(env_ids, args.episodes, args.steps, in_process=args.in_process, seed=args.seed)
    print(f"{r['episodes']} concurrent episodes over {len(env_ids)} servers ({', '.join(env_ids)}), {r['steps']} "
          f"steps; machine: {os.cpu_count()} cores, shared")
    print(f"{'':<8} {'p50 ms':>8} {'p99 ms':>8} {'episodes/s':>11} {'wall s':>8}")
    print(f"{'remote':<8} {r['remote_p50_ms']:>8.2f} {r['remote_p99_ms']:>8.2f} {r['remote_eps']:>11.1f} "
          f"{r['remote_s']:>8.1f}")
    print(f"{'local':<8} {r['local_p50_ms']:>8.2f} {r['local_p99_ms']:>8.2f} {r['local_eps']:>11.1f} "
          f"{r['local_s']:>8.1f}")
    print(f"one session at a time (same episodes' first {4 * len(env_ids)}): remote p50 {r['single_p50_ms']:.2f} ms, "
          f"p99 {r['single_p99_ms']:.2f} ms; local p50 {r['single_local_p50_ms']:.2f} ms, "
          f"p99 {r['single_local_p99_ms']:.2f} ms")
    for error in r["errors"][:5]:
        print(f"error: {error}")
    identical = r["episodes"] - len(r["differing"])
    ok = print_goal("identical episodes (remote vs local)", identical, r["episodes"], digits=0)
    ok &= print_goal("remote episodes/s vs local", r["remote_eps"] / r["local_eps"], 0.5, unit="x")
    ok &= print_goal("step round trip, one session (p50)", r["single_p50_ms"], 5, at_least=False, unit=" ms")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
