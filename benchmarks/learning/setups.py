"""The environments as the efficacy presets play them.

* ClinicalInquiry-v1 on a generated case set of chosen conditions (``write_case_set``): the train split for SFT data
  and RL, the test split (other patients, by the hash of the case id) for evaluation. The CPU presets use conditions
  whose presenting complaint alone points to the diagnosis (``DISTINCTIVE_CONDITIONS``), so that a 135M model can
  learn the mapping in minutes; the gpu preset uses all of the disease table.
* A tool domain (MedicalQA-v1) on generated tasks, train split for training and test split for evaluation. On the
  CPU its policy prompt (about 2,100 SmolLM2 tokens, most of it the list of 42 tools) would make every forward pass
  take seconds, so the CPU presets give the model a brief prompt (``BriefToolPrompt``: the policy's opening, the
  tools the short expert uses, and how to act) and a short expert (``short_expert_reply``: read the question, then
  submit the answer); tasks, tools, observations and the reward are the environment's.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from clinical_gym.benchmarks.agents.conversations import ByOpening
from clinical_gym.cases.disease_table import disease_table
from clinical_gym.cases.generator import CaseGenerator
from clinical_gym.tool_env.policies import call_text

# Conditions whose opening complaint names a body part and symptom no other condition of the list shares (checked
# against the generator's self-reports: "my throat is really sore", "a throbbing earache", "my big toe is so
# painful", "a band of blisters on my side", "it stings when I pee", "one side of my face has dropped", "itching
# like mad, worst at night", "my left leg has puffed up").
DISTINCTIVE_CONDITIONS = (
    "Streptococcal pharyngitis",
    "Acute otitis media",
    "Acute gout",
    "Herpes zoster",
    "Acute uncomplicated cystitis",
    "Bell's palsy",
    "Scabies",
    "Deep vein thrombosis of the left leg",
)
CASES_FILE = "cases.jsonl"


def write_case_set(folder: Path, conditions: Sequence[str] | None, train: int, test: int, seed: int) -> Path:
    """``folder/cases.jsonl``: ``train`` generated patients of the train split and ``test`` of the test split, drawn
    evenly from ``conditions`` (None: every condition of the disease table). An existing file is kept. Jobs that
    start side by side may all write it: each writes its own temporary file and renames it into place (the same
    deterministic content), so none finds its temporary file taken by another."""
    path = Path(folder) / CASES_FILE
    if path.is_file():
        return path
    table = {d.name: d for d in disease_table()}
    unknown = [c for c in conditions or () if c not in table]
    if unknown:
        raise ValueError(f"not in the disease table: {', '.join(unknown)}")
    generator = CaseGenerator([table[c] for c in conditions] if conditions else None)
    cases = generator.cases(train, seed, "train") + generator.cases(test, seed, "test")
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write("".join(c.model_dump_json() + "\n" for c in cases))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


# -- tool domains on the CPU ----------------------------------------------------------------------------------------
SHORT_EXPERT_TOOLS = ("get_question", "submit_answer")
_QUESTION_ID = re.compile(r"\bQ\d{3,6}\b")


class BriefToolPrompt(gym.Wrapper):
    """A tool environment whose system prompt keeps the policy's opening paragraph, the lines of the tool list that
    name ``tools``, and the "How to act" section. Everything else (tasks, tools, observations, reward, outcome) is the
    environment's."""

    def __init__(self, env: gym.Env, tools: Sequence[str] = SHORT_EXPERT_TOOLS) -> None:
        super().__init__(env)
        self.tools = tuple(tools)

    def reset(self, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return obs, {**info, "system_prompt": brief_prompt(info["system_prompt"], self.tools)}


def brief_prompt(prompt: str, tools: Sequence[str]) -> str:
    """The brief version of a tool domain's system prompt (see ``BriefToolPrompt``)."""
    sections = prompt.split("\n## ")
    opening = sections[0].strip().split("\n\n")
    head = "\n\n".join(opening[:2])
    listed = [line for section in sections if section.startswith("Tools\n")
              for line in section.splitlines()[1:] if any(line.startswith(f"- {t} ") for t in tools)]
    act = next((s for s in sections if s.startswith("How to act")), "")
    return f"{head}\n\n## Tools\n" + "\n".join(listed) + (f"\n\n## {act.strip()}" if act else "")


class ShortExpert:
    """The short expert of a tool domain (privileged, like the oracle): read the question, then submit the gold
    answer. ``on_reset`` remembers each episode's task; calling it with a conversation gives the next reply."""

    def __init__(self) -> None:
        self.tasks: ByOpening[Any] = ByOpening()

    def on_reset(self, opening: str, info: Mapping[str, Any], env: gym.Env) -> None:
        self.tasks.remember(opening, env.task)

    def __call__(self, messages: Sequence[Mapping[str, str]]) -> str:
        task = self.tasks.recall(messages)
        return short_expert_reply(task, sum(m["role"] == "assistant" for m in messages))


def short_expert_reply(task: Any, turn: int) -> str:
    """Turn 0: ``get_question`` for the task's question; later: ``submit_answer`` with the gold answer."""
    if turn == 0:
        found = _QUESTION_ID.search(task.prompt)
        if found is None:
            raise ValueError(f"task {task.id} names no question id in its prompt")
        return call_text("get_question", {"question_id": found.group(0)})
    return call_text("submit_answer", {"answer": task.answer})
