"""``summary.json``: per environment, every agent's episode counts and metric means with 95% bootstrap intervals,
agents ranked by the family's primary metric, then by reward; agents equal on both share a rank (listed by name)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel

from clinical_gym.benchmarks.metrics import PRIMARY_METRIC, MetricSummary, metric_values, summarize
from clinical_gym.benchmarks.records import EpisodeRecord


class AgentSummary(BaseModel):
    """One agent on one environment. ``episodes`` counts every record; ``failed`` (agent failures), ``errors``
    (environment or run failures, left out of the metrics), ``truncated`` and ``judge_errors`` count apart."""

    agent: str
    kind: str
    rank: int = 0
    episodes: int
    failed: int
    errors: int
    truncated: int
    judge_errors: int
    metrics: dict[str, MetricSummary]


class EnvSummary(BaseModel):
    env: str
    family: str
    primary_metric: str
    agents: list[AgentSummary]


class Summary(BaseModel):
    seed: int
    envs: list[EnvSummary]


def _mean(agent: AgentSummary, name: str) -> float:
    value = agent.metrics.get(name)
    return -math.inf if value is None or value.mean is None else value.mean


def summarize_agent(records: Sequence[EpisodeRecord], seed: int) -> AgentSummary:
    values = metric_values(records)
    return AgentSummary(
        agent=records[0].agent, kind=records[0].agent_kind, episodes=len(records),
        failed=sum(r.status == "failed" for r in records), errors=sum(r.status == "error" for r in records),
        truncated=sum(r.status == "truncated" for r in records),
        judge_errors=sum(r.judge_error is not None for r in records),
        metrics={name: summarize(v, seed) for name, v in values.items()})


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
        envs.append(EnvSummary(env=env, family=family, primary_metric=primary, agents=agents))
    return Summary(seed=seed, envs=envs)
