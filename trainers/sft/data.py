"""Expert conversations for supervised fine-tuning (the cold start before RL).

Three sources, one record (``ExpertExample``): any ``Policy`` playing an environment (a scripted or oracle agent,
a model behind an OpenAI-compatible endpoint), given as the policy plus an environment factory
(``collect_examples``), and recorded doctor-patient dialogues (MTMedDialog JSON), whose real doctor turns are
played as actions in the environment's format against a patient that replies with the recorded answers
(``dialogue_examples``). Every episode runs in the real environment, so the stored conversation is the one the
environment logged: its system prompt, its observations, and actions it parsed. Episodes the environment did not
end, episodes with an action it rejected (format, more than one question, an invalid tool call) and episodes
below ``min_reward`` are dropped. Replies without reasoning get a templated rationale (``clinical_gym.trainers.sft.rationale``)
before the environment sees them, so the stored reply with its rationale is what the environment parsed.

``save_examples`` writes a folder: ``conversations.jsonl`` (one example per line, OpenAI-style ``messages``),
``dataset/`` (the same rows as a Hugging Face dataset, ``Dataset.save_to_disk``) and ``summary.json``;
``load_examples`` reads any of them back.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_gym.cases import Case
from clinical_gym.cases.formats.imported import Origin
from clinical_gym.cases.formats.mtmeddialog import FORMAT as MTMEDDIALOG
from clinical_gym.cases.formats.mtmeddialog import MTMedDialogRow
from clinical_gym.cases.formats.rows import read_rows
from clinical_gym.cases.formats.text import is_denial
from clinical_gym.registration import ENVIRONMENTS
from clinical_gym.rollout import EpisodeSpec, Policy, RolloutCollector, RolloutLimits, ScriptedPolicy, Trajectory
from clinical_gym.trainers.sft.rationale import RATIONALE_MODES, with_rationale

CONVERSATIONS_FILE = "conversations.jsonl"
DATASET_DIR = "dataset"
SUMMARY_FILE = "summary.json"
ACTION_KEY = "sft_action"  # step info: the reply as the environment received it (with its rationale)
TOOLS_KEY = "sft_tools"  # first step info: the reset's tool schemas
TEXT_LIMITS = RolloutLimits(max_turn_tokens=1024, max_episode_tokens=1_000_000)
_RECOMMENDATION_FIELD = re.compile(r"(recommendation\s*[:：]\s*)(.*?)(\s*</answer>\s*$)", re.S | re.I)
ResetHook = Callable[[str, Mapping[str, Any], gym.Env], None]


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant", "tool"]
    content: str


class ExpertExample(BaseModel):
    """One expert conversation: ``messages`` from the system prompt to the last assistant reply (the environment's
    closing message is left out), where it came from, and how it scored."""

    model_config = ConfigDict(extra="forbid")

    messages: list[ChatMessage] = Field(min_length=2)
    env: str
    source: str
    case_id: str | None = None
    seed: int | None = None
    reward: float
    success: bool | None = None
    result: str | None = None
    tools: list[dict[str, Any]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _turn_order(self) -> ExpertExample:
        roles = [m.role for m in self.messages]
        start = 1 if roles[0] == "system" else 0
        if "system" in roles[start:]:
            raise ValueError("only the first message may be the system prompt")
        if roles[start] == "assistant" or roles[-1] != "assistant":
            raise ValueError("a conversation opens with the environment and ends with an assistant reply")
        for before, after in pairwise(roles[start:]):
            if (before == "assistant") == (after == "assistant"):
                raise ValueError("assistant replies and environment messages must alternate")
        return self

    @property
    def actions(self) -> list[str]:
        return [m.content for m in self.messages if m.role == "assistant"]


@dataclass
class DataReport:
    """How many episodes were kept, and why the others were dropped (reason -> count)."""

    kept: int = 0
    dropped: Counter = field(default_factory=Counter)

    def drop(self, reason: str) -> None:
        self.dropped[reason] += 1

    def merge(self, other: DataReport) -> None:
        self.kept += other.kept
        self.dropped.update(other.dropped)

    def describe(self) -> str:
        reasons = "; ".join(f"{n} {reason}" for reason, n in self.dropped.most_common())
        return f"kept {self.kept}, dropped {sum(self.dropped.values())}" + (f" ({reasons})" if reasons else "")


def env_family(env_id: str) -> str | None:
    """The family of a registered clinical-gym id (inquiry, workup, tool), None for other ids."""
    return next((e.family for e in ENVIRONMENTS if e.id == env_id), None)


def excerpt(text: str, max_words: int) -> str:
    """The first ``max_words`` words of ``text``, cut back to the last clause boundary (a comma, semicolon or full
    stop followed by a space, outside brackets) among them when there is one past their first third, else to the
    bracket left open; nothing is added but a closing full stop."""
    words = text.split()
    if len(words) <= max_words:
        return " ".join(words)
    head = " ".join(words[:max_words])
    depth, opened, cuts = 0, len(head), []
    for i, char in enumerate(head):
        if char in "([":
            depth += 1
            opened = i if depth == 1 else opened
        elif char in ")]":
            depth = max(depth - 1, 0)
        elif char in ",;." and depth == 0 and head[i + 1:i + 2] == " ":
            cuts.append(i)
    cut = cuts[-1] if cuts and cuts[-1] > len(head) // 3 else (opened if depth else len(head))
    return head[:cut].rstrip(" ,;:") + "."


def shorten_recommendation(action: str, max_words: int | None) -> str:
    """A diagnosis reply whose ``Recommendation:`` (the last field of its ``<answer>``; reasoning before the answer
    is never touched) is cut to an ``excerpt`` of ``max_words`` words; any other reply, or ``max_words`` None, is
    returned as it is."""
    if max_words is None:
        return action
    found = _RECOMMENDATION_FIELD.search(action, max(action.lower().rfind("<answer>"), 0))
    if found is None:
        return action
    return action[:found.start(2)] + excerpt(found.group(2), max_words) + action[found.end(2):]


class ExpertEnv(gym.Wrapper):
    """An environment as the data builder plays it: each reply gets its rationale (``with_rationale``) and, when
    asked, a shortened recommendation (``shorten_recommendation``) before the environment sees it; the reply as sent
    is recorded in the step's info (``ACTION_KEY``), and ``on_reset`` (an agent's reset hook, e.g. the oracle's)
    sees every reset."""

    def __init__(self, env: gym.Env, family: str | None, rationale: str = "fill",
                 on_reset: ResetHook | None = None, max_recommendation_words: int | None = None) -> None:
        super().__init__(env)
        self.family, self.rationale, self.on_reset = family, rationale, on_reset
        self.max_recommendation_words = max_recommendation_words
        self._tools: list[dict[str, Any]] | None = None

    def reset(self, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        if self.on_reset is not None:
            self.on_reset(obs, info, self.env.unwrapped)
        self._tools = list(info.get("tools") or [])
        return obs, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        episode = self.env.unwrapped
        sent = with_rationale(shorten_recommendation(action, self.max_recommendation_words), self.family or "",
                              episode, list(getattr(episode, "messages", [])), self.rationale)
        obs, reward, terminated, truncated, info = self.env.step(sent)
        info = {**info, ACTION_KEY: sent}
        if self._tools is not None:
            info[TOOLS_KEY], self._tools = self._tools, None
        return obs, reward, terminated, truncated, info


def rejection(info: Mapping[str, Any]) -> str | None:
    """Why the environment rejected a step's action (its parse error, the one-question rule, an invalid tool call),
    or None when it accepted it."""
    if "parse_error" in info:
        return f"unparsable action ({info['parse_error']})"
    if info.get("reply_kind") in ("invalid", "multiple_questions"):
        return f"rejected action ({info['reply_kind'].replace('_', ' ')})"
    calls = info.get("tool_calls")
    if isinstance(calls, list) and any(isinstance(c, Mapping) and c.get("error_kind") == "invalid_call"
                                       for c in calls):
        return "rejected action (invalid tool call)"
    return None


def drop_reason(trajectory: Trajectory, min_reward: float | None) -> str | None:
    """Why an episode is not expert data, or None to keep it."""
    if not trajectory.turns:
        return "no reply"
    if any(t.info.get("error") is not None for t in trajectory.turns):
        return "environment error"
    for turn in trajectory.turns:
        reason = rejection(turn.info)
        if reason is not None:
            return reason
    if not trajectory.terminated:
        return "not finished"
    if min_reward is not None and trajectory.reward < min_reward:
        return "below min reward"
    return None


def example_from_trajectory(trajectory: Trajectory, env_id: str, source: str) -> ExpertExample:
    """The conversation the environment logged: each assistant message is the reply it received (with rationale);
    the closing message after the last reply is left out."""
    sent = iter(t.info.get(ACTION_KEY, t.action) for t in trajectory.turns)
    messages = [{"role": m["role"], "content": next(sent) if m["role"] == "assistant" else m["content"]}
                for m in trajectory.messages]
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    outcome = trajectory.outcome or {}
    tools = trajectory.turns[0].info.get(TOOLS_KEY) or []
    return ExpertExample(messages=messages[:last + 1], env=env_id, source=source, case_id=trajectory.case_id,
                         seed=trajectory.seed, reward=trajectory.reward, success=trajectory.success,
                         result=outcome.get("result"), tools=tools)


def examples_from_trajectories(trajectories: Sequence[Trajectory], env_id: str, source: str,
                               min_reward: float | None = None) -> tuple[list[ExpertExample], DataReport]:
    report = DataReport()
    examples = []
    for trajectory in trajectories:
        reason = drop_reason(trajectory, min_reward)
        if reason is not None:
            report.drop(reason)
            continue
        examples.append(example_from_trajectory(trajectory, env_id, source))
        report.kept += 1
    return examples, report


def collect_examples(policy: Policy, env_factory: Callable[[], gym.Env], episodes: Sequence[EpisodeSpec], *,
                     env_id: str, source: str, min_reward: float | None = None, rationale: str = "fill",
                     on_reset: ResetHook | None = None, max_recommendation_words: int | None = None,
                     num_envs: int = 16, limits: RolloutLimits | None = None,
                     seed: int = 0) -> tuple[list[ExpertExample], DataReport]:
    """Play ``episodes`` with ``policy`` (text mode: the policy sees messages) in environments from
    ``env_factory`` (``env_id`` names them) and keep the expert conversations (see the module docstring).
    ``source`` labels the examples; ``on_reset`` is the agent's reset hook, if it has one;
    ``max_recommendation_words`` shortens diagnosis replies' recommendations (``shorten_recommendation``)."""
    if rationale not in RATIONALE_MODES:
        raise ValueError(f"rationale must be one of {', '.join(RATIONALE_MODES)}; got {rationale!r}")
    family = env_family(env_id)
    collector = RolloutCollector(
        policy, lambda: ExpertEnv(env_factory(), family, rationale, on_reset, max_recommendation_words),
        limits=limits or TEXT_LIMITS, num_envs=num_envs)
    trajectories = collector.collect(episodes, seed=seed)
    return examples_from_trajectories(trajectories, env_id, source, min_reward)


