"""``summary.json``: per environment, every agent's episode and task counts, metric means with 95% bootstrap
intervals clustered by task, and pass^k / pass@k when every task was played at least twice; agents ranked by the
family's primary metric, then by reward (for the tool domains the primary metric is the reward itself); agents equal
on both share a rank (listed by name)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel

from clinical_gym.benchmarks.metrics import (
    PRIMARY_METRIC,
    SUCCESS_METRIC,
    MetricSummary,
    metric_values,
    reliability,
    scored,
    summarize,
    task_of,
)
from clinical_gym.benchmarks.records import EpisodeRecord


class AgentSummary(BaseModel):
    """One agent on one environment. ``episodes`` counts every record, ``tasks`` the distinct cases or tasks of the
    scored ones; ``failed`` (agent failures), ``errors`` (environment or run failures, left out of the metrics),
    ``truncated`` and ``judge_errors`` count apart. ``reliability``: ``pass^k`` and ``pass@k`` for k = 1 .. the
    fewest trials of a task (empty when a task was played once)."""

    agent: str
    kind: str
    rank: int = 0
    episodes: int
    tasks: int = 0
    failed: int
    errors: int
    truncated: int
    judge_errors: int
    metrics: dict[str, MetricSummary]
    reliability: dict[str, MetricSummary] = {}


class EnvSummary(BaseModel):
    """One environment: its agents, ranked by ``primary_metric`` (then reward); ``success_metric`` is what pass^k
    counts as a success."""

    env: str
    family: str
    primary_metric: str
    success_metric: str = ""
    agents: list[AgentSummary]


class Summary(BaseModel):
    seed: int
    envs: list[EnvSummary]


def _mean(agent: AgentSummary, name: str) -> float:
    value = agent.metrics.get(name)
    return -math.inf if value is None or value.mean is None else value.mean


def summarize_agent(records: Sequence[EpisodeRecord], seed: int) -> AgentSummary:
    values = metric_values(records)
    tasks = [task_of(r) for r in scored(records)]
    return AgentSummary(
        agent=records[0].agent, kind=records[0].agent_kind, episodes=len(records), tasks=len(set(tasks)),
        failed=sum(r.status == "failed" for r in records), errors=sum(r.status == "error" for r in records),
        truncated=sum(r.status == "truncated" for r in records),
        judge_errors=sum(r.judge_error is not None for r in records),
        metrics={name: summarize(v, seed, tasks) for name, v in values.items()},
        reliability=reliability(records, seed))


def build_summary(records: Sequence[EpisodeRecord], seed: int) -> Summary:
    """The summary of every (environment, agent) in ``records``; environments in order of first appearance."""
    groups: dict[str, dict[str, list[EpisodeRecord]]] = defaultdict(lambda: defaultdict(list))
    for record in sorted(records, key=lambda r: r.episode):
        groups[record.env][record.agent].append(record)
    envs = []
    for env, by_agent in groups.items():
        family = next(iter(by_agent.values()))[0].family
        primary = PRIMARY_METRIC[family]
        agents = [summarize_agent(rs, seed) for rs in by_agent.values()]
        score = lambda a: (-_mean(a, primary), -_mean(a, "reward"))  # noqa: E731
        agents.sort(key=lambda a: (*score(a), a.agent))
        for i, agent in enumerate(agents):
            agent.rank = agents[i - 1].rank if i and score(agent) == score(agents[i - 1]) else i + 1
        envs.append(EnvSummary(env=env, family=family, primary_metric=primary, success_metric=SUCCESS_METRIC[family],
                               agents=agents))
    return Summary(seed=seed, envs=envs)
