"""``results.jsonl``: one ``EpisodeRecord`` per line, with the full transcript; appended chunk by chunk, so an
interrupted run keeps every episode it finished (a line cut short by a kill is dropped when the file is reopened)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

RESULTS_FILE = "results.jsonl"
RUN_FILE = "run.json"
"""The run's episode settings (written by the runner, read by the report)."""
Status = Literal["ok", "failed", "error", "truncated"]
EpisodeKey = tuple[str, str, int]


class TurnRecord(BaseModel):
    """One agent reply and the environment's answer."""

    model_config = ConfigDict(extra="forbid")

    action: str
    observation: str
    reward: float
    reward_components: dict[str, float] = {}
    info: dict[str, Any] = {}
    finish_reason: str = "stop"
    generated_tokens: int = 0


class EpisodeRecord(BaseModel):
    """One benchmark episode.

    ``agent`` is the run's label for the agent, ``agent_kind`` what it is ("checklist doctor", "oracle (ground
    truth)", ...). ``status``: "ok" (the environment ended it with an outcome), "failed" (the agent failed:
    exception, timeout or empty output; ``reason`` says which), "error" (the environment or a simulated actor
    failed, ``info["error"]``, or the run could not play the episode), "truncated" (a token or turn limit ended it
    without an outcome).
    ``judge``: LLM-judge scores (0-100) when a judge was configured; ``judge_error`` when the judge failed.
    """

    model_config = ConfigDict(extra="forbid")

    env: str
    family: str
    agent: str
    agent_kind: str = ""
    episode: int
    seed: int
    case_id: str | None = None
    status: Status
    reason: str | None = None
    reward: float = 0.0
    reward_components: dict[str, float] = {}
    outcome: dict[str, Any] | None = None
    turns: list[TurnRecord] = []
    transcript: list[dict[str, Any]] = []  # a message's content: text, or content parts (images as stand-ins)
    judge: dict[str, float] | None = None
    judge_error: str | None = None

    @property
    def key(self) -> EpisodeKey:
        return self.env, self.agent, self.episode


def json_safe(value: Any) -> Any:
    """``value`` with anything JSON cannot hold turned into text."""
    return json.loads(json.dumps(value, default=str))


def append_records(out: Path, records: Iterable[EpisodeRecord]) -> None:
    lines = "".join(r.model_dump_json() + "\n" for r in records)
    if lines:
        with (out / RESULTS_FILE).open("a", encoding="utf-8") as f:
            f.write(lines)
            f.flush()


def read_records(out: Path) -> list[EpisodeRecord]:
    """Every complete record of ``out/results.jsonl`` (first one wins for a repeated episode)."""
    path = out / RESULTS_FILE
    if not path.exists():
        return []
    records: dict[EpisodeKey, EpisodeRecord] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = EpisodeRecord.model_validate_json(line)
        except ValueError:
            continue
        records.setdefault(record.key, record)
    return list(records.values())


RETRIED: frozenset[str] = frozenset({"failed", "error"})
"""Statuses whose episodes a resumed run plays again (an agent or a simulated actor failed; nothing was scored)."""


def drop_retried(out: Path) -> int:
    """Remove the episodes a resumed run plays again (status in ``RETRIED``) from ``out/results.jsonl``, rewriting it
    atomically (a kill leaves the old file or the new one); returns how many were removed."""
    path = out / RESULTS_FILE
    if not path.exists():
        return 0
    kept, dropped = [], 0
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        try:
            status = EpisodeRecord.model_validate_json(line).status
        except ValueError:
            status = None
        if status in RETRIED:
            dropped += 1
        else:
            kept.append(line)
    if dropped:
        temporary = path.with_suffix(".jsonl.tmp")
        temporary.write_text("".join(kept), encoding="utf-8")
        temporary.replace(path)
    return dropped


def drop_partial_line(out: Path) -> None:
    """Cut a last line left unfinished by a killed run, so appending starts on a fresh line."""
    path = out / RESULTS_FILE
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])