# -- recorded dialogues (MTMedDialog) ---------------------------------------------------------------------------
@dataclass(frozen=True)
class RecordedReply:
    """A patient reply as ClinicalInquiry's patient protocol returns it."""

    text: str
    kind: str
    facts: tuple[str, ...] = ()


class RecordedPatient:
    """A simulated patient that gives the recorded answers of one dialogue, in order, whatever is asked."""

    def __init__(self, answers: Sequence[str]) -> None:
        self.answers = list(answers)
        self.revealed: list[str] = []
        self._next = 0

    def reset(self, case: Case, rng: Any) -> None:
        self._next = 0

    def reply(self, question: str, history: Any = None) -> RecordedReply:
        if self._next >= len(self.answers):
            return RecordedReply("Sorry, I cannot answer this question.", "refused")
        text = self.answers[self._next]
        self._next += 1
        return RecordedReply(text, "denied" if is_denial(text) else "answered")


def dialogue_actions(row: MTMedDialogRow) -> tuple[list[str], list[str]]:
    """The doctor's replies of a recorded dialogue in the ClinicalInquiry action format (each question, then the
    diagnosis and recommendation) and the patient's recorded answers. Turns missing either side are skipped."""
    turns = [(" ".join(t.doctor_question.split()), " ".join(t.patient_response.split())) for t in row.dialogue]
    turns = [(q, a) for q, a in turns if q and a]
    actions = [f"<answer>Question: {q}</answer>" for q, _ in turns]
    final = f"Diagnosis: {' '.join(row.diagnosis.split())}"
    recommendation = " ".join(row.recommendation.split())
    if recommendation:
        final += f"\nRecommendation: {recommendation}"
    return [*actions, f"<answer>{final}</answer>"], [a for _, a in turns]


