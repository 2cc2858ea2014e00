"""ClinicalPathway-v1: a patient's journey through several phases (triage, assessment, treatment, medicines review,
disposition), each phase opening the toolkit of the wave-1 domain that does that work, over one patient record.

Entry points (tau2-bench layout): ``get_environment(db=None, **kwargs)`` and ``get_tasks(split=None)``;
``get_pathways()`` gives the journeys.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType, SimpleNamespace
from typing import Any

from clinical_gym.drugs import reference
from clinical_gym.rewards.episode import (
    Act,
    CallRecord,
    ClinicalActions,
    PatientFacts,
    Prescription,
    ReviewCategory,
    SubmittedAnswer,
)
from clinical_gym.tool_env.env import CALL_HINT, ToolDomainEnv
from clinical_gym.tool_env.task_folder import tasks_argument
from clinical_gym.tool_env.tasks import Task, select_split
from clinical_gym.domains.clinical_diagnosis.environment import REVIEWS as CHART_REVIEWS
from clinical_gym.domains.clinical_diagnosis.environment import ClinicalDiagnosisEnv, lab_key
from clinical_gym.domains.clinical_diagnosis.environment import bundled_db as chart_db
from clinical_gym.domains.clinical_diagnosis.tools import ClinicalDiagnosisTools
from clinical_gym.domains.dosing import prescription
from clinical_gym.domains.drug_interaction.data_model import DOSES_PER_DAY as MEDICINES_DOSES_PER_DAY
from clinical_gym.domains.drug_interaction.environment import REVIEWS as MEDICINES_REVIEWS
from clinical_gym.domains.drug_interaction.environment import DrugInteractionEnv
from clinical_gym.domains.drug_interaction.environment import bundled_db as medicines_db
from clinical_gym.domains.drug_interaction.tools import DrugInteractionTools
from clinical_gym.domains.lookups import with_patient_id
from clinical_gym.domains.pathways.data_model import PathwayDB, PathwaySource
from clinical_gym.domains.pathways.engine import PathwayEpisodeRecord, PathwayResult, PathwayReward, PhaseTracker
from clinical_gym.domains.pathways.phases import (
    HANDOFF,
    PathwaySpec,
    PathwayTask,
    deadline_text,
    load_pathway_tasks,
    load_pathways,
    resolve_task,
)
from clinical_gym.domains.pathways.tools import PathwayTools
from clinical_gym.domains.records import allergy_facts, vital_facts
from clinical_gym.domains.shared_toolkits import BundledDomain
from clinical_gym.domains.triage.environment import REVIEWS as TRIAGE_REVIEWS
from clinical_gym.domains.triage.environment import TriageEnv, escalation_text
from clinical_gym.domains.triage.environment import bundled_db as triage_db
from clinical_gym.domains.triage.tools import TriageTools
from clinical_gym.tools import FORMAT_SCORES, ParsedCall, ToolKind, Toolkit, ToolResult, parse_tool_calls
from clinical_gym.tools.calls import EXAMPLE
from clinical_gym.tools.toolkit import BoundTool

DATA = resources.files("clinical_gym.domains.pathways") / "data"
DEFAULT_MAX_TURNS = 40
DOMAIN_TOOLKITS: dict[str, type[Toolkit]] = {"triage": TriageTools, "clinical_diagnosis": ClinicalDiagnosisTools,
                                             "drug_interaction": DrugInteractionTools, "pathway": PathwayTools}
DOMAIN_REVIEWS: dict[str, Mapping[str, frozenset[ReviewCategory]]] = {
    "triage": TRIAGE_REVIEWS, "clinical_diagnosis": CHART_REVIEWS, "drug_interaction": MEDICINES_REVIEWS,
    "pathway": {"get_pathway_status": frozenset()}}
ENGINE_TOOLS = ("get_pathway_status", "get_pathway_protocol", HANDOFF)  # open in every phase
SHARED = "shared"
VIEW_OF = {"triage": "triage", "clinical_diagnosis": "chart", "drug_interaction": "medicines"}
# Dispositions that take the patient to emergency or critical care (an escalation for the safety rules).
ESCALATING_DESTINATIONS = {
    "cardiac catheterisation laboratory": "cardiac catheterisation laboratory for emergency reperfusion",
    "coronary care unit": "coronary care unit (critical care)", "intensive care unit": "intensive care unit",
    "high dependency unit": "high dependency unit (critical care)",
    "hyperacute stroke unit": "hyperacute stroke unit (emergency stroke care)",
    "thrombectomy centre": "immediate transfer to a thrombectomy centre",
    "neurosurgical unit": "immediate transfer to the neurosurgical unit", "operating theatre": "emergency surgery",
    "paediatric intensive care unit": "paediatric intensive care unit (critical care)"}


@lru_cache(maxsize=1)
def get_pathways() -> dict[str, PathwaySpec]:
    """The bundled journeys by name."""
    return load_pathways(DATA / "pathways.json")


@lru_cache(maxsize=1)
def bundled_protocols() -> Mapping[str, str]:
    """The protocol texts of ``get_pathway_protocol`` by topic."""
    return MappingProxyType(json.loads((DATA / "protocols.json").read_text(encoding="utf-8")))


@lru_cache(maxsize=1)
def bundled_db() -> PathwayDB:
    """The bundled database (shared, never mutated: episodes work on copies), with the bundled triage,
    clinical-diagnosis and drug-interaction catalogues."""
    source = PathwaySource.model_validate_json((DATA / "db.json").read_text(encoding="utf-8"))
    return PathwayDB.build(source, triage_db(), chart_db(), medicines_db())


@lru_cache(maxsize=1)
def _bundled_tasks() -> tuple[PathwayTask, ...]:
    return tuple(load_pathway_tasks(DATA / "tasks.json", get_pathways()))


def get_tasks(split: str | None = None) -> list[PathwayTask]:
    """The bundled tasks of ``split`` ("train", "test", or all for None)."""
    return select_split(list(_bundled_tasks()), split)  # type: ignore[arg-type]


@dataclass(frozen=True)
class PathwayPlan:
    """What a pathway's phases open: each tool's owner (a domain key, or "shared") and opening phase, the tools
    open in each phase (in listing order), and what the agent is shown (schemas, system prompt)."""

    owner: Mapping[str, str]
    opens_at: Mapping[str, int]
    opened: list[list[str]]
    schemas: list[dict[str, Any]]
    kinds: dict[str, ToolKind]
    reviews: Mapping[str, frozenset[ReviewCategory]]
    system_prompt: str
    toolkit: Toolkit


class ClinicalPathwayEnv(BundledDomain, ToolDomainEnv):
    """
    ## Description
    ClinicalPathway-v1: a patient's journey through a clinical pathway (acute chest pain, diabetic emergency,
    stroke, suspected sepsis, post-operative deterioration, febrile child) in phases. Each phase opens the tools of
    the wave-1 domain that does its work, over the same patient: triage tools (``clinical_gym.domains.triage``), chart, test,
    diagnosis and prescribing tools (``clinical_gym.domains.clinical_diagnosis``), medicines-review tools
    (``clinical_gym.domains.drug_interaction``), and the pathway's own (fluids, infusions, blood products, a weight-based dose
    calculator, disposition). The pathway tools ``get_pathway_status``, ``get_pathway_protocol`` and ``handoff``,
    the shared scoring instruments, knowledge search, ``think`` and ``submit_answer`` are open throughout.

    A phase ends when the agent calls ``handoff`` (the last one with ``submit_answer``); a tool stays open once its
    phase has opened it; a tool of a later phase is refused with a message naming the phase that opens it. A phase
    may have a time limit in tool calls (door-to-ECG, door-to-needle, the one-hour sepsis bundle): every call
    attempted while it is active counts; passing the limit fails the phase and is announced once.

    ## Action Space, Observation Space
    As ``ToolDomainEnv``. A handoff's observation announces the next phase: its goal, time limit and the tools it
    opens.

    ## Starting State
    As ``ToolDomainEnv``; the first observation is the ticket followed by the pathway's phases with their goals.

    ## Rewards
    The 5D reward at the end (``clinical_gym.rewards.five_d``), with process coverage the mean of the phases'
    coverages and one assertion per time-limited phase (``clinical_gym.domains.pathways.engine``).

    ## Episode End
    Termination: ``submit_answer`` (in any phase; phases not reached fail), or ``max_turns`` (default 40) turns.
    Truncation: never.

    ## Information
    As ``ToolDomainEnv``, plus ``pathway`` (reset) and ``phase`` (reset and every step: number, of, name, title,
    goal, time used and limit, the tools open now). Terminal ``outcome`` adds ``pathway``, ``phases`` (per phase:
    status passed / failed / not_reached, the required actions and whether each was done in the phase, assertion
    verdicts, coverage, time used and limit, problems) and ``phases_passed``; ``success`` needs every phase passed.

    ## Arguments
    ``gym.make("ClinicalPathway-v1", db=None, tasks=None, split=None, max_turns=40, pathways=None,
    knowledge="bundled", ...)``: the ``ToolDomainEnv`` arguments; ``tasks`` are ``PathwayTask`` objects or task
    entries (see ``clinical_gym.domains.pathways.phases``); ``pathways`` replaces the bundled journeys that entries name.

    ## Version History
    * v0: initial release.
    """

    can_document = True
    task_generator = "clinical_gym.domains.pathways.generator:PathwayGenerator"

    def __init__(self, db: PathwayDB | None = None, tasks: Sequence[PathwayTask | Mapping[str, Any]] | None = None,
                 split: str | None = None, *, max_turns: int = DEFAULT_MAX_TURNS,
                 pathways: Mapping[str, PathwaySpec] | None = None, task_seed: int | None = None,
                 **kwargs: Any) -> None:
        self.pathways = dict(pathways if pathways is not None else get_pathways())
        self.protocols = bundled_protocols()
        tasks, db = tasks_argument(tasks, db, type(self), split=split, seed=task_seed)
        resolved = None if tasks is None else [self._resolve(t) for t in tasks]
        super().__init__(db, resolved, split, max_turns=max_turns, **kwargs)
        self.reward_fn = PathwayReward(self.reward_fn.config, self.reward_fn.judge)
        self._plans: dict[Any, PathwayPlan] = {}
        self._plan_of: dict[int, tuple[PathwayTask, PathwayPlan, str]] = {}
        self._unknown_answers: dict[int, dict[str, ToolResult]] = {}
        for task in self.tasks:  # checks every phase's tools exist, and prepares what the agent is shown
            self._plan(task)  # type: ignore[arg-type]

    # -- ToolDomainEnv hooks -------------------------------------------------------------------------------------
    @classmethod
    def default_db(cls) -> PathwayDB:
        return bundled_db()

    @classmethod
    def default_tasks(cls) -> list[Task]:
        return list(_bundled_tasks())

    @classmethod
    def load_db_file(cls, path: str | Path) -> PathwayDB:
        """A pathway database from JSON: the bundled ``data/db.json`` form (``PathwaySource``: patients, clock and
        additions, built over the bundled catalogues) or a whole ``PathwayDB`` as ``dump`` writes it."""
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        if isinstance(raw, dict) and "triage" in raw:
            return PathwayDB.model_validate(raw)
        return PathwayDB.build(PathwaySource.model_validate(raw), triage_db(), chart_db(), medicines_db())

    def domain_toolkit(self, db: PathwayDB) -> Toolkit:  # type: ignore[override]
        """Every tool a pathway can open (the first domain wins a shared name), bound to ``db``."""
        self.domain_toolkits = self._instances(db)
        bound: dict[str, Any] = {}
        for toolkit in self.domain_toolkits.values():
            for name, tool_ in toolkit.tools.items():
                bound.setdefault(name, tool_)
        return _toolkit_of(bound)

    def canonical_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        owner = self.plan.owner.get(name)
        if owner == "triage":
            return TriageEnv.canonical_arguments(SimpleNamespace(domain_tools=self.domain_toolkits["triage"]),
                                                 name, arguments)  # type: ignore[arg-type]
        if owner == "clinical_diagnosis":
            return ClinicalDiagnosisEnv.canonical_arguments(
                SimpleNamespace(domain_tools=self.domain_toolkits["clinical_diagnosis"]), name, arguments)  # type: ignore[arg-type]
        if owner == "drug_interaction":
            return DrugInteractionEnv.canonical_arguments(SimpleNamespace(base_db=self.db.medicines), name,
                                                          arguments)  # type: ignore[arg-type]
        canonical = with_patient_id(arguments)
        if name == "start_infusion" and isinstance(canonical.get("drug"), str):
            drug = reference().find(canonical["drug"])
            canonical["drug"] = drug.name if drug is not None else canonical["drug"]
        return canonical

    def patient_facts(self, db: PathwayDB, task: Task) -> PatientFacts | None:  # type: ignore[override]
        pid = task.patient_id
        record = db.patients.get(pid) if pid else None
        chart = db.chart.patients.get(pid) if pid else None
        if record is None or chart is None:
            return None
        labs, flags = {}, {}
        catalogue = db.triage.bedside_tests_catalogue
        for test in db.triage.bedside_tests:
            key = catalogue[test.test].key
            if test.patient_id == pid and key and test.result.value is not None:
                labs[key], flags[key] = test.result.value, test.result.flag
        for result in chart.labs:
            if result.value is not None:
                key = lab_key(result.test)
                labs[key], flags[key] = result.value, result.flag
        # a stopped medicine is no longer the patient's; a withheld one still is (its effect outlasts the hold)
        stopped = {d.drug for d in db.medicines.discontinuations if d.patient_id == pid and not d.temporary}
        latest = chart.vitals[-1] if chart.vitals else None
        return PatientFacts(
            patient_id=pid, age=record.age, sex=record.sex, pregnant=record.pregnant,
            gestation_weeks=record.gestation_weeks, weight_kg=record.weight_kg,
            allergies=allergy_facts(record.allergies),
            medications=[m.drug for m in record.medications if m.drug not in stopped],
            conditions=list(record.conditions), labs=labs, lab_flags=flags,  # type: ignore[arg-type]
            vitals=vital_facts(latest) if latest else {})

    def clinical_actions(self, calls: list[CallRecord]) -> ClinicalActions:
        pid = self.task.patient_id
        triage_catalogue = self.db.triage.interventions_catalogue
        dose_changes = iter(self.db.medicines.dose_changes)
        rx: list[Prescription] = []
        orders: list[Act] = []
        diagnoses: list[Act] = []
        notes: list[Act] = []
        escalations: list[Act] = []
        triage_escalations: list[Act] = []
        levels: list[int] = []
        for call in calls:
            if not call.ok:
                continue
            name, a, i = call.name, call.arguments, call.index
            change = next(dose_changes, None) if name == "change_dose" else None
            if name == HANDOFF:
                notes.append(Act(text=a["summary"], call_index=i))
            if a.get("patient_id", pid) != pid:
                continue
            owner = self.plan.owner.get(name)
            if owner == "triage":
                if name == "assign_esi_level":
                    levels.append(a["level"])
                if name == "order_immediate_intervention":
                    d = triage_catalogue[a["intervention"]]
                    if d.drug is not None:
                        rx.append(Prescription(drug=d.drug, dose_mg=d.dose_mg, doses_per_day=1, frequency="once",
                                               route=d.route, call_index=i))
                elif name == "perform_bedside_test":
                    orders.append(Act(text=a["test"], call_index=i))
                elif name == "record_triage_note":
                    notes.append(Act(text=a["note"], call_index=i))
                text = escalation_text(name, a)
                if text is not None:
                    triage_escalations.append(Act(text=text, call_index=i))
            elif owner == "clinical_diagnosis":
                if name == "prescribe_medication":
                    rx.append(prescription(a["drug"], a["dose"], a["unit"], a["frequency"], a["route"], i,
                                           indication=a.get("indication") or ""))
                elif name == "order_lab_test":
                    orders.append(Act(text=a["test"], call_index=i))
                elif name == "record_diagnosis":
                    diagnoses.append(Act(text=a["diagnosis"], call_index=i))
                elif name == "write_clinical_note":
                    notes.append(Act(text=a["note"], call_index=i))
                elif name == "escalate_care":
                    escalations.append(Act(text=f"{a['level']}: {a['reason']}", call_index=i))
            elif owner == "drug_interaction":
                if name == "prescribe":
                    rx.append(prescription(a["drug"], a["dose"], a["unit"], a["frequency"], a["route"], i,
                                           MEDICINES_DOSES_PER_DAY, indication=a.get("indication") or ""))
                elif change is not None and change.raises_daily_dose:
                    rx.append(prescription(change.drug, change.new.dose, change.new.unit, change.new.frequency,
                                           change.new.route, i, MEDICINES_DOSES_PER_DAY))
                elif name == "record_interaction_alert":
                    notes.append(Act(text=f"{a['drug_a']} with {a['drug_b']}: {a['severity']} interaction. "
                                          f"{a['action']}", call_index=i))
            elif name == "start_iv_fluids" and a.get("potassium_mmol_per_l"):
                rx.append(Prescription(drug="potassium chloride", frequency="continuous", route="intravenous",
                                       call_index=i))
            elif name == "start_infusion":
                rx.append(Prescription(drug=a["drug"], frequency="continuous", route="intravenous", call_index=i))
            elif name == "set_disposition":
                notes.append(Act(text=f"Disposition {a['destination']}: {a['reason']}", call_index=i))
                if a["destination"] in ESCALATING_DESTINATIONS:
                    escalations.append(Act(text=f"{ESCALATING_DESTINATIONS[a['destination']]} ({a['reason']})",
                                           call_index=i))
        if not (levels and levels[-1] >= 3):  # a final ESI 3-5 sends the patient to wait: triage escalations lapse
            escalations += triage_escalations
        return ClinicalActions(prescriptions=rx, orders=orders, diagnoses=diagnoses, notes=notes,
                               escalations=sorted(escalations, key=lambda act: act.call_index))

    # -- episode -------------------------------------------------------------------------------------------------
    @property
    def plan(self) -> PathwayPlan:
        """The current episode's pathway plan."""
        return self._current

    def _choose_case(self, options: dict[str, Any]) -> Task:  # type: ignore[override]
        if isinstance(options.get("task"), (Mapping, Task)):
            options = {**options, "task": self._resolve(options["task"])}
        return super()._choose_case(options)

    def _begin(self, task: Task) -> tuple[str, dict[str, Any]]:  # type: ignore[override]
        assert isinstance(task, PathwayTask)
        plan, prompt = self._prepared(task)
        self._current = plan
        self.db = self.base_db.episode_copy()
        self.tracker = PhaseTracker(task)
        self._bind(self.db, self.tracker, plan.opened)
        self.toolkit = self.domain_tools = plan.toolkit
        self.review_categories = plan.reviews  # type: ignore[misc]
        self.tool_kinds = plan.kinds
        self.turn = 0
        self.calls: list[CallRecord] = []
        self.turn_formats: list[float] = []
        self.submitted = None
        return prompt, {"system_prompt": plan.system_prompt, "tools": plan.schemas, "max_turns": self.max_turns,
                        "pathway": task.pathway, "phase": self._phase_status()}

    def _act(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.turn += 1
        parsed = parse_tool_calls(action)
        if len(parsed) > self.max_calls_per_turn:
            self.turn_formats.append(0.0)
            notice = self.tracker.charge()
            return self._turn_end(_joined(f"Error: {len(parsed)} tool calls in one turn; the limit is "
                                          f"{self.max_calls_per_turn}. Nothing was run. {CALL_HINT}", [notice]), [])
        results: list[ToolResult] = []
        notices: list[str | None] = []
        for call in parsed:
            notices.append(self.tracker.charge())
            result = self._locked(call) or self._unknown(call) or self.toolkit.call(call)
            results.append(self._record(call, result))
            if result.ends_episode:
                self.submitted = SubmittedAnswer(answer=str(result.arguments.get("answer", "")),
                                                 reasoning=str(result.arguments.get("reasoning", "")),
                                                 call_index=len(self.calls) - 1)
                break
            if result.ok and result.name == HANDOFF:
                self.tracker.hand_over(len(self.calls))
                notices.append(self._phase_intro())
        self.turn_formats.append(min(FORMAT_SCORES[c.form] if c.ok else 0.0 for c in parsed))
        texts = [self._result_text(r) for r in results]
        numbered = enumerate(zip(results, texts, strict=True), 1)
        obs = texts[0] if len(texts) == 1 else "\n\n".join(f"[{i}] {r.name or 'call'}: {t}" for i, (r, t) in numbered)
        obs = _joined(obs, notices)
        if self.submitted is not None:
            self.tracker.finish(len(self.calls), "submit")
            return self._finish(obs + "\nThe pathway is over.")
        return self._turn_end(obs, results)

    def _reject(self, problem: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        notice = self.tracker.charge()
        obs, reward, terminated, truncated, info = super()._reject(problem)
        return _joined(obs, [notice]) if not terminated else obs, reward, terminated, truncated, info

    def _turn_end(self, obs: str, results: list[ToolResult]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = super()._turn_end(obs, results)
        if not terminated:
            info["phase"] = self._phase_status()
        return obs, reward, terminated, truncated, info

    def _finish(self, obs: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        tracker = self.tracker
        if tracker.ended_by[tracker.index] is None:
            tracker.finish(len(self.calls), "submit" if self.submitted is not None else "turn_limit")
        record = self.episode_record()
        graded = self.reward_fn.evaluate(record)
        failed = self._judge_failed(graded, obs)
        if failed is not None:
            return failed
        outcome = self._outcome(record, graded)
        phases = graded.phases if isinstance(graded, PathwayResult) else []
        outcome.update(pathway=self.task.pathway, phases=[p.model_dump() for p in phases],  # type: ignore[attr-defined]
                       phases_passed=sum(p.passed for p in phases))
        outcome["success"] = outcome["success"] and all(p.passed for p in phases)
        info = {"turn": self.turn, "reward_components": graded.components, "outcome": outcome,
                "task_id": self.task.id, "phase": self._phase_status()}
        return obs, graded.total, True, False, info

    def episode_record(self) -> PathwayEpisodeRecord:
        """What the reward sees about the episode so far, with the phase windows."""
        task = self.task
        return PathwayEpisodeRecord(task=task, calls=list(self.calls), turn_formats=list(self.turn_formats),
                                    answer=self.submitted, patient=self.patient_facts(self.db, task),
                                    actions=self.clinical_actions(self.calls), tool_kinds=self.tool_kinds,
                                    can_document=self.can_document, final_db=self.db,
                                    windows=self.tracker.windows())

    # -- pieces --------------------------------------------------------------------------------------------------
    @classmethod
    def load_task_file(cls, path: str | Path) -> list[Any]:
        """The task entries of a JSON file (a list of objects); ``tasks=`` resolves them against the pathways."""
        entries = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise ValueError(f"{path}: a pathway task file holds a JSON list of task objects")
        return entries

    def _resolve(self, task: PathwayTask | Task | Mapping[str, Any]) -> PathwayTask:
        if isinstance(task, PathwayTask):
            return task
        raw = task.model_dump() if isinstance(task, Task) else task
        if not isinstance(raw, Mapping):
            raise TypeError(f"a pathway task must be a PathwayTask or a dict, got {type(task).__name__}")
        return resolve_task(raw, self.pathways)

    def _instances(self, db: PathwayDB) -> dict[str, Toolkit]:
        """One toolkit per domain over ``db``'s views; ``_bind`` points them at an episode's copy."""
        views = {"triage": db.triage, "clinical_diagnosis": db.chart, "drug_interaction": db.medicines}
        return {key: (PathwayTools(db, None, [], self.protocols) if key == "pathway" else cls(views[key]))
                for key, cls in DOMAIN_TOOLKITS.items()}

    def _bind(self, db: PathwayDB, tracker: PhaseTracker, opened: list[list[str]]) -> None:
        """Re-initialise this env's toolkits over an episode's database (their bound tools stay valid)."""
        kits = self.domain_toolkits
        TriageTools.__init__(kits["triage"], db.triage)  # type: ignore[arg-type]
        ClinicalDiagnosisTools.__init__(kits["clinical_diagnosis"], db.chart)  # type: ignore[arg-type]
        DrugInteractionTools.__init__(kits["drug_interaction"], db.medicines)  # type: ignore[arg-type]
        PathwayTools.__init__(kits["pathway"], db, tracker, opened, self.protocols)  # type: ignore[arg-type]

    @property
    def _shared_tools(self) -> Mapping[str, Any]:
        tools = self.__dict__.get("_shared_bound")
        if tools is None:
            tools = {name: t for toolkit in self._shared for name, t in toolkit.tools.items()}
            self.__dict__["_shared_bound"] = tools
        return tools

    def _plan(self, task: PathwayTask) -> PathwayPlan:
        return self._prepared(task)[0]

    def _prepared(self, task: PathwayTask) -> tuple[PathwayPlan, str]:
        """The task's plan (shared by the tasks of a pathway) and its opening observation, computed once per task."""
        known = self._plan_of.get(id(task))
        if known is not None and known[0] is task:
            return known[1], known[2]
        key = (task.pathway, tuple(tuple((d, tuple(n)) for d, n in p.tools.items()) for p in task.phases))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._make_plan(task)
        self._plan_of[id(task)] = (task, plan, task.prompt)
        return plan, task.prompt

    def _make_plan(self, task: PathwayTask) -> PathwayPlan:
        owner: dict[str, str] = {}
        opens_at: dict[str, int] = {}
        specs: dict[str, Any] = {}
        for i, phase in enumerate(task.phases):
            for domain, names in phase.tools.items():
                available = DOMAIN_TOOLKITS[domain]._tool_attributes
                for name in names:
                    if name not in available:
                        raise ValueError(f"pathway {task.pathway!r}, phase {phase.name!r}: the {domain} toolkit has "
                                         f"no tool {name!r}")
                    if name in ENGINE_TOOLS or name in self._shared_tools:
                        raise ValueError(f"pathway {task.pathway!r}: {name!r} is open in every phase; do not list it")
                    owner[name], opens_at[name], specs[name] = domain, i, available[name][1]
        for name in ENGINE_TOOLS:
            owner[name], opens_at[name], specs[name] = "pathway", 0, PathwayTools._tool_attributes[name][1]
        for name, bound in self._shared_tools.items():
            owner[name], opens_at[name], specs[name] = SHARED, 0, bound.spec
        opened = [[n for n in owner if opens_at[n] <= i] for i in range(len(task.phases))]
        reviews = {n: DOMAIN_REVIEWS[o][n] for n, o in owner.items() if n in DOMAIN_REVIEWS.get(o, {})}
        bound = {n: self._bound(n, o) for n, o in owner.items()}
        return PathwayPlan(owner=MappingProxyType(owner), opens_at=MappingProxyType(opens_at), opened=opened,
                           toolkit=_toolkit_of(bound), schemas=[specs[n].openai_schema() for n in owner],
                           kinds={n: specs[n].kind for n in owner}, reviews=MappingProxyType(reviews),
                           system_prompt=self._pathway_prompt(task, specs, opens_at))

    def _bound(self, name: str, owner: str) -> BoundTool:
        if owner == SHARED:
            return self._shared_tools[name]  # type: ignore[no-any-return]
        bound = self.domain_toolkits[owner].tools[name]
        if owner in VIEW_OF and bound.spec.kind is ToolKind.WRITE:
            return BoundTool(bound.spec, self._writer(owner, name), bound.owner)
        return bound

    def _pathway_prompt(self, task: PathwayTask, specs: Mapping[str, Any], opens_at: Mapping[str, int]) -> str:
        phases = []
        for i, phase in enumerate(task.phases, 1):
            limit = f" Time limit: {deadline_text(phase)}." if phase.deadline_calls else ""
            phases.append(f"{i}. {phase.title}: {phase.goal}{limit}")
        groups = [("Open in every phase", [n for n in opens_at if n in ENGINE_TOOLS or n in self._shared_tools])]
        groups += [(f"Opened by phase {i + 1}, {phase.title}", phase.tool_names) for i, phase in enumerate(task.phases)]
        listed = "\n".join(f"### {title}\n" + "\n".join(f"- {n} ({specs[n].kind.value}): {specs[n].description}"
                                                         for n in names) for title, names in groups if names)
        spec = self.pathways.get(task.pathway)
        about = f"{spec.description}\n" if spec is not None and spec.description else ""
        policy = self.__dict__.get("_policy")
        if policy is None:
            policy = self.__dict__["_policy"] = self.policy_text().strip()
        return (f"{policy}\n\n## Pathway: {task.pathway_title}\n{about}" + "\n".join(phases)
                + f"\n\n## Tools\n{listed}\n\n## How to act\nEach turn, call one tool by replying with only a JSON "
                f"object: {EXAMPLE}. You see the tool's result next turn. You have at most {self.max_turns} turns. "
                f"Call {HANDOFF} to finish a phase; in the last phase call submit_answer with your final answer and "
                f"the findings that support it.")

    def _locked(self, call: ParsedCall) -> ToolResult | None:
        """A refusal for a tool that a later phase opens (None when the call may run)."""
        plan, tracker = self.plan, self.tracker
        at = plan.opens_at.get(call.name) if call.ok else None
        if at is None or at <= tracker.index:
            return None
        phase = self.task.phases[at]  # type: ignore[attr-defined]
        message = (f"{call.name} is not open yet: it opens in phase {at + 1} ({phase.title}). You are in phase "
                   f"{tracker.index + 1} ({tracker.current.title}); call {HANDOFF} when this phase's work is done. "
                   f"get_pathway_status lists the tools open now.")
        return ToolResult(ok=False, content=f"Error: {message}", name=call.name, arguments=call.arguments,
                          kind=plan.kinds.get(call.name), error=message, error_kind="tool_error", form=call.form)

    def _unknown(self, call: ParsedCall) -> ToolResult | None:
        """The toolkit's answer to a call of a tool the pathway does not have, remembered per name (suggesting close
        names is slow, and agents repeat the names they invent)."""
        if not call.ok or call.name in self._current.owner:
            return None
        cache = self._unknown_answers.setdefault(id(self._current), {})
        answer = cache.get(call.name)
        if answer is None:
            answer = self.toolkit.call(call)
            if len(cache) < 1024:
                cache[call.name] = answer
        return answer.model_copy(update={"arguments": call.arguments, "form": call.form})

    def _writer(self, owner: str, name: str) -> Callable[..., Any]:
        """A WRITE tool of a wave-1 domain that first gives the episode its own copy of that domain's view."""
        tool_ = self.domain_toolkits[owner].tools[name].function

        def write(**arguments: Any) -> Any:
            view, copied = self.db.view_for_update(VIEW_OF[owner])  # type: ignore[arg-type]
            if copied:
                DOMAIN_TOOLKITS[owner].__init__(self.domain_toolkits[owner], view)  # type: ignore[misc]
            return tool_(**arguments)

        return write

    def _phase_intro(self) -> str:
        tracker = self.tracker
        phase = tracker.current
        new = [n for n in self.plan.opened[tracker.index] if n not in self.plan.opened[tracker.index - 1]]
        limit = f" Time limit: {deadline_text(phase)}." if phase.deadline_calls else ""
        return (f"Phase {tracker.index + 1} of {len(tracker.task.phases)} begins: {phase.title}. Goal: {phase.goal}"
                f"{limit} Tools opened now: {', '.join(new) or 'none'}.")

    def _phase_status(self) -> dict[str, Any]:
        return self.tracker.status(list(self.plan.opened[self.tracker.index]))


def _toolkit_of(bound: Mapping[str, Any]) -> Toolkit:
    """A toolkit holding exactly these bound tools (as ``Toolkit.merge`` builds one)."""
    toolkit = Toolkit()
    toolkit.__dict__["_bound_tools"] = MappingProxyType(dict(bound))
    return toolkit


def _joined(obs: str, notices: list[str | None]) -> str:
    extra = [n for n in notices if n]
    return "\n".join([obs, *extra]) if extra else obs


def get_environment(db: PathwayDB | None = None, **kwargs: Any) -> ClinicalPathwayEnv:
    """A ClinicalPathway environment over ``db`` (default: the bundled database); ``kwargs`` go to the env."""
    return ClinicalPathwayEnv(db=db, **kwargs)
