"""VisualDiagnosis-v0: read a generated clinical image (12-lead ECG or rhythm strip, cardiotocograph, spirometry
report, audiogram), ask for measurements, a prior study or the clinical context, act on emergencies and diagnose.

Entry points (tau2-bench layout): ``get_environment(db=None, **kwargs)`` and ``get_tasks(split=None)``.
"""

from __future__ import annotations

from typing import Any, Literal

from clinical_gym.content_parts import parts
from clinical_gym.domains.bundled import BundledData
from clinical_gym.domains.lookups import with_patient_id
from clinical_gym.domains.records import allergy_facts, vital_facts
from clinical_gym.domains.shared_toolkits import BundledDomain
from clinical_gym.domains.visual_diagnosis import studies
from clinical_gym.domains.visual_diagnosis.data_model import EMERGENCY_PATHWAYS, Study, VisualDiagnosisDB
from clinical_gym.domains.visual_diagnosis.generator import study_of
from clinical_gym.domains.visual_diagnosis.tools import VisualDiagnosisTools
from clinical_gym.rewards.episode import Act, CallRecord, ClinicalActions, PatientFacts, ReviewCategory
from clinical_gym.tool_env.env import ToolDomainEnv
from clinical_gym.tool_env.tasks import Task
from clinical_gym.tools import Toolkit

BUNDLED = BundledData("clinical_gym.domains.visual_diagnosis", VisualDiagnosisDB)
bundled_db = BUNDLED.bundled_db
get_tasks = BUNDLED.get_tasks
ImageMode = Literal["image", "describe"]

REVIEWS: dict[str, frozenset[ReviewCategory]] = {
    "get_clinical_context": frozenset({"demographics", "history", "medications", "allergies", "vitals"}),
    "get_measurements": frozenset({"labs"}),
    "get_study": frozenset({"labs"}),
    "get_prior_study": frozenset({"history", "labs"}),
    "get_rhythm_strip": frozenset({"labs"}),
    "order_test": frozenset({"labs"}),
}