def dialogue_examples(path: str | Path, *, env_id: str = "ClinicalInquiry-v1",
                      env_kwargs: Mapping[str, Any] | None = None, min_reward: float | None = None,
                      rationale: str = "fill", max_recommendation_words: int | None = None,
                      ) -> tuple[list[ExpertExample], DataReport]:
    """Expert conversations from an MTMedDialog JSON/JSONL file: each record's case (the MTMedDialog case loader),
    its doctor turns as actions, its patient answers as the patient's replies, played in ``env_id`` (a
    ClinicalInquiry-family environment) with a turn budget of exactly the dialogue's turns plus the diagnosis."""
    if env_family(env_id) != "inquiry":
        raise ValueError(f"recorded dialogues play in a ClinicalInquiry-family environment, not {env_id!r}")
    path = Path(path)
    rows, problems = read_rows(path)
    report = DataReport()
    for _ in problems:
        report.drop("unreadable JSON")
    examples: list[ExpertExample] = []
    for line, row in rows:
        try:
            record = MTMedDialogRow.model_validate(row)
            case = MTMEDDIALOG.to_case(row, Origin(path.name, line))
        except (ValueError, TypeError):
            report.drop("not a usable MTMedDialog record")
            continue
        actions, answers = dialogue_actions(record)
        kwargs = {**(env_kwargs or {}), "patient": RecordedPatient(answers), "turn_budget": len(actions)}
        policy = ScriptedPolicy(lambda messages, a=actions: a[min(sum(m["role"] == "assistant" for m in messages),
                                                                  len(a) - 1)])
        found, one = collect_examples(policy, lambda k=kwargs: gym.make(env_id, **k),
                                      [EpisodeSpec(seed=line, options={"case": case})], env_id=env_id,
                                      source=f"dialogues:{path.name}", min_reward=min_reward, rationale=rationale,
                                      max_recommendation_words=max_recommendation_words, num_envs=1)
        examples += found
        report.merge(one)
    return examples, report


