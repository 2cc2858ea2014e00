"""One episode of a benchmark folder as readable text (``clinical-gym bench show``)."""

from __future__ import annotations

from collections.abc import Sequence

from clinical_gym.benchmarks.metrics import episode_metrics
from clinical_gym.benchmarks.records import EpisodeRecord
from clinical_gym.content_parts import text_of


def find_episode(records: Sequence[EpisodeRecord], episode: int, env: str | None = None,
                 agent: str | None = None) -> EpisodeRecord:
    """The record of episode ``episode`` (narrowed by ``env`` and ``agent``); ``ValueError`` when none or several
    match, naming what to pass."""
    found = [r for r in records if r.episode == episode and env in (None, r.env) and agent in (None, r.agent)]
    if not found:
        narrowed = (f" for env {env}" if env else "") + (f" agent {agent}" if agent else "")
        raise ValueError(f"no episode {episode}{narrowed}")
    if len(found) > 1:
        pairs = ", ".join(f"{r.env}/{r.agent}" for r in found)
        raise ValueError(f"episode {episode} exists for {len(found)} runs ({pairs}); pass --env and --agent")
    return found[0]


def format_episode(record: EpisodeRecord) -> str:
    """Header (who, which case, how it ended, metrics), then every turn: the agent's reply and the environment's."""
    lines = [f"{record.env} · {record.agent} ({record.agent_kind}) · episode {record.episode} · case {record.case_id} "
             f"· seed {record.seed}",
             f"status: {record.status}" + (f" ({record.reason})" if record.reason else "")
             + f" · reward {record.reward:+.3f}"]
    if record.outcome:
        shown = {k: v for k, v in record.outcome.items() if isinstance(v, (str, int, float, bool)) and v != ""}
        lines.append("outcome: " + ", ".join(f"{k}={v}" for k, v in shown.items()))
    metrics = {k: v for k, v in episode_metrics(record).items() if v is not None}
    lines.append("metrics: " + ", ".join(f"{k}={v:g}" for k, v in metrics.items()))
    if record.transcript and record.transcript[0]["role"] == "system":
        lines.append(f"\n[system] {text_of(record.transcript[0]['content']).splitlines()[0]} …")
    opening = next((text_of(m["content"], "[image]") for m in record.transcript if m["role"] == "user"), "")
    lines.append(f"[env] {opening}")
    for i, turn in enumerate(record.turns, 1):
        lines.append(f"\n--- turn {i} (reward {turn.reward:+.3f}) ---")
        lines.append(f"[agent] {turn.action}")
        lines.append(f"[env] {turn.observation}")
    return "\n".join(lines)
