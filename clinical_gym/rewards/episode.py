"""What a tool-domain episode leaves for grading: the calls made, the submitted answer, and a domain-neutral view of
the patient and of the clinical actions taken (the inputs of the 5-dimension reward and the safety detectors).

Domains fill ``PatientFacts`` and ``ClinicalActions`` from their own database. Canonical lab keys (used by the
safety and coherence rules): ``potassium``, ``sodium``, ``glucose`` (mmol/L), ``haemoglobin`` (g/dL),
``platelets`` (10⁹/L), ``neutrophils`` (10⁹/L), ``inr``, ``lactate`` (mmol/L), ``ph``, ``calcium`` (adjusted,
mmol/L), ``egfr`` (mL/min/1.73 m²), ``qtc`` (ms), ``creatinine`` (µmol/L), ``troponin`` (ng/L), ``crp`` (mg/L),
``wbc`` (10⁹/L); other keys are allowed and used only by name.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, Generic, Literal, NamedTuple, TypeVar, get_args, overload

from pydantic import BaseModel, ConfigDict, Field

from clinical_gym.cases.schema import normalize
from clinical_gym.tool_env.database import canonical_json
from clinical_gym.tool_env.tasks import Task
from clinical_gym.tools import CallForm, ToolKind

AllergySeverity = Literal["mild", "moderate", "severe", "life-threatening", "not recorded"]
LabFlag = Literal["high", "low", "normal"]
ReviewCategory = Literal["demographics", "history", "allergies", "medications", "vitals", "labs", "notes"]
REVIEW_CATEGORIES: tuple[ReviewCategory, ...] = get_args(ReviewCategory)
T = TypeVar("T")
_READ, _THINK, _SUBMIT = ToolKind.READ, ToolKind.THINK, ToolKind.SUBMIT


class derived(Generic[T]):
    """``functools.cached_property`` for the records here: the value made on first read and kept in the record's
    ``__dict__``, without the lock Python 3.11's takes on every first read (~0.3 us; a final step makes three or
    four, one record each). Records are built by one thread; two reading a new one at once may both make the
    value, the same value."""

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> derived[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object, owner: type | None = None) -> T | derived[T]:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)
        return value


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Derived(_Frozen):
    """A frozen record that remembers values derived from its fields (``derived``): a copy with fields changed
    (``model_copy(update=...)``) forgets them."""

    model_config = ConfigDict(extra="forbid", frozen=True, ignored_types=(derived,))

    def model_copy(self, *, update: Any = None, deep: bool = False) -> Any:
        copied = super().model_copy(update=update, deep=deep)
        if update:
            fields = type(self).model_fields
            for name in [name for name in copied.__dict__ if name not in fields]:
                del copied.__dict__[name]
        return copied

    def remembered(self, key: str, build: Callable[[Any], T]) -> T:
        """``build(self)``, made once per record and kept with it under ``key`` (a name no field or cached property
        has, e.g. ``"safety.critical_labs"``); a copy with changed fields forgets it."""
        values = self.__dict__
        if key not in values:
            values[key] = build(self)
        return values[key]  # type: ignore[no-any-return]


class CallRecord(_Frozen):
    """One tool call as it happened. ``arguments`` are the domain's canonical form (aliases resolved); ``reviews``
    are the categories of patient data a successful call showed the agent."""

    index: int
    turn: int
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    kind: ToolKind | None = None
    ok: bool
    error_kind: str | None = None
    form: CallForm
    content: str = ""
    reviews: frozenset[ReviewCategory] = frozenset()


class AllergyFact(_Frozen):
    substance: str
    severity: AllergySeverity
    reaction: str = ""


class PatientFacts(_Derived):
    """The task patient's record at the end of the episode, in canonical terms.

    ``pregnant``: None when not applicable or unknown. ``labs``: latest value per canonical key of the results
    available to the agent (including ones it ordered), ``lab_flags`` their flag against the reference range.
    ``vitals``: latest ``temperature_c``, ``heart_rate``, ``systolic_bp``, ``diastolic_bp``, ``respiratory_rate``,
    ``spo2``.
    """

    patient_id: str
    age: float
    sex: Literal["female", "male"]
    pregnant: bool | None = None
    gestation_weeks: float | None = None
    weight_kg: float | None = None
    allergies: list[AllergyFact] = Field(default_factory=list)
    medications: list[str] = Field(default_factory=list)
    conditions: list[str] = Field(default_factory=list)
    labs: dict[str, float] = Field(default_factory=dict)
    lab_flags: dict[str, LabFlag] = Field(default_factory=dict)
    vitals: dict[str, float] = Field(default_factory=dict)

    def has_condition(self, *terms: str) -> bool:
        """Whether a condition contains any of ``terms`` as whole words (normalised)."""
        return any(contains_term(c, t) for c in self.conditions for t in terms)


class Prescription(_Frozen):
    """A prescribed regimen; ``indication`` (what it is for, as the prescriber wrote it) selects dose limits by
    indication and exempts intended obstetric uses in pregnancy."""

    drug: str
    dose_mg: float | None = None
    doses_per_day: float | None = None
    frequency: str = ""
    route: str = ""
    indication: str = ""
    call_index: int


class Act(_Frozen):
    """A clinical action described in words (a test ordered, a diagnosis recorded, a note, an escalation)."""

    text: str
    call_index: int


class ClinicalActions(_Frozen):
    """The clinical actions the agent took (successful WRITE calls), each with the index of its call."""

    prescriptions: list[Prescription] = Field(default_factory=list)
    orders: list[Act] = Field(default_factory=list)
    diagnoses: list[Act] = Field(default_factory=list)
    notes: list[Act] = Field(default_factory=list)
    escalations: list[Act] = Field(default_factory=list)


class SubmittedAnswer(_Derived):
    answer: str
    reasoning: str = ""
    call_index: int

    @derived
    def text(self) -> str:
        """The answer and its reasoning, one text (what the answer-reading rules read)."""
        return f"{self.answer}\n{self.reasoning}".strip()


class CallSummary(NamedTuple):
    """One pass over an episode's calls that the graders share (``EpisodeRecord.call_summary``)."""

    successful: list[CallRecord]
    """The successful calls, in order."""
    by_kind: dict[ToolKind | None, list[CallRecord]]
    """The successful calls of each kind, in order."""
    by_name: dict[str, list[CallRecord]]
    """The successful calls of each tool, in order."""
    first_reviews: dict[str, tuple[int, int]]
    """For each category reviewed, (position in ``calls``, call index) of the first successful call that reviewed
    it."""
    first_any_review: int | None
    """The index of the first successful call that reviewed any category."""
    counted: int
    """The calls other than submit calls, failed ones included (what process diversity divides by)."""
    signatures: set[object]
    """The distinct signatures of the successful calls other than submit calls: equal for two calls exactly when
    their names and canonical JSON arguments are (for string arguments, the usual case, the sorted items; else the
    canonical JSON text)."""
    gathered: set[str]
    """The tools of the successful READ and THINK calls (information gathering)."""


