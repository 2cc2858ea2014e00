"""MedicalQA-v1: answer single-best-answer clinical vignette questions with tools (question bank, reference ranges,
guideline summaries, option elimination), then submit the option letter.

Entry points (tau2-bench layout): ``get_environment(db=None, **kwargs)`` and ``get_tasks(split=None)``.
"""

from __future__ import annotations

from typing import Any

from clinical_gym.tool_env.env import ToolDomainEnv
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.bundled import BundledData
from clinical_gym.domains.medical_qa.data_model import MedicalQADB
from clinical_gym.domains.medical_qa.reward import DEFAULT_WRONG_ANSWER_SCALE, WrongAnswerScaledReward
from clinical_gym.domains.medical_qa.tools import MedicalQATools
from clinical_gym.domains.shared_toolkits import BundledDomain, KnowledgeSource
from clinical_gym.tools import Toolkit

BUNDLED = BundledData("clinical_gym.domains.medical_qa", MedicalQADB)
bundled_db = BUNDLED.bundled_db
get_tasks = BUNDLED.get_tasks
ANALYTE_TOOLS = ("get_reference_range", "interpret_lab_value")


class MedicalQAEnv(BundledDomain, ToolDomainEnv):
    """MedicalQA-v1: a clinician agent answers a multiple-choice vignette question from the bank through tools
    (reading the question and its options, reference ranges and lab interpretation, guideline summaries; ruling
    options out or back in and flagging flawed questions; comparing options and recording its reasoning), with the
    shared scoring instruments and knowledge search, then submits the letter of the single best option.

    There is no patient: the 5-dimension reward reads accuracy (exact option match), process, safety (only the
    answer-text patterns apply), format, coherence and the task's assertions, and the total of an episode that does
    not choose the correct option (wrong or no answer) is multiplied by ``wrong_answer_scale`` (reported as the
    ``wrong_answer_scale`` component; see ``clinical_gym.domains.medical_qa.reward``). Spaces, starting state, episode end,
    information and the common arguments are those of ``ToolDomainEnv``. Domain arguments: ``knowledge``
    ("bundled", a ``knowledge_base.PassageSearch``, or None; see ``clinical_gym.domains.shared_toolkits``) and
    ``wrong_answer_scale`` (default 0.5; 1.0 gives the plain 5-dimension reward).
    ``gym.make("MedicalQA-v1", knowledge=None, split="train")``.
    """

    bundled = BUNDLED
    record_ids = {"question_id": "questions"}
    task_generator = "clinical_gym.domains.medical_qa.generator:MedicalQAGenerator"

    def __init__(self, db: MedicalQADB | None = None, tasks: list[Task] | None = None, split: str | None = None, *,
                 knowledge: KnowledgeSource = "bundled", wrong_answer_scale: float = DEFAULT_WRONG_ANSWER_SCALE,
                 **kwargs: Any) -> None:
        super().__init__(db, tasks, split, knowledge=knowledge, **kwargs)
        self.reward_fn = WrongAnswerScaledReward(self.reward_fn, wrong_answer_scale)  # type: ignore[assignment]

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