# -- storage ----------------------------------------------------------------------------------------------------
def _row(example: ExpertExample) -> dict[str, Any]:
    """A dataset row: ``tools`` as JSON text (schemas differ between rows and do not fit one Arrow type)."""
    row = example.model_dump()
    row["tools"] = json.dumps(row["tools"])
    return row


def _example(row: Mapping[str, Any]) -> ExpertExample:
    row = dict(row)
    if isinstance(row.get("tools"), str):
        row["tools"] = json.loads(row["tools"] or "[]")
    return ExpertExample.model_validate(row)


def save_examples(examples: Sequence[ExpertExample], out: str | Path, summary: Mapping[str, Any] | None = None) -> Path:
    """Write ``conversations.jsonl``, ``dataset/`` and ``summary.json`` into ``out``; returns ``out``."""
    from datasets import Dataset

    if not examples:
        raise ValueError("no conversation to save")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with (out / CONVERSATIONS_FILE).open("w", encoding="utf-8") as f:
        for example in examples:
            f.write(example.model_dump_json() + "\n")
    Dataset.from_list([_row(e) for e in examples]).save_to_disk(str(out / DATASET_DIR))
    envs = sorted({e.env for e in examples})
    rewards = [e.reward for e in examples]
    facts = {"examples": len(examples), "envs": envs, "sources": sorted({e.source for e in examples}),
             "assistant_turns": sum(len(e.actions) for e in examples), "reward_mean": sum(rewards) / len(rewards),
             "reward_min": min(rewards)}
    (out / SUMMARY_FILE).write_text(json.dumps({**facts, **(summary or {})}, indent=1), encoding="utf-8")
    return out


def load_examples(path: str | Path) -> list[ExpertExample]:
    """Examples from a folder written by ``save_examples`` (its Hugging Face dataset), a ``Dataset.save_to_disk``
    folder of such rows, or a chat JSONL file. Raises ``ValueError`` for anything else or a bad row."""
    p = Path(path).expanduser()
    if p.is_dir():
        folder = p / DATASET_DIR if (p / DATASET_DIR).is_dir() else p
        if (folder / "dataset_info.json").is_file() or (folder / "state.json").is_file():
            from datasets import load_from_disk

            return [_example(row) for row in load_from_disk(str(folder))]
        if (p / CONVERSATIONS_FILE).is_file():
            return load_examples(p / CONVERSATIONS_FILE)
        raise ValueError(f"{p} holds no expert data (expected {DATASET_DIR}/ or {CONVERSATIONS_FILE})")
    if not p.is_file():
        raise ValueError(f"no expert data at {p}")
    examples = []
    for number, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            examples.append(_example(json.loads(line)))
        except ValueError as e:  # JSONDecodeError and pydantic's ValidationError are ValueErrors
            raise ValueError(f"{p}:{number}: not an expert conversation ({str(e).splitlines()[0]})") from None
    return examples