class EpisodeRecord(_Derived):
    """Everything the reward sees about one finished episode. ``tool_kinds``: the kind of every tool the agent
    had; ``can_document``: whether the domain offers a note-writing tool; ``final_db``: the episode's database at
    the end."""

    task: Task
    calls: list[CallRecord] = Field(default_factory=list)
    turn_formats: list[float] = Field(default_factory=list)
    answer: SubmittedAnswer | None = None
    patient: PatientFacts | None = None
    actions: ClinicalActions = Field(default_factory=ClinicalActions)
    tool_kinds: dict[str, ToolKind] = Field(default_factory=dict)
    can_document: bool = False
    final_db: BaseModel | None = None

    @derived
    def observed_text(self) -> str:
        """The normalised text of everything successful calls showed the agent."""
        return normalize(" ".join(c.content for c in self.call_summary.successful))

    @derived
    def decision_text(self) -> str:
        """The agent's stated conclusions: the answer and reasoning, diagnoses recorded, notes, escalation reasons."""
        acts = (*self.actions.diagnoses, *self.actions.notes, *self.actions.escalations)
        parts = [self.answer.text if self.answer else "", *(a.text for a in acts)]
        return " ".join(p for p in parts if p)

    @derived
    def call_summary(self) -> CallSummary:
        """The calls read once for every grader (safety, process, coherence, assertion rules): the successful ones,
        by kind and by tool, the first review of each category, and what process scoring counts."""
        successful: list[CallRecord] = []
        by_kind: dict[ToolKind | None, list[CallRecord]] = {}
        by_name: dict[str, list[CallRecord]] = {}
        firsts: dict[str, tuple[int, int]] = {}
        first_any = None
        counted = 0
        signatures: set[object] = set()
        gathered: set[str] = set()
        last: CallRecord | None = None  # the last successful call, and the lists it went into
        of_kind: list[CallRecord] = []
        of_name: list[CallRecord] = []
        for position, call in enumerate(self.calls):
            kind = call.kind
            if kind is not _SUBMIT:
                counted += 1
            if not call.ok:
                continue
            name = call.name
            if kind is not _SUBMIT:
                arguments = call.arguments
                if len(arguments) == 1:  # the usual call: one argument (tuple(sorted(...)) of its one item)
                    ((k, v),) = arguments.items()
                    signatures.add((name, ((k, v),)) if type(k) is str and type(v) is str
                                   else f"{name}:{canonical_json(arguments)}")
                else:
                    for k, v in arguments.items():
                        if type(k) is not str or type(v) is not str:
                            signatures.add(f"{name}:{canonical_json(arguments)}")
                            break
                    else:
                        signatures.add((name, tuple(sorted(arguments.items()))))
                if kind is _READ or kind is _THINK:
                    gathered.add(name)
            successful.append(call)
            if last is not None and name == last.name and kind is last.kind and call.reviews == last.reviews:
                # the same tool again (a repeated call): its lists, and nothing new reviewed
                of_kind.append(call)
                of_name.append(call)
                continue
            last = call
            of_kind = by_kind.get(kind)  # type: ignore[assignment]
            if of_kind is None:
                of_kind = by_kind[kind] = [call]
            else:
                of_kind.append(call)
            of_name = by_name.get(name)  # type: ignore[assignment]
            if of_name is None:
                of_name = by_name[name] = [call]
            else:
                of_name.append(call)
            reviews = call.reviews
            if reviews and not reviews <= firsts.keys():  # (a repeated call reviews nothing new)
                if first_any is None:
                    first_any = call.index
                for category in reviews:
                    if category not in firsts:
                        firsts[category] = (position, call.index)
        return CallSummary(successful, by_kind, by_name, firsts, first_any, counted, signatures, gathered)

    def successful(self, kind: ToolKind | None = None) -> list[CallRecord]:
        """The successful calls (of ``kind``), in order."""
        summary = self.call_summary
        return list(summary.successful if kind is None else summary.by_kind.get(kind, ()))

    def first_review(self, *categories: ReviewCategory) -> int | None:
        """The index of the first successful call that reviewed any of ``categories`` (None if none did)."""
        firsts = self.call_summary.first_reviews
        if len(categories) == 1:  # one category (allergies, labs, vitals checks)
            first = firsts.get(categories[0])
            return first[1] if first is not None else None
        found = [firsts[c] for c in categories if c in firsts]
        return min(found)[1] if found else None

    @property
    def first_reviews(self) -> dict[str, tuple[int, int]]:
        """For each category reviewed, (position in ``calls``, call index) of the first successful call that
        reviewed it."""
        return self.call_summary.first_reviews


@lru_cache(maxsize=8192)
def padded_words(text: str) -> str:
    """``text`` normalised (``clinical_gym.cases.schema.normalize``) and padded with spaces, for whole-word search."""
    return f" {normalize(text)} "


def contains_term(text: str, term: str) -> bool:
    """Whether ``term`` appears in ``text`` as whole words after normalisation."""
    needle = padded_words(term)
    return needle != "  " and needle in padded_words(text)
