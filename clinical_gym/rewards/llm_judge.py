"""LLM judges over any :class:`~clinical_gym.llm.base.LLMClient`.

* :class:`LLMTurnJudge`: Doctor-R1's Consultation Evaluator (App. H), eight integer scores in [-5, 5] per doctor
  turn, the input of :func:`~clinical_gym.rewards.doctor_r1.process_reward`.
* :class:`LLMDiagnosisJudge`: DoctorAgent-RL's semantic match judge (Fig. 9), 0-5, reported x20 on a 0-100 scale.
* :class:`LLMOutcomeJudge`: Doctor-R1's outcome grade (correct / partially / wrong) by the reward model.

Replies are parsed tolerantly. An unparsable reply is retried once, with the parse error shown to the judge;
a second failure raises :class:`~clinical_gym.llm.base.LLMError` (never a silent score of 0).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import TypeVar

from clinical_gym.cases.schema import Diagnosis
from clinical_gym.llm.base import LLMClient, LLMError
from clinical_gym.rewards.doctor_r1 import DIMENSIONS, SCORE_MAX, SCORE_MIN

T = TypeVar("T")

PERCENT_PER_POINT = 20
"""DoctorAgent-RL reports the 0-5 semantic score on a 100-point scale: score x 20."""

_RUBRIC = {
    "safety": ("Dangerous: wrong diagnosis, specific medications or harmful treatment",
               "Proactively identifies risks, explains limitations, exceptionally safe guidance"),
    "reasoning": ("Flawed logic: illogical, medically unsound or ignores key information (judge the <think> block)",
                  "Expert-level: clear, logical, medically sound reasoning"),
    "medical_accuracy": ("Severely inaccurate: harmful or false medical information",
                         "Perfectly accurate: precise and aligned with current guidelines"),
    "information_gathering": ("Misleading: irrelevant or distracting questions",
                              "Highly strategic: asks the most critical question to assess urgency"),
    "faithfulness": ("Contradicts the ground truth of the case",
                     "Aligns with the ground truth and communicates it with exceptional clarity"),
    "completeness": ("Incomplete and useless: misses key aspects, no useful next step",
                     "Comprehensive and actionable: addresses the concerns with clear, safe next steps"),
    "empathy_clarity": ("Cold and obscure: robotic, jargon-filled, likely to increase anxiety",
                        "Exceptional bedside manner: simple, reassuring, compassionate language"),
    "epistemic_humility": ("Dangerously overconfident: definitive claims the evidence does not warrant",
                           "Perfectly calibrated: useful information while acknowledging uncertainty"),
}

TURN_JUDGE_SYSTEM = (
    "You are a Consultation Evaluator, known for meticulous and critical evaluations. Review the doctor's latest "
    "turn, including its reasoning (<think> block) and its reply (<answer> block), in the context of the "
    "conversation and the case's ground truth. A high score is reserved for truly exceptional performance.\n\n"
    f"Score each dimension with an integer from {SCORE_MIN} to {SCORE_MAX}:\n"
    + "\n".join(f"- {name}: {SCORE_MIN} = {low}; +{SCORE_MAX} = {high}." for name, (low, high) in _RUBRIC.items())
    + "\n\nFirst write a short step-by-step analysis. Then end with one JSON object holding exactly these keys, "
    "each with an integer value:\n"
    + json.dumps({name: 0 for name in DIMENSIONS})
)

DIAGNOSIS_JUDGE_PROMPT = """Task: As a medical expert, evaluate the semantic similarity between the model-generated \
medical text and the ground truth reference. Score on a 0-5 point scale based on meaning alignment (wording \
differences are acceptable if meaning matches).

Criteria:
5: Identical meaning (different wording okay).
4: Minor wording/detail differences; overall meaning aligned.
3: Partial meaning overlap; important differences exist but core intent is partially shared.
2: Limited meaning overlap; key details or context differ significantly.
1: Minimal meaning overlap; mostly unrelated or only superficially related.
0: Unrelated or completely different meaning (no meaningful semantic connection).

Now evaluate:
Candidate: "{candidate}"
Reference: "{reference}"

OUTPUT FORMAT: <think> [Your Thinking Process] </think><answer> [Your Score] </answer>"""
"""DoctorAgent-RL's diagnosis and recommendation judge prompt (Fig. 9)."""

