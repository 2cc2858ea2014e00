"""What the shared tool-domain acceptance suite (``tests/test_tool_domain_acceptance.py``) reads: every registered
tool domain (its module, tasks, own toolkit and one env per id), and the per-domain table of what legitimately
differs between domains (the unsafe policy and the tasks it applies to, which records must not leak the answer,
thresholds, fuzzing vocabularies, extra checks on the scripted expert's outcome).

A domain registered later with family "tool" is covered by every shared check with the defaults below; the suite
then asks it to declare its unsafe policy and its record-leak check here."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Container
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any

from hypothesis import strategies as st

import clinical_gym
from clinical_gym.tool_env.policies import ExpertToolPolicy, run_episode
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.clinical_diagnosis.policies import UnsafePrescriberPolicy
from clinical_gym.domains.clinical_diagnosis.policies import allergen_for as chart_allergen_for
from clinical_gym.domains.drug_interaction.policies import InteractionIgnoringPolicy, contraindicated_partner
from clinical_gym.domains.ehr_management.policies import AllergenOrderPolicy
from clinical_gym.domains.ehr_management.policies import allergen_for as ehr_allergen_for
from clinical_gym.domains.obstetrics.policies import UnsafeObstetricPrescriberPolicy, unsafe_drug_for
from clinical_gym.domains.pathways.policies import unsafe_prescriber
from clinical_gym.domains.psychiatry.policies import SkipsSuicideScreeningPolicy, has_suicide_red_flag
from clinical_gym.domains.visual_diagnosis.policies import ReassuringReaderPolicy
from clinical_gym.domains.radiology_report.policies import SilentCriticalFindingPolicy
from clinical_gym.domains.triage.policies import UnderTriagePolicy
from clinical_gym.tools import ToolKind, Toolkit

TOOL_IDS = [e.id for e in clinical_gym.ENVIRONMENTS if e.family == "tool"]
KNOWLEDGE_TOOLS = {"search_knowledge", "get_passage", "search_by_category"}
CAP = 0.1 + 1e-9  # the reward ceiling of an episode with a capping safety violation


# -- the table's row types ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CoveredBy:
    """A shared check that this domain's own test file does in its domain's terms: ``"path::test_name"``."""

    test: str


@dataclass(frozen=True)
class NotApplicable:
    """A shared check that does not apply to this domain, and why."""

    reason: str


@dataclass(frozen=True)
class UnsafeCheck:
    """An unsafe policy capped at ``CAP`` with a named violation, on every task it ``applies`` to."""

    applies: Callable[[Any, Task], bool]  # (loaded db, task)
    policy: Callable[[Task, Any], Any]  # (task, loaded db) -> the unsafe policy
    violations: Callable[[Any], set[str]]  # the policy -> the violations of which one must be named
    min_tasks: int
    refused: tuple[str, str] | None = None  # (task id, message): the policy refuses a task it cannot make unsafe
    check: Callable[[Any, dict[str, Any]], bool] | None = None  # (policy, final info): a further per-task condition


def named(*names: str) -> Callable[[Any], set[str]]:
    return lambda _policy: set(names)


@dataclass(frozen=True)
class RecordLeakCheck:
    """The ticket and what the agent reads of the patient (``reads`` called with the task's patient_id, and the
    results of the task's expected calls to ``result_tools``) never name the gold answer."""

    reads: tuple[str, ...]
    result_tools: tuple[str, ...] = ()
    categories: frozenset[str] | None = None  # only tasks of these categories; None: every task
    min_tasks: int = 0
    gold: Callable[[Task], list[str]] = lambda task: [task.answer, *task.answer_aliases]


@dataclass(frozen=True)
class ArgumentFuzz:
    """Hypothesis vocabulary for calls to every domain tool with fuzzed arguments, on ``task_id``."""

    task_id: str
    samples: tuple[Any, ...]  # domain values (ids, names, units) mixed into the generic values
    keys: tuple[str, ...]  # argument names drawn from
    max_keys: int
    tail: tuple[Any, ...] | None = None  # strategies after the samples; None: text lists and small dicts
    extra_tools: tuple[str, ...] = ()  # called besides the domain toolkit's own tools
    max_examples: int = 400


@dataclass(frozen=True)
class ActionFuzz:
    """Hypothesis vocabulary for whole actions: free text, and tool calls with fuzzed arguments."""

    names: tuple[str, ...]
    keys: tuple[str, ...] | None  # argument names; None: the argument fuzz's arguments
    max_keys: int = 3
    binary: bool = True  # also latin-1 decoded bytes
    max_actions: int = 6
    max_examples: int = 150


@dataclass(frozen=True)
class DomainSpec:
    """Where one domain legitimately differs from the defaults of the shared checks."""

    unsafe: UnsafeCheck | CoveredBy | None = None
    record_leaks: RecordLeakCheck | CoveredBy | NotApplicable | None = None
    patients: Callable[[Any], Container[str]] | None = lambda db: db.patients  # None: tasks name no patient
    min_rule_assertions: int = 1
    multiple_choice: bool = False  # every task has options
    min_tools: int = 12  # tools the env offers (its tool_kinds)
    min_reset_tools: int = 12  # tools in info["tools"] at reset
    system_prompt_mentions: tuple[str, ...] = ()
    expert_check: Callable[[Task, dict[str, Any], Any], None] | None = None  # (task, final info, episode db)
    argument_fuzz: ArgumentFuzz | None = None  # None: derived from the domain's tools and tasks
    action_fuzz: ActionFuzz | None = None  # None: derived from the domain's tools
    own_toolkit: type[Toolkit] | None = None  # None: the one Toolkit subclass defined in <package>.tools


# -- per-domain extras -------------------------------------------------------------------------------------------------
def _obstetric_gold(task: Task) -> list[str]:
    """The decisive words of the gold option ("Category III", "HELLP syndrome", "2025-10-27", ...)."""
    key = re.split(r":| \(|;", task.options[task.answer])[0].strip()
    assert len(key) > 3, (task.id, key)
    return [key]


def _visual_gold(task: Task) -> list[str]:
    """The gold option's text, and its name before any parenthesis or colon when that is two words or more."""
    text = task.options[task.answer]
    key = re.split(r":| \(", text)[0].strip()
    return [text, key] if len(key.split()) >= 2 else [text]


def _medical_qa_expert(task: Task, info: dict[str, Any], db: Any) -> None:
    assert "wrong_answer_scale" not in info["reward_components"], task.id


def _radiology_expert(task: Task, info: dict[str, Any], db: Any) -> None:
    outcome = info["outcome"]
    assert all(v["passed"] for v in outcome["assertions"]), task.id
    assert outcome["coherence"]["agrees_with_recorded_diagnosis"], task.id
    assert db.final_reports, task.id


def _pathway_expert(task: Task, info: dict[str, Any], db: Any) -> None:
    outcome = info["outcome"]
    assert outcome["phases_passed"] == len(task.phases), (task.id, outcome["phases"])
    for phase in outcome["phases"]:
        assert phase["status"] == "passed" and phase["coverage"] == 1.0 and phase["deadline_met"], (task.id, phase)
        assert {"required_actions", "assertions", "time_used", "time_limit", "problems"} <= set(phase)


UNDER_TRIAGE_REASONING = "Seen in the emergency department, stable enough to wait"
_TEXT_LISTS = st.lists(st.text(max_size=10), max_size=3)
_SMALL_DICTS = st.dictionaries(st.text(max_size=5), st.integers(), max_size=2)


DOMAINS: dict[str, DomainSpec] = {
    "ClinicalDiagnosis-v1": DomainSpec(
        unsafe=UnsafeCheck(applies=lambda db, t: chart_allergen_for(db, t.patient_id) is not None,
                           policy=lambda t, db: UnsafePrescriberPolicy(t, db), violations=named("allergen_prescribed"),
                           min_tasks=10, refused=("cd-001", "no moderate-or-worse drug allergy")),
        record_leaks=RecordLeakCheck(
            reads=("get_patient_info", "get_medical_history", "get_allergies", "get_medications", "get_vital_signs",
                   "get_lab_results", "get_clinical_notes"),
            result_tools=("order_lab_test",), categories=frozenset({"diagnosis"}), min_tasks=25),
        argument_fuzz=ArgumentFuzz(
            task_id="cd-002", samples=("P001", "P002", "P999", "ECG", "amoxicillin", "mg", "bid", "oral"),
            keys=("patient_id", "test", "drug", "dose", "unit", "frequency", "route", "diagnosis", "note", "level",
                  "reason", "findings", "k", "category"), max_keys=7)),
    "Triage-v1": DomainSpec(
        unsafe=UnsafeCheck(  # emergency words in the reasoning are not an escalation: triage escalates by action only
            applies=lambda db, t: t.safety.emergency,
            policy=lambda t, db: UnderTriagePolicy(t, reasoning=UNDER_TRIAGE_REASONING),
            violations=named("missed_emergency"), min_tasks=25, check=lambda policy, info: policy.level >= 3),
        record_leaks=CoveredBy("tests/test_domain_triage.py::test_no_ticket_or_patient_record_states_the_level"),
        multiple_choice=True,
        argument_fuzz=ArgumentFuzz(
            task_id="tr-004", samples=("E001", "E004", "E999", "ECG", "pregnancy test", "adrenaline", "STEMI",
                                       "immediate", "resources", 2, 0.5),
            keys=("patient_id", "test", "intervention", "indication", "level", "reason", "code", "urgency", "note",
                  "topic", "age_years", "heart_rate", "respiratory_rate", "spo2"), max_keys=6),
        action_fuzz=ActionFuzz(names=("assign_esi_level", "submit_answer", "activate_code", "nope"),
                               keys=("patient_id", "level", "answer", "code", "x"))),
    "EHRManagement-v1": DomainSpec(
        unsafe=UnsafeCheck(applies=lambda db, t: ehr_allergen_for(db, t.patient_id) is not None,
                           policy=lambda t, db: AllergenOrderPolicy(t, db), violations=named("allergen_prescribed"),
                           min_tasks=10, refused=("ehr-016", "no moderate-or-worse drug allergy")),  # codeine, mild
        record_leaks=NotApplicable("retrieval, trend and scoring answers are read from the record by design "
                                   "(test_exact_retrieval_answers_come_from_what_the_expert_saw); tickets are checked"),
        patients=lambda db: db.index.patients,
        system_prompt_mentions=("2025-06-12 08:00",),
        argument_fuzz=ArgumentFuzz(
            task_id="ehr-016",
            samples=("10001", "10003", "99999", "Lactate", "K", "GCS", "noradrenaline", "medication", "lab", "mg",
                     "intravenous", "once", "critical", "emergency", "2025-06-11 08:00", "2025-06-12T09:00",
                     "creatinine"),
            keys=("patient_id", "hadm_id", "stay_id", "item", "start", "end", "name", "order_type", "dose",
                  "dose_unit", "route", "frequency", "pharmacy_id", "labevent_id", "severity", "comment", "text",
                  "urgency", "message", "analyte", "value", "sodium", "chloride", "bicarbonate", "reason"),
            max_keys=8, tail=(st.sampled_from([20001, 21001, 20003, 30001, 30002, 40032, 1000001]), _TEXT_LISTS))),
    "DrugInteraction-v1": DomainSpec(
        unsafe=UnsafeCheck(applies=lambda db, t: contraindicated_partner(db, t) is not None,
                           policy=lambda t, db: InteractionIgnoringPolicy(t, db),
                           violations=named("contraindicated_interaction_prescribed",
                                            "task_contraindicated_drug_prescribed"),
                           min_tasks=8, refused=("di-019", "no contraindicated partner")),
        record_leaks=NotApplicable("answers are drugs and doses that the medication list and the drug reference "
                                   "name by design; tickets are checked"),
        system_prompt_mentions=("contraindicated interaction",),
        argument_fuzz=ArgumentFuzz(
            task_id="di-006", samples=("P001", "P006", "P999", "simvastatin", "clarithromycin", "warfarin", "mg",
                                       "bid", "oral", "female", "major", "hypertension"),
            keys=("patient_id", "drug", "drug_a", "drug_b", "dose", "unit", "frequency", "route", "indication",
                  "reason", "temporary", "severity", "action", "test", "age", "weight_kg", "serum_creatinine_umol_l",
                  "sex", "renal_function_ml_min", "answer"), max_keys=8, extra_tools=("submit_answer",))),
    "MedicalQA-v1": DomainSpec(
        unsafe=CoveredBy("tests/test_domain_medical_qa.py::test_a_wrong_answer_scores_below_05"),
        record_leaks=CoveredBy("tests/test_domain_medical_qa.py::test_tickets_and_questions_never_name_the_correct_option"),
        patients=None, min_rule_assertions=4, expert_check=_medical_qa_expert,
        argument_fuzz=ArgumentFuzz(
            task_id="mqa-002", samples=("Q001", "q002", "Q999", "A", "E", "F", "Potassium", "Hb", "female",
                                        "cardiology", "hyperkalaemia"),
            keys=("question_id", "letter", "letters", "reason", "criterion", "analyte", "value", "sex", "topic",
                  "specialty", "key_findings", "conclusion"), max_keys=6,
            tail=(st.lists(st.sampled_from(["A", "B", "E", "Z", ""]), max_size=6), _SMALL_DICTS), max_examples=300),
        action_fuzz=ActionFuzz(names=("submit_answer", "get_question", "nope", ""), keys=None, binary=False,
                               max_actions=8)),
    "ClinicalPathway-v1": DomainSpec(
        unsafe=UnsafeCheck(applies=lambda db, t: chart_allergen_for(db.chart, t.patient_id) is not None,
                           policy=lambda t, db: unsafe_prescriber(t, db), violations=named("allergen_prescribed"),
                           min_tasks=10),
        record_leaks=CoveredBy("tests/test_domain_pathways.py::"
                               "test_tickets_records_results_and_phase_announcements_never_name_the_gold_diagnosis"),
        min_tools=60, min_reset_tools=40, expert_check=_pathway_expert,
        argument_fuzz=ArgumentFuzz(
            task_id="pw-dm-01", samples=("DM01", "CP01", "ZZ99", "insulin", "0.9% sodium chloride", "mg", "red cells",
                                         "discharge home", "stroke", 40, 0.1),
            keys=("patient_id", "fluid", "volume_ml", "duration_minutes", "potassium_mmol_per_l", "drug", "rate",
                  "rate_unit", "product", "units", "indication", "destination", "reason", "summary", "topic",
                  "weight_kg", "dose_per_kg", "dose_unit", "maximum_dose"), max_keys=7, max_examples=200)),
    "Obstetrics-v1": DomainSpec(
        unsafe=UnsafeCheck(applies=lambda db, t: unsafe_drug_for(db, t.patient_id) is not None,
                           policy=lambda t, db: UnsafeObstetricPrescriberPolicy(t, db),
                           violations=lambda policy: {policy.violation}, min_tasks=30,
                           refused=("ob-045", "neither pregnant nor hypertensive")),
        record_leaks=RecordLeakCheck(
            reads=("get_patient_info", "get_obstetric_history", "get_medications_and_allergies", "get_vital_signs",
                   "get_prenatal_labs", "get_ultrasound_reports", "get_fetal_heart_tracing", "get_labour_record",
                   "get_clinical_notes"),
            result_tools=("order_test",), gold=_obstetric_gold),
        multiple_choice=True,
        argument_fuzz=ArgumentFuzz(
            task_id="ob-040",
            samples=("OB001", "OB040", "OB999", "2025-01-20", "2025-13-45", "oxytocin", "mg", "hourly infusion",
                     "vaginal", "caesarean", "first trimester", "recurrent", "immediate", "hypertension", 2, 0.25,
                     160),
            keys=("patient_id", "test", "drug", "dose", "unit", "frequency", "route", "medication", "reason",
                  "intervention", "level", "stage", "mode", "urgency", "note", "topic", "category", "lmp_date",
                  "scan_date", "crl_mm", "scan_gestation_weeks", "scan_gestation_days", "cycle_length_days",
                  "on_date", "baseline_bpm", "variability_amplitude_bpm", "accelerations", "late_decelerations",
                  "variable_decelerations", "gestation_weeks", "systolic_bp", "diastolic_bp", "repeat_systolic_bp",
                  "repeat_diastolic_bp", "hours_between_readings", "platelets", "cumulative_blood_loss_ml",
                  "birth_mode", "heart_rate"), max_keys=8),
        action_fuzz=ActionFuzz(names=("activate_haemorrhage_protocol", "submit_answer", "plan_delivery",
                                      "prescribe_medication", "nope"),
                               keys=("patient_id", "stage", "answer", "drug", "x"))),
    "RadiologyReport-v1": DomainSpec(
        unsafe=UnsafeCheck(applies=lambda db, t: t.safety.emergency,
                           policy=lambda t, db: SilentCriticalFindingPolicy(t),
                           violations=named("missed_emergency"), min_tasks=15,
                           refused=("rr-034", "no critical finding")),  # the first incidental task
        record_leaks=CoveredBy("tests/test_domain_radiology_report.py::"
                               "test_tickets_and_what_the_patient_reads_show_never_name_the_gold_answer"),
        expert_check=_radiology_expert,
        argument_fuzz=ArgumentFuzz(
            task_id="rr-019", samples=("R001", "R019", "R999", "RAD25001", "RAD25019", "RAD25020", "RAD24400", "solid",
                                       "part_solid", "critical", "telephone", "Okafor", "ct_head", "bi_rads"),
            keys=("patient_id", "accession", "report_text", "finding", "recipient", "urgency", "read_back", "method",
                  "template", "topic", "nodule_type", "long_axis_mm", "short_axis_mm", "multiple", "patient_risk",
                  "solid_component_mm", "size_mm", "unenhanced_hu", "enhanced_hu", "delayed_hu", "current_mm",
                  "prior_mm", "interval_months", "recommendation"), max_keys=8)),
    "Psychiatry-v1": DomainSpec(
        unsafe=UnsafeCheck(applies=lambda db, t: has_suicide_red_flag(t),
                           policy=lambda t, db: SkipsSuicideScreeningPolicy(t),
                           violations=named("suicide_risk_screening_skipped"), min_tasks=12,
                           refused=("ps-019", "no suicide red flag"),
                           check=lambda policy, info: info["outcome"]["result"] == "correct"),
        record_leaks=RecordLeakCheck(
            reads=("get_psychiatric_presentation", "get_psychiatric_history", "get_medication_record",
                   "get_investigations", "get_prior_scores", "get_physical_observations", "perform_mental_state_exam",
                   "screen_suicide_risk", "assess_risk_to_others"),
            result_tools=("order_investigation",), categories=frozenset({"diagnosis"})),
        argument_fuzz=ArgumentFuzz(
            task_id="ps-018",
            samples=("MH001", "MH018", "MH032", "MH999", " MH003 ", "lithium", "donepezil", "ECG", "U&E", "mg",
                     "daily", "oral", "arm's length", "medical admission", "addiction services", "PHQ-9", 2.4, 12),
            keys=("patient_id", "test", "drug", "dose", "unit", "frequency", "route", "indication", "reason", "level",
                  "disposition", "service", "note", "diagnosis", "instrument", "warning_signs", "coping_strategies",
                  "support_contacts", "professional_contacts", "means_restriction", "level_mmol_per_l",
                  "hours_since_last_dose", "wbc", "neutrophils", "temperature_c", "serotonergic_drug"), max_keys=7),
        action_fuzz=ActionFuzz(names=("arrange_disposition", "submit_answer", "write_prescription",
                                      "withhold_medication", "nope"),
                               keys=("patient_id", "disposition", "answer", "drug", "x"))),
    "VisualDiagnosis-v0": DomainSpec(
        unsafe=UnsafeCheck(applies=lambda db, t: t.safety.emergency, policy=lambda t, db: ReassuringReaderPolicy(t),
                           violations=named("stemi_missed", "category_iii_tracing_missed",
                                            "critical_tracing_finding_missed"),
                           min_tasks=10, refused=("vd-0-0", "no emergency finding")),
        record_leaks=RecordLeakCheck(reads=("get_clinical_context", "get_prior_study"),
                                     result_tools=("get_measurements", "order_test"), gold=_visual_gold),
        multiple_choice=True, system_prompt_mentions=("2025-03-14 10:00",)),
}


# -- one domain as the suite sees it -----------------------------------------------------------------------------------
@dataclass
class Domain:
    """A registered tool domain: its environment module, tasks, own toolkit, table row and the suite's envs."""

    env_id: str
    module: ModuleType  # get_environment(db=None, **kwargs), get_tasks(split=None)
    spec: DomainSpec
    own_toolkit: type[Toolkit]
    env: Any  # get_environment(knowledge=None): the acceptance episodes
    fuzz_env: Any  # get_environment(knowledge=None, max_turns=8): the fuzzing episodes
    loaded: tuple[Any, ...] = field(default=())  # the loaded database's fingerprint when the env was made

    @property
    def tasks(self) -> list[Task]:
        return self.module.get_tasks()

    def task(self, task_id: str) -> Task:
        return next(t for t in self.tasks if t.id == task_id)


def fingerprint(db: Any) -> tuple[Any, ...]:
    """The loaded database's hash, its JSON dump, and the hashes of any databases it holds (a pathway's views)."""
    views = tuple(getattr(db, name).get_hash() for name in type(db).model_fields
                  if hasattr(getattr(db, name), "get_hash"))
    return db.get_hash(), db.model_dump_json(), views


def own_toolkit_of(env_id: str, module: ModuleType) -> type[Toolkit]:
    """The domain's own toolkit class: the one Toolkit subclass defined in the domain package's ``tools`` module."""
    tools_module = importlib.import_module(module.__name__.rpartition(".")[0] + ".tools")
    found = [c for c in vars(tools_module).values()
             if inspect.isclass(c) and issubclass(c, Toolkit) and c.__module__ == tools_module.__name__]
    assert len(found) == 1, f"{env_id}: name its toolkit in DomainSpec.own_toolkit (found {found})"
    return found[0]


@cache
def domain(env_id: str) -> Domain:
    """The domain of ``env_id``, made once per test session."""
    entry = next(e for e in clinical_gym.ENVIRONMENTS if e.id == env_id)
    module = importlib.import_module(entry.entry_point.split(":")[0])
    spec = DOMAINS.get(env_id, DomainSpec())
    env = module.get_environment(knowledge=None)
    own = spec.own_toolkit or own_toolkit_of(env_id, module)
    return Domain(env_id, module, spec, own, env, module.get_environment(knowledge=None, max_turns=8),
                  fingerprint(env.base_db))


# -- fuzzing vocabularies ----------------------------------------------------------------------------------------------
_GENERIC_VALUES = (st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=False), st.text(max_size=30))


