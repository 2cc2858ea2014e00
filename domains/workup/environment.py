"""DiagnosticWorkup-v1: order examinations one at a time from an EHR world model, then diagnose (DiagGym)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, Sequence

from clinical_gym.cases import Case
from clinical_gym.env import ClinicalEnv
from clinical_gym.llm import SPECS, llm_setting
from clinical_gym.llm.base import LLMClient, LLMError
from clinical_gym.rewards import LLMDiagnosisJudge, match_diagnosis
from clinical_gym.rewards.rubric import LLMRubricJudge, RubricVerdict, rubric_summary
from clinical_gym.cases.schema import normalize
from clinical_gym.domains.workup.actions import WorkupAction, parse_workup_action
from clinical_gym.domains.workup.catalogue import load_catalogue
from clinical_gym.domains.workup.exam_judge import LLMExamJudge
from clinical_gym.domains.workup.rubric_rules import rule_verdict
from clinical_gym.domains.workup.world_model import LLMWorldModel, RecordWorldModel, WorldModel

SYSTEM_PROMPT = """You are a physician working up a patient. Each turn, order exactly one examination (lab test, imaging, ECG, bedside test or physical-exam section) and read its result, until you can make a diagnosis. You have at most {max_turns} turns.
To order an examination:
Current diagnosis: (your working diagnosis)
Based on the current findings, the following additional investigation(s) are needed: (one examination)
Reason: (why)
To conclude:
The available information is sufficient to make a diagnosis.
Diagnosis: (the final diagnosis)
Reason: (why)
(Equivalently: <answer>Test: ...</answer> or <answer>Diagnosis: ...</answer>.)"""

logger = logging.getLogger(__name__)
WORLD_MODEL_FAILED = "The workup ended because the world model failed."
JUDGE_FAILED = "The workup ended because the reward judge failed."
PROTOCOLS = ("end_to_end", "single_turn")
SINGLE_TURN_DIAGNOSIS = "dx"  # the item id suffix of a single-turn diagnosis step: "CASE@dx"
NEXT_EXAM = "Next step you should query examination."
NEXT_DIAGNOSIS = "Next step you should make final diagnosis."
FORMAT_HINT = ("Order one examination with 'the following additional investigation(s) are needed: <exam>' or conclude with "
               "'Diagnosis: <diagnosis>'.")


@dataclass(frozen=True)
class DiagGymReward:
    """DiagGym's reward (seed digests §3): R = w_diag * r_diag + w_exam * F1(exams) + r_turn if finished within T_max."""

    diagnosis_weight: float = 1.0
    exam_weight: float = 0.5
    turn_bonus: float = 0.1
    max_turns: int = 12


def initial_inquiry(case: Case) -> str:
    """The agent's starting state: demographics and history, with no diagnosis and no results."""
    d = case.demographics
    said = case.self_report.strip().rstrip(".").lower()  # an imported case's complaint is often its first HPI fact too
    texts = lambda *cats: " ".join(f.text for f in case.history  # noqa: E731
                                   if f.category in cats and f.text.strip().rstrip(".").lower() != said)
    parts = [f"Patient: {d.age_adjective} {d.sex}.", f"Chief complaint: {case.chief_complaint}.",
             f"History of present illness (patient's account): {case.self_report}. {texts('hpi', 'ros')}".replace("..", ".")]
    for label, cats in (("Past medical history", ("past_history", "surgical_history")), ("Medications", ("medications",)),
                        ("Allergies", ("allergies",)), ("Social history", ("social",)), ("Family history", ("family",))):
        text = texts(*cats)
        if text:
            parts.append(f"{label}: {text}")
    return "\n".join(parts)


def exam_f1(ordered: Sequence[str], reference: Sequence[str], same=None) -> tuple[float, float, float]:
    """Precision, recall and F1 of ordered exams against reference exams, matched by ``same(a, b)``
    (default: the catalogue's alias and sub-item matching). Every order counts in precision's denominator, names
    the catalogue does not know included (DiagGym counts every recommended exam)."""
    same = same or load_catalogue().match
    if not ordered or not reference:
        return 0.0, 0.0, 0.0
    precision = sum(any(same(o, r) for r in reference) for o in ordered) / len(ordered)
    recall = sum(any(same(o, r) for o in ordered) for r in reference) / len(reference)
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1