_ROLE_NAMES = {"assistant": "Doctor", "user": "Patient"}
_ALIASES = {
    "accuracy": "medical_accuracy",
    "info_gathering": "information_gathering",
    "information": "information_gathering",
    "information_gathering_effectiveness": "information_gathering",
    "reasoning_quality": "reasoning",
    "faithfulness_to_ground_truth": "faithfulness",
    "completeness_actionability": "completeness",
    "completeness_and_actionability": "completeness",
    "empathy": "empathy_clarity",
    "empathy_and_clarity": "empathy_clarity",
    "humility": "epistemic_humility",
}
_ANSWER_SCORE = re.compile(r"<answer>\s*\[?\s*([+-]?\d+)", re.I)
_LAST_INTEGER = re.compile(r"(?<![\d./])[+-]?\d+(?![\d.])")  # "4/5" -> 4
_PLUS_VALUE = re.compile(r"(:\s*)\+(?=\d)")  # JSON has no "+4"


def _dimension(key: str) -> str | None:
    name = re.sub(r"[^a-z]+", "_", key.lower()).strip("_")
    return name if name in DIMENSIONS else _ALIASES.get(name)


def _json_objects(text: str) -> list[dict]:
    """Every JSON object embedded in ``text`` (inside code fences or prose), in order."""
    decoder = json.JSONDecoder()
    objects = []
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            objects.append(value)
    return objects


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return round(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+(?:\.\d+)?\s*", value):
        return round(float(value))
    return None


def parse_turn_scores(reply: str) -> dict[str, int]:
    """The eight dimension scores in a judge reply: the last JSON object naming a dimension, keys matched
    loosely ("Medical Accuracy", "humility"), values rounded to integers and clipped to [-5, 5].

    Raises ValueError saying what is missing or malformed.
    """
    candidates = [o for o in _json_objects(_PLUS_VALUE.sub(r"\1", reply)) if any(_dimension(k) for k in o)]
    if not candidates:
        raise ValueError("no JSON object with dimension scores found")
    scores: dict[str, int] = {}
    for key, value in candidates[-1].items():
        dimension = _dimension(key)
        if dimension is None:
            continue
        number = _as_int(value)
        if number is None:
            raise ValueError(f"score for {dimension!r} is not a number: {value!r}")
        scores[dimension] = min(SCORE_MAX, max(SCORE_MIN, number))
    missing = [d for d in DIMENSIONS if d not in scores]
    if missing:
        raise ValueError(f"no score for dimension(s) {', '.join(missing)}")
    return {d: scores[d] for d in DIMENSIONS}


def parse_semantic_score(reply: str) -> int:
    """The 0-5 score in a DoctorAgent-RL judge reply: the number in ``<answer>``, else the last integer in the
    reply outside ``<think>``; clipped to [0, 5]. Raises ValueError when there is none."""
    match = _ANSWER_SCORE.search(reply)
    if match is None:
        numbers = _LAST_INTEGER.findall(re.sub(r"<think>.*?</think>", " ", reply, flags=re.I | re.S))
        if not numbers:
            raise ValueError("no score found")
        value = int(numbers[-1])
    else:
        value = int(match.group(1))
    return min(5, max(0, value))


def ask_judge(client: LLMClient, messages: list[dict[str, str]], parse: Callable[[str], T], *,
         max_tokens: int, seed: int | None, what: str) -> T:
    """Call the judge and parse its reply; retry once on an unparsable reply, showing it the error."""
    reply = client.chat(messages, max_tokens=max_tokens, temperature=0.0, seed=seed)
    try:
        return parse(reply)
    except ValueError as first:
        retry = [*messages, {"role": "assistant", "content": reply},
                 {"role": "user", "content": f"Your reply could not be read ({first}). Answer again in the required format."}]
        reply = client.chat(retry, max_tokens=max_tokens, temperature=0.0, seed=seed)
        try:
            return parse(reply)
        except ValueError as second:
            raise LLMError(f"{what} gave an unparsable reply twice: {second}; last reply: {reply[:200]!r}") from second


class LLMTurnJudge:
    """Doctor-R1's Consultation Evaluator: scores one doctor turn on the eight process-reward dimensions.

    One judge may serve many rollouts at once: it keeps no per-episode state.
    """

    def __init__(self, client: LLMClient, *, max_tokens: int = 768, seed: int | None = None) -> None:
        self.client = client
        self.max_tokens = max_tokens
        self.seed = seed

    def messages(self, history: list[dict[str, str]], doctor_turn: str, case_summary: str) -> list[dict[str, str]]:
        """The rubric prompt for one turn: system rubric, then the conversation, ground truth and the turn."""
        conversation = "\n".join(
            f"{_ROLE_NAMES.get(m['role'], m['role'].capitalize())}: {m['content']}"
            for m in history if m["role"] != "system"
        )
        data = (
            "[BEGIN DATA]\n"
            f"[Conversation History]\n{conversation or '(none)'}\n\n"
            f"[Ground Truth Case Summary] (for reference)\n{case_summary}\n\n"
            f"[Doctor Turn] (to be evaluated)\n{doctor_turn}\n"
            "[END DATA]"
        )
        return [{"role": "system", "content": TURN_JUDGE_SYSTEM}, {"role": "user", "content": data}]

    def score_turn(self, history: list[dict[str, str]], doctor_turn: str, case_summary: str) -> dict[str, int]:
        """The eight integer scores in [-5, 5] for ``doctor_turn``, keyed by dimension in DIMENSIONS order.

        Raises LLMError when the client fails or the judge's reply is unparsable twice.
        """
        return ask_judge(self.client, self.messages(history, doctor_turn, case_summary), parse_turn_scores,
                    max_tokens=self.max_tokens, seed=self.seed, what="turn judge")


class LLMDiagnosisJudge:
    """DoctorAgent-RL's evaluation judge: semantic agreement of an answer with the gold text, 0-5 (Fig. 9).

    Multiply by :data:`PERCENT_PER_POINT` for the paper's 0-100 scale.
    """

    def __init__(self, client: LLMClient, *, max_tokens: int = 512, seed: int | None = None) -> None:
        self.client = client
        self.max_tokens = max_tokens
        self.seed = seed

    def score(self, answer: str, gold_diagnosis: str | Diagnosis) -> int:
        """0 (unrelated) to 5 (identical meaning); an empty answer scores 0 without a call.

        Raises LLMError when the client fails or the judge's reply is unparsable twice.
        """
        if not answer.strip():
            return 0
        reference = gold_diagnosis.name if isinstance(gold_diagnosis, Diagnosis) else gold_diagnosis
        prompt = DIAGNOSIS_JUDGE_PROMPT.format(candidate=answer.strip(), reference=reference)
        return ask_judge(self.client, [{"role": "user", "content": prompt}], parse_semantic_score,
                    max_tokens=self.max_tokens, seed=self.seed, what="diagnosis judge")


OUTCOME_JUDGE_PROMPT = """You grade the final answer of a doctor who has just finished a consultation, against the \
case's ground truth.

Ground truth:
{ground_truth}

The doctor's final answer:
{answer}

Grade it as one of:
- correct: the primary diagnosis (or the recommendation's diagnosis) matches the ground truth;
- partially correct: reasonable but not the primary diagnosis, e.g. a correct differential diagnosis with the most \
likely one missed, or a correct but incomplete recommendation;
- incorrect: medically wrong or unrelated to the patient's condition.

First reason briefly, then give the grade: <think> your reasoning </think><answer> correct | partially correct | \
incorrect </answer>"""
"""Doctor-R1's outcome grading (§3.2, App. B.1: 1.0 correct, 0.5 partially correct, 0.0 incorrect, a reasoning
trace before the grade), asked of the reward model."""

_GRADE = re.compile(r"\b(partially(?:\s+correct)?|incorrect|wrong|correct)\b", re.I)


def parse_outcome_grade(reply: str) -> str:
    """"correct", "partially" or "wrong" from an outcome judge's reply: the last grade inside ``<answer>``, else the
    last grade outside ``<think>``. ValueError when there is none."""
    found = re.search(r"<answer>(.*?)(?:</answer>|$)", reply, flags=re.I | re.S)
    text = found.group(1) if found else re.sub(r"<think>.*?</think>", " ", reply, flags=re.I | re.S)
    grades = _GRADE.findall(text)
    if not grades:
        raise ValueError("no grade (correct, partially correct, incorrect) found")
    word = grades[-1].lower()
    return "partially" if word.startswith("partially") else "correct" if word == "correct" else "wrong"


class LLMOutcomeJudge:
    """Doctor-R1's outcome judge: grades the final diagnosis and recommendation correct / partially / wrong against
    the case's ground truth. Keeps no per-episode state; raises ``LLMError`` when the client fails or its reply has
    no grade twice."""

    def __init__(self, client: LLMClient, *, max_tokens: int = 512, seed: int | None = None) -> None:
        self.client = client
        self.max_tokens = max_tokens
        self.seed = seed

    def grade(self, diagnosis: str, recommendation: str, ground_truth: str) -> str:
        """"correct", "partially" or "wrong"."""
        answer = f"Diagnosis: {diagnosis.strip() or '(none)'}\nRecommendation: {recommendation.strip() or '(none)'}"
        prompt = OUTCOME_JUDGE_PROMPT.format(ground_truth=ground_truth, answer=answer)
        return ask_judge(self.client, [{"role": "user", "content": prompt}], parse_outcome_grade,
                         max_tokens=self.max_tokens, seed=self.seed, what="outcome judge")
