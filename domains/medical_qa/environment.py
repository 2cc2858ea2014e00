"""MedicalQA-v0: answer single-best-answer clinical vignette questions with tools (question bank, reference ranges,
guideline summaries, option elimination), then submit the option letter.

Entry points (tau2-bench layout): ``get_environment(db=None, **kwargs)`` and ``get_tasks(split=None)``.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from clinical_gym.tool_env import ToolDomainEnv
from clinical_gym.tool_tasks import Task, load_tasks, select_split
from domains.medical_qa.data_model import MedicalQADB
from domains.medical_qa.reward import DEFAULT_WRONG_ANSWER_SCALE, WrongAnswerScaledReward
from domains.medical_qa.tools import MedicalQATools
from domains.shared_toolkits import BundledDomain, KnowledgeSource
from tools import Toolkit

DATA = resources.files("domains.medical_qa") / "data"
ANALYTE_TOOLS = ("get_reference_range", "interpret_lab_value")


@lru_cache(maxsize=1)
def bundled_db() -> MedicalQADB:
    """The bundled database (shared, never mutated: episodes work on copies)."""
    return MedicalQADB.model_validate_json((DATA / "db.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _bundled_tasks() -> tuple[Task, ...]:
    return tuple(load_tasks(DATA / "tasks.json"))


def get_tasks(split: str | None = None) -> list[Task]:
    """The bundled tasks of ``split`` ("train", "test", or all for None)."""
    return select_split(list(_bundled_tasks()), split)


class MedicalQAEnv(BundledDomain, ToolDomainEnv):
    """MedicalQA-v0: a clinician agent answers a multiple-choice vignette question from the bank through tools
    (reading the question and its options, reference ranges and lab interpretation, guideline summaries; ruling
    options out or back in and flagging flawed questions; comparing options and recording its reasoning), with the
    shared scoring instruments and knowledge search, then submits the letter of the single best option.

    There is no patient: the 5-dimension reward reads accuracy (exact option match), process, safety (only the
    answer-text patterns apply), format, coherence and the task's assertions, and the total of an episode that does
    not choose the correct option (wrong or no answer) is multiplied by ``wrong_answer_scale`` (reported as the
    ``wrong_answer_scale`` component; see ``domains.medical_qa.reward``). Spaces, starting state, episode end,
    information and the common arguments are those of ``ToolDomainEnv``. Domain arguments: ``knowledge``
    ("bundled", a ``knowledge_base.PassageSearch``, or None; see ``domains.shared_toolkits``) and
    ``wrong_answer_scale`` (default 0.5; 1.0 gives the plain 5-dimension reward).
    ``gym.make("MedicalQA-v0", knowledge=None, split="train")``.
    """

    def __init__(self, db: MedicalQADB | None = None, tasks: list[Task] | None = None, split: str | None = None, *,
                 knowledge: KnowledgeSource = "bundled", wrong_answer_scale: float = DEFAULT_WRONG_ANSWER_SCALE,
                 **kwargs: Any) -> None:
        super().__init__(db, tasks, split, knowledge=knowledge, **kwargs)
        self.reward_fn = WrongAnswerScaledReward(self.reward_fn, wrong_answer_scale)  # type: ignore[assignment]

    @classmethod
    def default_db(cls) -> MedicalQADB:
        return bundled_db()

    @classmethod
    def default_tasks(cls) -> list[Task]:
        return list(_bundled_tasks())


    def domain_toolkit(self, db: MedicalQADB) -> Toolkit:  # type: ignore[override]
        return MedicalQATools(db)


    def canonical_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Question ids upper-cased, analyte aliases and guideline topics resolved to their canonical names, and
        compared letters sorted, so that grading matches what was meant rather than how it was written."""
        tools: MedicalQATools = self.domain_tools  # type: ignore[assignment]
        canonical = dict(arguments)
        if isinstance(canonical.get("question_id"), str):
            canonical["question_id"] = canonical["question_id"].strip().upper()
        if name in ANALYTE_TOOLS:
            canonical["analyte"] = tools.find_analyte(canonical["analyte"]).analyte
        elif name == "lookup_guideline":
            canonical["topic"] = tools.find_guidelines(canonical["topic"])[0].title
        elif name == "compare_options":
            canonical["letters"] = sorted(set(canonical["letters"]))
        return canonical


def get_environment(db: MedicalQADB | None = None, **kwargs: Any) -> MedicalQAEnv:
    """A MedicalQA environment over ``db`` (default: the bundled database); ``kwargs`` go to the env."""
    return MedicalQAEnv(db=db, **kwargs)