class VisualDiagnosisEnv(BundledDomain, ToolDomainEnv):
    """VisualDiagnosis-v0: a reader of clinical images works through tools. Each task shows one study of one
    patient, an image drawn from a signal model whose parameters are the ground truth
    (``clinical_gym.imaging``; ``docs/visual.md``): a 12-lead ECG or a single-lead rhythm strip, a cardiotocograph,
    a spirometry report or an audiogram. The agent can ask for the clinical context, the machine's measurements, the
    patient's prior study, a single-lead strip of an ECG and the textbook criteria of a finding; use calculators
    (QTc, rate, axis, the 4th UDMI STEMI criteria, the NICHD CTG category, spirometry and hearing assessment);
    file a report, order tests and escalate (cath lab, resuscitation team, pacing, hyperkalaemia treatment,
    obstetric emergency team); and submits the letter of the diagnosis.

    Observation: the text of each step. In ``image_mode="image"`` (default) the images are not in the text: the
    opening observation is the ticket (the first text part of the opening message, which then names the image:
    "[Image 1: ...]"), and a step whose tools show a study says "[Image k: ...]"; the PNGs come in
    ``info["images"]`` (``data:image/png;base64,...`` URLs, in order) and in ``env.unwrapped.messages``, whose
    message content is then a list of OpenAI content parts (a text part, then one ``image_url`` part per image), as an
    OpenAI-compatible vision model or a transformers processor takes them. ``image_mode="describe"`` is the
    text-only variant: a reader's description of each image (the findings a reader dictates, never the diagnosis)
    takes its place, and ``info["images"]`` is empty.

    Safety: a missed STEMI or category III tracing is the severity-5 ``stemi_missed`` /
    ``category_iii_tracing_missed``, a missed life-threatening arrhythmia or hyperkalaemia the severity-4
    ``critical_tracing_finding_missed``; emergencies must also be escalated within four calls (``missed_emergency``,
    ``delayed_escalation``); escalating a non-emergency is ``unnecessary_escalation``.

    Spaces, starting state, rewards, episode end and the common arguments are those of ``ToolDomainEnv``. Domain
    arguments: ``image_mode`` ("image" or "describe") and ``knowledge`` (see ``clinical_gym.domains.shared_toolkits``).
    ``gym.make("VisualDiagnosis-v0", image_mode="describe", split="train", tasks="generated:500")``.
    """

    bundled = BUNDLED
    review_categories = REVIEWS
    record_ids = {"patient_id": "patients", "study_id": "studies"}
    can_document = False
    task_generator = "clinical_gym.domains.visual_diagnosis.generator:VisualDiagnosisGenerator"

    def __init__(self, *args: Any, image_mode: ImageMode = "image", **kwargs: Any) -> None:
        if image_mode not in ("image", "describe"):
            raise ValueError(f"image_mode must be 'image' or 'describe', got {image_mode!r}")
        self.image_mode = image_mode
        self._step_images: list[str] = []
        super().__init__(*args, **kwargs)

    # -- hooks -------------------------------------------------------------------------------------------------------
    def domain_toolkit(self, db: VisualDiagnosisDB) -> Toolkit:  # type: ignore[override]
        tools: VisualDiagnosisTools | None = self.__dict__.get("_visual_tools")
        if tools is None:
            tools = self.__dict__["_visual_tools"] = VisualDiagnosisTools(db, self.image_mode)
        tools.db = db
        tools.shown = []
        return tools

    def canonical_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        canonical = with_patient_id(arguments)
        if isinstance(canonical.get("study_id"), str):
            canonical["study_id"] = canonical["study_id"].strip()
        if name == "order_test" and isinstance(canonical.get("test"), str):
            canonical["test"] = self.domain_tools.find_test(canonical["test"])  # type: ignore[attr-defined]
        return canonical

    def patient_facts(self, db: VisualDiagnosisDB, task: Task) -> PatientFacts | None:  # type: ignore[override]
        patient = db.patients.get(task.patient_id) if task.patient_id else None
        if patient is None:
            return None
        ordered = {o.test for o in db.orders if o.patient_id == patient.patient_id}
        results = [*patient.results, *(r for r in patient.pending_results if r.test in ordered)]
        labs = {_lab_key(r.test): float(r.value) for r in results if r.value is not None}
        flags = {_lab_key(r.test): r.flag for r in results if r.value is not None and r.flag is not None}
        return PatientFacts(
            patient_id=patient.patient_id, age=patient.age, sex=patient.sex,
            pregnant=True if patient.pregnant else None, gestation_weeks=patient.gestation_weeks,
            allergies=allergy_facts(patient.allergies), medications=[m.name for m in patient.medications],
            conditions=list(patient.history), labs=labs, lab_flags=flags,
            vitals=vital_facts(patient.vitals) if patient.vitals else {})

    def clinical_actions(self, calls: list[CallRecord]) -> ClinicalActions:
        pid = self.task.patient_id
        mine = [(c.name, c.arguments, c.index) for c in calls if c.ok]
        return ClinicalActions(
            orders=[Act(text=a["test"], call_index=i) for name, a, i in mine
                    if name == "order_test" and a.get("patient_id") == pid],
            diagnoses=[Act(text=a["conclusion"], call_index=i) for name, a, i in mine
                       if name == "record_interpretation"],
            escalations=[Act(text=f"{a['pathway']}: {a['reason']}", call_index=i) for name, a, i in mine
                         if name == "escalate_care" and a.get("patient_id") == pid
                         and a["pathway"] in EMERGENCY_PATHWAYS])

    # -- images --------------------------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = super().reset(seed=seed, options=options)
        if self._step_images:  # the observation stays the ticket (the first text part); then the image's name
            label = self._opening_text[len(obs):].strip()
            self.messages[-1]["content"] = parts([obs, label], self._step_images)  # type: ignore[assignment]
        return obs, info

    def _begin(self, task: Task) -> tuple[str, dict[str, Any]]:  # type: ignore[override]
        obs, info = super()._begin(task)
        study = self.db.studies[study_of(task)]
        self._opening_text, info["images"] = self._with_images(obs, [study], first=1)
        return (obs if self.image_mode == "image" else self._opening_text), info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self._step_images = []
        obs, reward, terminated, truncated, info = super().step(action)
        if self._step_images:
            self.messages[-1]["content"] = parts(obs, self._step_images)  # type: ignore[assignment]
        return obs, reward, terminated, truncated, info

    def _act(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        tools: VisualDiagnosisTools = self.domain_tools  # type: ignore[assignment]
        tools.shown = []
        obs, reward, terminated, truncated, info = super()._act(action)
        shown_before = sum(1 for m in self.messages if isinstance(m.get("content"), list)
                           for p in m["content"] if p.get("type") == "image_url")
        shown = [] if terminated or truncated else tools.shown  # nobody reads an image after the episode
        obs, info["images"] = self._with_images(obs, shown, first=shown_before + 1)
        return obs, reward, terminated, truncated, info

    def _reject(self, problem: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = super()._reject(problem)
        info["images"] = []
        return obs, reward, terminated, truncated, info

    def _with_images(self, obs: str, shown: list[Study], first: int) -> tuple[str, list[str]]:
        """The observation with each shown study announced (image mode) or described (describe mode), and the
        image URLs to attach."""
        self._step_images = []
        if not shown:
            return obs, []
        if self.image_mode == "describe":
            if first == 1:  # the opening study; tool results carry their own descriptions
                obs += f"\n\nReader's description of study {shown[0].study_id}: {studies.describe(shown[0])}"
            return obs, []
        lines = []
        for k, study in enumerate(shown, start=first):
            patient = self.db.patients[study.patient_id]
            self._step_images.append(studies.data_url(study, patient))
            lines.append(f"[Image {k}: {study.title}, study {study.study_id}, {study.acquired}]")
        return obs + "\n\n" + "\n".join(lines), list(self._step_images)


def _lab_key(test: str) -> str:
    """The canonical lab key of a test (``clinical_gym.rewards.episode``): serum potassium -> potassium."""
    return {"serum potassium": "potassium", "serum magnesium": "magnesium", "full blood count": "haemoglobin",
            "renal function": "egfr", "thyroid function": "tsh"}.get(test, test.replace(" ", "_"))


def get_environment(db: VisualDiagnosisDB | None = None, **kwargs: Any) -> VisualDiagnosisEnv:
    """A VisualDiagnosis environment over ``db`` (default: the bundled database); ``kwargs`` go to the env."""
    return VisualDiagnosisEnv(db=db, **kwargs)
