"""The benchmark runner: agents x environments, episodes in parallel through the ``RolloutCollector``, results
appended to ``results.jsonl`` as they finish, then ``summary.json``, ``report.md`` and plots.

Episodes run in fixed chunks of ``batch_size`` (episode indices ``[c*B, (c+1)*B)``), one collector call per chunk,
so generation is batched across the chunk's live episodes and each chunk's episodes, seeds and batches are the same
whether or not the run was interrupted. Rerunning into the same folder resumes: episodes already written are
skipped (a chunk is written whole, after it finishes), and episodes recorded as failed or error are played again.
Before anything is played, every LLM endpoint of the run must answer (``clinical_gym.benchmarks.preflight``). A
failing agent or environment during the run is recorded as failed or error episodes and the run goes on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

import clinical_gym
from clinical_gym.benchmarks.agents import TOOL_CALLING, Agent, AgentSettings, AgentSpec, parse_agent_specs
from clinical_gym.benchmarks.guard import BenchEnv, GuardedPolicy, failure_reason
from clinical_gym.benchmarks.judging import judge_episode
from clinical_gym.benchmarks.actors import actor_kwargs, check_actor_flags
from clinical_gym.benchmarks.plan import EnvPlan, case_set, env_family, plan_env, resolve_env_ids
from clinical_gym.benchmarks.provenance import run_provenance
from clinical_gym.benchmarks.preflight import Endpoint, actor_endpoints, agent_endpoint, check_endpoints
from clinical_gym.benchmarks.records import (
    RUN_FILE,
    EpisodeKey,
    EpisodeRecord,
    TurnRecord,
    append_records,
    drop_partial_line,
    drop_retried,
    json_safe,
    read_records,
)
from clinical_gym.benchmarks.report import write_report
from clinical_gym.content_parts import short_url, without_image_data
from clinical_gym.rollout import EpisodeSpec, RolloutCollector, RolloutLimits, Trajectory
from clinical_gym.rollout.trajectory import Turn

# Settings that decide what the episodes are; a folder's results are only resumed or extended under the same ones.
EPISODE_SETTINGS = ("seed", "cases", "tasks", "split", "env_kwargs", "trials", "patient", "world_model")


@dataclass
class BenchConfig:
    """One benchmark run.

    > What to play, and where the results go
        out: the results folder (running into it again resumes). envs: ``"all"`` or comma-separated environment
        ids. agents: comma-separated agent specs (``clinical_gym.benchmarks.agents``). cases: a case set or file for
        ClinicalInquiry / DiagnosticWorkup (``generated:common:N`` generates N patients; N defaults to
        ``episodes``); tasks: a task file for the tool domains; None keeps each environment's own. split: "test",
        "train" or None (all).
        episodes: per agent and environment (None: each case or task once). trials: each of those episodes' cases
        played this many times (tau2-bench's trials: reports add pass^k and pass@k). seed: decides the episodes
        (cases, reset seeds) and sampling. env_kwargs: ``gym.make`` arguments for every environment, or per
        environment when every key is a registered id (``{"ClinicalInquiry-v1": {"turn_budget": 4}}``).
        patient / world_model: the LLM behind ClinicalInquiry's patient and DiagnosticWorkup's world model (a model
        at ``patient_base_url`` / ``world_model_base_url``, or a client spec; ``clinical_gym.benchmarks.actors``);
        None keeps the rule-based ones.

    > How to play it
        batch_size: episodes collected together. timeout_s: the longest one generation call may take before its
        episodes fail. max_turn_tokens / max_episode_tokens: token limits of model agents. temperature: sampling of
        model agents (0: greedy). base_url: the endpoint of ``openai:`` agents. tool_calling: how ``openai:`` agents
        call tools ("native": the API's tools and tool_calls; "text"). base_model: the base of a LoRA
        checkpoint when its adapter config does not name a usable one. judge: a model at ``judge_base_url``
        (OpenAI-compatible) that rates ClinicalInquiry diagnoses and recommendations. progress: a progress bar.
    """

    envs: str
    agents: str
    out: Path
    cases: str | None = None
    tasks: str | None = None
    split: str | None = "test"
    episodes: int | None = None
    seed: int = 0
    batch_size: int = 16
    timeout_s: float = 600.0
    max_turn_tokens: int = 256
    max_episode_tokens: int = 4096
    temperature: float = 0.0
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    judge: str | None = None
    judge_base_url: str | None = None
    base_url: str | None = None
    base_model: str | None = None
    progress: bool = True
    trials: int = 1
    patient: str | None = None
    patient_base_url: str | None = None
    world_model: str | None = None
    world_model_base_url: str | None = None
    tool_calling: str = "native"

    def __post_init__(self) -> None:
        self.out = Path(self.out)
        if (self.episodes is not None and self.episodes < 1) or self.batch_size < 1 or self.trials < 1:
            raise ValueError("episodes, trials and batch size must be at least 1")
        if self.timeout_s <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {self.timeout_s}")
        if self.split == "all":
            self.split = None
        if self.split not in (None, "train", "test"):
            raise ValueError(f"split must be train, test or all, got {self.split!r}")
        if not isinstance(self.env_kwargs, dict):
            raise ValueError("env_kwargs must be a JSON object")
        if self.tool_calling not in TOOL_CALLING:
            raise ValueError(f"tool calling must be {' or '.join(TOOL_CALLING)}, got {self.tool_calling!r}")
        RolloutLimits(self.max_turn_tokens, self.max_episode_tokens)

    def kwargs_for(self, env_id: str) -> dict[str, Any]:
        """The ``gym.make`` arguments of one environment (see ``env_kwargs``)."""
        per_env = bool(self.env_kwargs) and all(key in clinical_gym.env_ids() for key in self.env_kwargs)
        kwargs = dict(self.env_kwargs.get(env_id, {})) if per_env else dict(self.env_kwargs)
        return {**kwargs, **actor_kwargs(env_family(env_id), self.actor_models, kwargs)}

    @property
    def actor_models(self) -> dict[str, tuple[str | None, str | None]]:
        """(model, base URL) of each simulated actor flag."""
        return {"patient": (self.patient, self.patient_base_url),
                "world_model": (self.world_model, self.world_model_base_url)}


@dataclass
class Job:
    """One agent on one environment: the chunks that still have episodes to play, and the agent once built."""

    plan: EnvPlan
    spec: AgentSpec
    chunks: list[list[int]]
    agent: Agent | None = None


def run_bench(config: BenchConfig) -> Path:
    """Run (or resume) the benchmark and write its report; returns the path of ``report.md``."""
    specs = parse_agent_specs(config.agents)
    env_ids = resolve_env_ids(config.envs)
    check_actor_flags(config.actor_models, (env_family(e) for e in env_ids))
    plans = [plan_env(e, cases=config.cases, tasks=config.tasks, split=config.split, episodes=config.episodes,
                      seed=config.seed, env_kwargs=config.kwargs_for(e), trials=config.trials) for e in env_ids]
    for plan in plans:
        for spec in specs:
            if not spec.plays(plan.family):
                raise ValueError(f"agent {spec.label!r} does not play {plan.env_id} ({plan.family} family)")
    config.out.mkdir(parents=True, exist_ok=True)
    _check_run_file(config, plans)
    drop_partial_line(config.out)
    drop_retried(config.out)  # failed and error episodes are played again
    done = {r.key for r in read_records(config.out)}
    jobs = [Job(plan, spec, _pending_chunks(plan, spec, config, done)) for plan in plans for spec in specs]
    settings = AgentSettings(config.seed, config.temperature, config.base_url, config.base_model, config.tool_calling)
    for job in (j for j in jobs if j.chunks):
        job.agent = job.spec.build(job.plan.family, settings)  # before playing: models load (and fail) here
    judge = _make_judge(config)
    _check_endpoints([j for j in jobs if j.chunks], judge)
    bar = _progress(sum(len(c) for job in jobs for c in job.chunks), config.progress)
    try:
        for job in (j for j in jobs if j.chunks):
            if bar is not None:
                bar.set_postfix_str(f"{job.plan.env_id} / {job.spec.label}")
            for chunk in job.chunks:
                records = play_chunk(job.plan, job.spec.label, job.agent, chunk, config,
                                     on_episode_end=None if bar is None else lambda: bar.update(1))
                records = [r for r in records if r.key not in done]
                if judge is not None:
                    records = [judge_episode(judge, r) for r in records]
                append_records(config.out, records)
    finally:
        if bar is not None:
            bar.close()
    return write_report(config.out)


def play_chunk(plan: EnvPlan, label: str, agent: Agent, chunk: Sequence[int], config: BenchConfig,
               on_episode_end: Callable[[], None] | None = None) -> list[EpisodeRecord]:
    """Play the episodes ``chunk`` of ``plan`` with ``agent``, one collector call; one record per episode."""
    policy = GuardedPolicy(agent.policy, config.timeout_s,
                           None if agent.tokenizer is None else agent.tokenizer.eos_token_id)
    limits = RolloutLimits(config.max_turn_tokens, config.max_episode_tokens)
    collector = RolloutCollector(policy, lambda: BenchEnv(plan.make(), agent.on_reset, on_episode_end),
                                 agent.tokenizer, limits=limits, num_envs=len(chunk))
    specs = [EpisodeSpec(seed=plan.seed_of(k), options={"case_id": plan.case_of(k)}, group=k) for k in chunk]
    try:
        trajectories = collector.collect(specs, seed=_chunk_seed(plan, chunk[0], config))
    except Exception as error:  # noqa: BLE001 (record the chunk as errors; the run goes on)
        reason = f"the episode could not be played: {type(error).__name__}: {error}"
        return [EpisodeRecord(env=plan.env_id, family=plan.family, agent=label, agent_kind=agent.kind, episode=k,
                              seed=plan.seed_of(k), case_id=plan.case_of(k), status="error", reason=reason)
                for k in chunk]
    return [episode_record(plan, label, agent.kind, t) for t in trajectories]


def episode_record(plan: EnvPlan, label: str, kind: str, trajectory: Trajectory) -> EpisodeRecord:
    """The ``results.jsonl`` record of one trajectory (``trajectory.group`` is the episode index)."""
    last = trajectory.turns[-1].info if trajectory.turns else {}
    failure = last.get("agent_failure")
    if failure is not None:
        status, reason = "failed", failure
    elif last.get("error") is not None:
        status, reason = "error", str(last["error"])
    elif trajectory.outcome is not None:
        status, reason = "ok", None
    else:
        status, reason = "truncated", f"stopped by the {trajectory.truncation} limit"
    transcript = [{**m, "content": ""} if m["role"] == "assistant" and failure_reason(m["content"]) is not None
                  else dict(m) for m in without_image_data(trajectory.messages)]
    return EpisodeRecord(
        env=plan.env_id, family=plan.family, agent=label, agent_kind=kind, episode=int(trajectory.group),
        seed=int(trajectory.seed), case_id=trajectory.case_id, status=status, reason=reason, reward=trajectory.reward,
        reward_components=dict(trajectory.reward_components), outcome=json_safe(trajectory.outcome),
        turns=[_turn_record(t) for t in trajectory.turns], transcript=transcript)


def _turn_record(turn: Turn) -> TurnRecord:
    action = "" if failure_reason(turn.action) is not None else turn.action
    info = turn.info  # images are kept as stand-ins naming their size: results files stay small
    if info.get("images"):
        info = {**info, "images": [short_url(u) for u in info["images"]]}
    return TurnRecord(action=action, observation=turn.observation, reward=turn.reward,
                      reward_components=dict(turn.reward_components), info=json_safe(info),
                      finish_reason=turn.finish_reason, generated_tokens=len(turn.generated_ids))


def _pending_chunks(plan: EnvPlan, spec: AgentSpec, config: BenchConfig, done: set[EpisodeKey]) -> list[list[int]]:
    """The fixed chunks of episode indices that still hold an episode to play."""
    chunks = [list(range(s, min(s + config.batch_size, plan.episodes)))
              for s in range(0, plan.episodes, config.batch_size)]
    return [c for c in chunks if any((plan.env_id, spec.label, k) not in done for k in c)]


def _chunk_seed(plan: EnvPlan, first_episode: int, config: BenchConfig) -> int:
    return int(np.random.SeedSequence([config.seed, plan.seed_of(first_episode)]).generate_state(1)[0])


def _check_run_file(config: BenchConfig, plans: Sequence[EnvPlan]) -> None:
    """Write ``run.json`` (episode settings, every setting, provenance), or check that the folder's earlier run
    used the same episode settings."""
    path = config.out / RUN_FILE
    settings = json_safe({name: getattr(config, name) for name in EPISODE_SETTINGS})
    settings["cases"] = case_set(config.cases, config.episodes)
    if path.exists():
        before = json.loads(path.read_text(encoding="utf-8"))
        defaults = {f.name: f.default for f in fields(BenchConfig)}  # a setting added later: its default before
        changed = [f"{k}: {before.get(k, defaults[k])!r} -> {settings[k]!r}"
                   for k in EPISODE_SETTINGS if before.get(k, defaults[k]) != settings[k]]
        if changed:
            raise ValueError(f"{config.out} holds a run with other episode settings ({'; '.join(changed)}); "
                             "use another --out")
        return
    provenance = run_provenance({plan.env_id: plan.case_ids for plan in plans})
    path.write_text(json.dumps({**settings, "config": json_safe(asdict(config)), "provenance": provenance}, indent=1),
                    encoding="utf-8")


def _check_endpoints(jobs: Sequence[Job], judge: Any) -> None:
    """Every LLM endpoint the pending episodes will use answers (agents, simulated actors, the judge)."""
    endpoints = [e for job in jobs if (e := agent_endpoint(job.spec.label, job.agent)) is not None]
    for plan in {id(job.plan): job.plan for job in jobs}.values():
        endpoints += actor_endpoints(plan.env_id, plan.kwargs)
    if judge is not None:
        endpoints.append(Endpoint("judge", judge.client))
    check_endpoints(endpoints)


def _make_judge(config: BenchConfig) -> Any:
    if config.judge is None:
        return None
    from clinical_gym.llm.openai_compat import OpenAICompatClient
    from clinical_gym.rewards import LLMDiagnosisJudge

    return LLMDiagnosisJudge(OpenAICompatClient(base_url=config.judge_base_url, model=config.judge))


def _progress(total: int, enabled: bool) -> Any:
    if not enabled or total == 0:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="bench", unit="episode", dynamic_ncols=True)