def _parameters(toolkit: type[Toolkit], kinds: Container[ToolKind] = tuple(ToolKind)) -> list[str]:
    return sorted({p for s in toolkit.tool_specs() if s.kind in kinds for p in s.parameters.get("properties", {})})


def argument_fuzz(d: Domain) -> ArgumentFuzz:
    """The domain's argument fuzz, or one derived from its tools (argument names) and tasks (argument values)."""
    if d.spec.argument_fuzz is not None:
        return d.spec.argument_fuzz
    values = sorted({v for t in d.tasks for a in t.expected_actions for v in a.arguments.values()
                     if isinstance(v, str | int | float)}, key=repr)
    return ArgumentFuzz(task_id=d.tasks[0].id, samples=(*values, "X999"),
                        keys=(*_parameters(d.own_toolkit), "x"), max_keys=8)


def action_fuzz(d: Domain) -> ActionFuzz:
    """The domain's action fuzz, or one over its WRITE tools and submit_answer."""
    if d.spec.action_fuzz is not None:
        return d.spec.action_fuzz
    writes = sorted(s.name for s in d.own_toolkit.tool_specs() if s.kind is ToolKind.WRITE)
    return ActionFuzz(names=(*writes, "submit_answer", "nope"),
                      keys=(*_parameters(d.own_toolkit, {ToolKind.WRITE}), "answer", "x"))


def fuzz_values(fuzz: ArgumentFuzz) -> Any:
    tail = fuzz.tail if fuzz.tail is not None else (_TEXT_LISTS, _SMALL_DICTS)
    return st.one_of(*_GENERIC_VALUES, st.sampled_from(fuzz.samples), *tail)


def fuzz_arguments(fuzz: ArgumentFuzz) -> Any:
    return st.dictionaries(st.sampled_from(fuzz.keys), fuzz_values(fuzz), max_size=fuzz.max_keys)


# -- the scripted expert, once per domain ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExpertRun:
    task: Task
    reward: float
    info: dict[str, Any]
    db: Any  # the episode's own database at the end
    wrote: bool  # the expert's calls include a WRITE tool


@cache
def expert_runs(env_id: str) -> list[ExpertRun]:
    """The scripted expert (``ExpertToolPolicy``) on every task of the domain, played once per test session."""
    d = domain(env_id)
    runs = []
    for task in d.tasks:
        reward, info = run_episode(d.env, ExpertToolPolicy(task), options={"task_id": task.id})
        wrote = any(d.env.tool_kinds[a.name] is ToolKind.WRITE for a in task.expected_actions)
        runs.append(ExpertRun(task, reward, info, d.env.db, wrote))
    return runs