class DiagnosticWorkupEnv(ClinicalEnv):
    """
    ## Description
    The agent reads an initial inquiry and orders one examination per turn; a world model returns the result; the
    agent ends with a diagnosis (DiagGym / DiagAgent). The default world model is record-backed: the case's own
    results, otherwise results synthesised from the exam catalogue and the disease knowledge table.

    ## Action Space
    ``UnicodeText(10000)``: DiagGym's phrase format or ``<answer>Test: …</answer>`` / ``<answer>Diagnosis: …</answer>``.

    ## Observation Space
    ``UnicodeText(100000)``: reset gives the initial inquiry; each step gives ``<exam name>:\\n<result>`` (or what
    was wrong with the action) followed by ``Turn k/T.``.

    ## Starting State
    A case drawn with ``self.np_random`` or chosen by ``options={"case_id": ...}`` / ``{"case": Case}``.

    ## Rewards
    Preset ``diaggym``: 0 per step; at the end R = 1.0·r_diag + 0.5·F1(ordered exams, key exams) + 0.1 if the
    diagnosis comes within T_max = 12 turns (max 1.6). Weights are configurable (``reward_config``). Exams match
    by the catalogue's aliases and sub-items; diagnoses by ``match_diagnosis`` (synonyms, ICD-10-CM category).
    With ``judge=`` (an LLMClient), diagnoses are judged 0-5 by the LLM (>= 4 is correct) and exam pairs the
    catalogue rejects are asked of the LLM. Orders of names the catalogue does not know count against precision.

    ## Evaluation protocols
    ``protocol="end_to_end"`` (default): the workup above. ``protocol="single_turn"`` is DiagBench's single-turn
    evaluation: each case is one item per step of its reference workup (``key_exams`` in order), ids
    ``CASE@0`` .. ``CASE@n-1`` and ``CASE@dx``; an item opens with the initial inquiry, the reference exams before
    that step with their results, and "Next step you should query examination." (or "... make final diagnosis.");
    the agent replies once. An exam step is a hit when the exam ordered matches one of the reference exams still
    to come (``outcome["hit"]``, reward 1 or 0); the diagnosis step scores the diagnosis (``accuracy``).
    ``episode_ids`` lists the items (``reset(options={"case_id": "CASE@2"})``).

    ## Rubrics
    A case with rubric items (DiagBench's physician-written criteria, ``Case.rubrics``) gets the weighted rubric
    score at the end of an end-to-end episode (``outcome["rubric_score"]`` and the verdicts; no reward): each
    criterion judged by the LLM judge when ``judge=`` is set (one call per criterion), else by the rule stand-in
    (``clinical_gym.domains.workup.rubric_rules``), which leaves criteria it cannot settle unjudged
    (``rubric_coverage``: the share of the points judged). ``rubrics=False`` skips it.

    ## Episode End
    Termination: a diagnosis; T_max turns without one (R = 0.5·F1, no diagnosis credit, no turn bonus).
    Truncation: only when the LLM world model or the LLM judge fails for good (after its retries): reward 0,
    ``info["error"]`` says what failed, no ``outcome``, and a warning is logged (logger ``clinical_gym``).

    ## Information
    reset: ``system_prompt``, ``max_turns``, ``specialty``. Every step: ``turn``, ``reward_components``,
    ``exam`` (the catalogue name, or the recorded name the catalogue does not know), ``exam_source`` (record /
    record+synthesised / synthesised / llm / unknown), ``suggestions`` for
    unrecognised names, ``parse_error``. Terminal: ``outcome`` (result, accuracy, exam precision/recall/F1, turns,
    exams ordered, unrecognised orders, key exams, gold diagnosis, rubric score when the case has rubrics) and
    ``case_id``.

    ## Arguments
    ``gym.make("DiagnosticWorkup-v1", cases="library", split=None | "train" | "test" | "all",
    world_model="record" | "openai:MODEL" | "transformers:PATH" | WorldModel | LLMClient,
    world_model_mode="completion" | "chat", reward_config=None, judge=None | "openai:MODEL" | "transformers:PATH" |
    LLMClient, multi_exam="first" | "all" | "reject", protocol="end_to_end" | "single_turn", rubrics=True)``

    ## Version History
    * v0: initial release.
    """

    def __init__(self, cases: str | Sequence[Case] | None = None, split: str | None = None, *,
                 world_model: str | WorldModel | LLMClient = "record", world_model_mode: Literal["completion", "chat"] = "completion",
                 reward: str = "diaggym", reward_config: dict[str, Any] | None = None, judge: str | LLMClient | None = None,
                 multi_exam: Literal["first", "all", "reject"] = "first",
                 protocol: Literal["end_to_end", "single_turn"] = "end_to_end", rubrics: bool = True,
                 render_mode: str | None = None) -> None:
        super().__init__(cases, split, render_mode=render_mode)
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be 'end_to_end' or 'single_turn', got {protocol!r}")
        self.protocol = protocol
        self.rubrics = bool(rubrics)
        self._items = [f"{c.id}@{k}" for c in self.cases for k in range(len(c.key_exams))] + \
            [f"{c.id}@{SINGLE_TURN_DIAGNOSIS}" for c in self.cases] if protocol == "single_turn" else []
        self._step: str | None = None
        if reward != "diaggym":
            raise ValueError(f"unknown reward preset {reward!r}; DiagnosticWorkup-v1 has 'diaggym'")
        known = {f.name for f in fields(DiagGymReward)}
        unknown = set(reward_config or {}) - known
        if unknown:
            raise ValueError(f"unknown reward_config keys {sorted(unknown)}; known: {sorted(known)}")
        self.reward_values = replace(DiagGymReward(), **(reward_config or {}))
        if multi_exam not in ("first", "all", "reject"):
            raise ValueError(f"multi_exam must be 'first', 'all' or 'reject', got {multi_exam!r}")
        self.multi_exam = multi_exam
        if world_model_mode not in ("completion", "chat"):
            raise ValueError(f"world_model_mode must be 'completion' or 'chat', got {world_model_mode!r}")
        self.world_model = _make_world_model(world_model, world_model_mode)
        judge = llm_setting(judge, "judge")
        self._judge = LLMDiagnosisJudge(judge) if judge is not None else None
        self._exam_judge = LLMExamJudge(judge) if judge is not None else None
        self._rubric_judge = LLMRubricJudge(judge) if judge is not None else None

    @property
    def episode_ids(self) -> list[str]:
        """What ``reset(options={"case_id": ...})`` accepts: the case ids, or the single-turn items."""
        return list(self._items) if self.protocol == "single_turn" else [c.id for c in self.cases]

    def _choose_case(self, options: dict[str, Any]) -> Case:
        if self.protocol != "single_turn":
            return super()._choose_case(options)
        options = dict(options)
        item = options.get("case_id")
        if item is None and "case" not in options:
            item = self._items[int(self.np_random.integers(len(self._items)))]
        if isinstance(item, str) and "@" in item:
            options["case_id"], _, self._step = item.rpartition("@")
        else:
            self._step = None
        case = super()._choose_case(options)
        if self._step is None:
            steps = [*map(str, range(len(case.key_exams))), SINGLE_TURN_DIAGNOSIS]
            self._step = steps[int(self.np_random.integers(len(steps)))]
        if self._step != SINGLE_TURN_DIAGNOSIS and not (self._step.isdigit() and int(self._step) < len(case.key_exams)):
            raise ValueError(f"case {case.id} has single-turn steps 0-{len(case.key_exams) - 1} and "
                             f"{SINGLE_TURN_DIAGNOSIS}, not {self._step!r}")
        return case

    def _begin(self, case: Case) -> tuple[str, dict[str, Any]]:
        self.turn = 0
        self.ordered: list[str] = []
        self.unrecognised: list[str] = []
        self.history: list[tuple[str, str]] = []
        self.world_model.reset(case, int(self.np_random.integers(2**31)))
        system = SYSTEM_PROMPT.format(max_turns=self.reward_values.max_turns)
        info = {"system_prompt": system, "max_turns": self.reward_values.max_turns, "specialty": case.specialty}
        if self.protocol == "single_turn":
            return self._begin_single_turn(case, info)
        return initial_inquiry(case), info

    def _begin_single_turn(self, case: Case, info: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The opening of a single-turn item: the reference exams before this step with their results, then the
        instruction for this step (DiagGym's single-turn setting)."""
        done = len(case.key_exams) if self._step == SINGLE_TURN_DIAGNOSIS else int(self._step)
        blocks = []
        for name in case.key_exams[:done]:
            result = self.world_model.result(name, self.history)  # an LLMError here fails the reset, loudly
            self.history.append((result.exam or name, result.text))
            blocks.append(f"{result.exam or name}:\n{result.text}")
        performed = "\n\nExaminations performed so far:\n" + "\n\n".join(blocks) if blocks else ""
        step = NEXT_DIAGNOSIS if self._step == SINGLE_TURN_DIAGNOSIS else NEXT_EXAM
        return f"{initial_inquiry(case)}{performed}\n\n{step}", {**info, "single_turn_step": self._step}

    def _act(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.turn += 1
        self._action = action
        parsed = parse_workup_action(action)
        if self.protocol == "single_turn":
            return self._single_turn(parsed)
        if parsed.kind == "diagnosis":
            return self._finish(parsed.diagnosis)
        if parsed.kind == "invalid":
            return self._turn_end(f"Your reply could not be used: {parsed.error}. {FORMAT_HINT}", {"parse_error": parsed.error})
        exams = parsed.exams
        if len(exams) > 1 and self.multi_exam == "reject":
            return self._turn_end(f"Order one examination per turn (you asked for {len(exams)}).", {"parse_error": "several exams"})
        if self.multi_exam == "first":
            exams = exams[:1]
        texts, info = [], {"exam_source": [], "exam": []}
        for name in exams:
            try:
                result = self.world_model.result(name, self.history)
            except LLMError as e:
                return self._error(str(e))
            info["exam_source"].append(result.source)
            info["exam"].append(result.exam)
            if result.source == "unknown":
                if all(normalize(name) != normalize(u) for u in self.unrecognised):
                    self.unrecognised.append(name)  # counted against precision (DiagGym counts every order)
                hint = f" Did you mean: {', '.join(result.suggestions)}?" if result.suggestions else ""
                texts.append(f"'{name}' is not a recognised examination.{hint}")
                info["suggestions"] = list(result.suggestions)
                continue
            label = result.exam or name
            if label not in self.ordered:
                self.ordered.append(label)
            self.history.append((label, result.text))
            texts.append(f"{label}:\n{result.text}")
        if len(exams) == 1:
            info = {"exam_source": info["exam_source"][0], "exam": info["exam"][0],
                    **({"suggestions": info["suggestions"]} if "suggestions" in info else {})}
        return self._turn_end("\n\n".join(texts), info)

    def _turn_end(self, text: str, extra: dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.turn >= self.reward_values.max_turns:
            return self._finish(None, text)
        return f"{text}\nTurn {self.turn}/{self.reward_values.max_turns}.", 0.0, False, False, self._info({}, **extra)

    def _finish(self, diagnosis: str | None, last_text: str = "") -> tuple[str, float, bool, bool, dict[str, Any]]:
        case, values = self.case, self.reward_values
        try:
            precision, recall, f1 = exam_f1([*self.ordered, *self.unrecognised], case.key_exams,
                                            self._exam_judge.same if self._exam_judge else None)
        except LLMError as e:
            return self._error(str(e), JUDGE_FAILED)
        if diagnosis is None:
            result, reason = "wrong", "no diagnosis within the turn limit"
        else:
            try:
                result, reason = self._judge_diagnosis(diagnosis)
            except LLMError as e:
                return self._error(str(e), JUDGE_FAILED)
        components = {"diagnosis": values.diagnosis_weight * (result == "correct"), "exams": values.exam_weight * f1,
                      "turn": values.turn_bonus if diagnosis is not None and self.turn <= values.max_turns else 0.0}
        outcome = {"result": result, "reason": reason, "diagnosis": diagnosis or "", "accuracy": float(result == "correct"),
                   "exam_precision": precision, "exam_recall": recall, "exam_f1": f1, "turns": self.turn,
                   "exams_ordered": list(self.ordered), "exams_unrecognised": list(self.unrecognised),
                   "key_exams": list(case.key_exams),
                   "gold_diagnosis": case.diagnosis.name, "gold_icd10": case.diagnosis.icd10, "success": result == "correct"}
        if self.rubrics and case.rubrics:
            try:
                outcome.update(rubric_summary(self._rubric_verdicts(result == "correct")))
            except LLMError as e:
                return self._error(str(e), JUDGE_FAILED)
        info = self._info(components, outcome=outcome, case_id=case.id)
        ending = ("The workup is over: no diagnosis was made within the turn limit." if diagnosis is None
                  else f"The workup is over. Your diagnosis was {result} (the patient had {case.diagnosis.name}).")
        obs = f"{last_text}\n{ending}" if last_text else ending
        return obs, sum(components.values()), True, False, info

    def _rubric_verdicts(self, diagnosis_correct: bool) -> list[RubricVerdict]:
        """Each rubric criterion judged by the LLM judge when there is one, else by the rule stand-in."""
        ordered = [name for name, _ in self.history]
        conversation = [*self.messages, {"role": "assistant", "content": getattr(self, "_action", "")}]
        verdicts = []
        for item in self.case.rubrics:
            if self._rubric_judge is not None:
                verdicts.append(RubricVerdict(item.criterion, item.points,
                                              self._rubric_judge.met(conversation, item.criterion), "judge"))
                continue
            met = rule_verdict(item.criterion, ordered, diagnosis_correct, self.case)
            verdicts.append(RubricVerdict(item.criterion, item.points, met, "ungraded" if met is None else "rule"))
        return verdicts

    def _single_turn(self, parsed: WorkupAction) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Score the one reply of a single-turn item and end it."""
        case = self.case
        outcome: dict[str, Any] = {"protocol": "single_turn", "step": self._step, "gold_diagnosis": case.diagnosis.name,
                                   "gold_icd10": case.diagnosis.icd10}
        if self._step == SINGLE_TURN_DIAGNOSIS:
            result, reason = "wrong", parsed.error or "no diagnosis given when the diagnosis was asked for"
            if parsed.kind == "diagnosis":
                try:
                    result, reason = self._judge_diagnosis(parsed.diagnosis)
                except LLMError as e:
                    return self._error(str(e), JUDGE_FAILED)
            outcome.update(kind="diagnosis", diagnosis=parsed.diagnosis, result=result, reason=reason,
                           accuracy=float(result == "correct"), success=result == "correct")
            score = outcome["accuracy"]
        else:
            remaining = list(case.key_exams[int(self._step):])
            exam = parsed.exams[0] if parsed.kind == "order" and parsed.exams else ""
            same = self._exam_judge.same if self._exam_judge else load_catalogue().match
            try:
                hit = bool(exam) and any(same(exam, reference) for reference in remaining)
            except LLMError as e:
                return self._error(str(e), JUDGE_FAILED)
            reason = ("no examination ordered when one was asked for" if not exam
                      else "a reference exam still to come" if hit else "not among the reference exams still to come")
            outcome.update(kind="exam", exam=exam, remaining_exams=remaining, hit=float(hit), reason=reason,
                           result="correct" if hit else "wrong", success=hit)
            score = outcome["hit"]
        info = self._info({"single_turn": score}, outcome=outcome, case_id=case.id)
        return f"The step is scored: {outcome['result']}.", score, True, False, info

    def _judge_diagnosis(self, diagnosis: str) -> tuple[str, str]:
        if self._judge is not None:
            score = self._judge.score(diagnosis, self.case.diagnosis)
            return ("correct" if score >= 4 else "wrong"), f"LLM judge score {score}/5"
        match = match_diagnosis(diagnosis, self.case.diagnosis)
        return ("correct" if match.outcome == "correct" else "wrong"), match.reason

    def _error(self, message: str, observation: str = WORLD_MODEL_FAILED) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """End the episode because a simulated actor failed: truncated (never terminated), ``info["error"]``."""
        logger.warning("%s case %s: %s %s", type(self).__name__, self.case.id, observation, message)
        info = self._info({}, error=message, case_id=self.case.id)
        return observation, 0.0, False, True, info

    def _reject(self, problem: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.turn += 1
        if self.protocol == "single_turn":
            return self._single_turn(WorkupAction("invalid", error=problem))
        return self._turn_end(f"Your reply could not be used: {problem}. {FORMAT_HINT}", {"parse_error": problem})

    def _info(self, components: dict[str, float], **extra: Any) -> dict[str, Any]:
        return {"turn": self.turn, "reward_components": dict(components), **extra}


def _make_world_model(world_model: str | WorldModel | LLMClient, mode: str) -> WorldModel:
    if world_model == "record":
        return RecordWorldModel()
    if not isinstance(world_model, str) and hasattr(world_model, "result") and hasattr(world_model, "reset"):
        return world_model
    client = llm_setting(world_model, "world_model", also="'record', a WorldModel, ")
    if client is None:
        raise ValueError(f"world_model must not be None; use 'record', a WorldModel, {SPECS}")
    return LLMWorldModel(client, mode=mode)
