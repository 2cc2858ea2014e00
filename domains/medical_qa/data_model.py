"""The MedicalQA database: a bank of multiple-choice clinical vignette questions (stem, lead-in and options, never
the key), adult reference ranges, guideline summaries, and what the agent writes during an episode (option
eliminations and review flags)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from clinical_gym.tool_env.database import RecordListsDB, canonical_json, sha256_hex

Letter = Literal["A", "B", "C", "D", "E"]
LETTERS: tuple[str, ...] = ("A", "B", "C", "D", "E")
Sex = Literal["female", "male"]
Specialty = Literal["cardiology", "respiratory", "endocrinology", "nephrology", "gastroenterology", "hepatology",
                    "haematology", "infectious disease", "neurology", "psychiatry", "obstetrics", "paediatrics",
                    "rheumatology", "toxicology", "pharmacology", "emergency medicine", "surgery", "urology",
                    "dermatology", "ophthalmology"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Question(_Model):
    """One single-best-answer question: a clinical vignette, the lead-in, and 4-5 options lettered from A."""

    question_id: str = Field(pattern=r"^Q\d{3,6}$")
    specialty: Specialty
    topic: str = Field(min_length=1)
    vignette: str = Field(min_length=1)
    lead_in: str = Field(min_length=1)
    options: dict[Letter, str]

    @field_validator("options")
    @classmethod
    def _lettered_from_a(cls, v: dict[str, str]) -> dict[str, str]:
        if list(v) != list(LETTERS[:len(v)]) or not 4 <= len(v) <= 5:
            raise ValueError(f"options must be 4 or 5, lettered A, B, C, ... in order; got {list(v)}")
        return v


class Bounds(_Model):
    low: float | None = None
    high: float | None = None


class ReferenceRange(_Model):
    """The adult reference range of an analyte: ``low``/``high`` (either may be open), or per sex in ``by_sex``."""

    analyte: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)
    unit: str
    low: float | None = None
    high: float | None = None
    by_sex: dict[Sex, Bounds] = Field(default_factory=dict)
    note: str = ""

    @model_validator(mode="after")
    def _has_bounds(self) -> ReferenceRange:
        if self.by_sex and set(self.by_sex) != {"female", "male"}:
            raise ValueError(f"{self.analyte}: by_sex needs both 'female' and 'male'")
        if not self.by_sex and self.low is None and self.high is None:
            raise ValueError(f"{self.analyte}: give low, high or by_sex")
        return self

    def bounds(self, sex: Sex | None) -> Bounds:
        """The range that applies; ValueError when the range depends on sex and none is given."""
        if not self.by_sex:
            return Bounds(low=self.low, high=self.high)
        if sex is None:
            raise ValueError(f"{self.analyte} has sex-specific ranges; pass sex ('female' or 'male')")
        return self.by_sex[sex]


class Guideline(_Model):
    """A short guideline summary written for this project, found by its title and keywords."""

    guideline_id: str = Field(pattern=r"^G\d{2}$")
    title: str = Field(min_length=1)
    specialty: Specialty
    keywords: list[str] = Field(min_length=1)
    summary: str = Field(min_length=1)


class Elimination(_Model):
    """An option the agent ruled out, with its reason."""

    question_id: str
    letter: Letter
    reason: str


class ReviewFlag(_Model):
    """A question the agent flagged for review (ambiguous, flawed or outdated), with its reason."""

    flag_id: str
    question_id: str
    reason: str


BANK = {"questions", "reference_ranges", "guidelines"}
WRITES = {"eliminations", "flags"}


class MedicalQADB(RecordListsDB):
    """The domain's state: the read-only bank (``questions``, ``reference_ranges`` by analyte, ``guidelines`` by
    id) and the episode's writes (``eliminations``, ``flags``), which start empty.

    ``episode_copy()`` shares the read-only bank and copies the write lists, so a reset costs microseconds; tools
    add and remove items in the write lists and never change the bank. ``get_hash()`` reuses the bank's digest,
    computed once and shared by all copies.
    """

    record_fields: ClassVar[tuple[str, ...]] = ("eliminations", "flags")
    questions: dict[str, Question]
    reference_ranges: dict[str, ReferenceRange]
    guidelines: dict[str, Guideline]
    eliminations: list[Elimination] = Field(default_factory=list)
    flags: list[ReviewFlag] = Field(default_factory=list)

    @model_validator(mode="after")
    def _keys_match_ids(self) -> MedicalQADB:
        for name, items, key in (("questions", self.questions, "question_id"),
                                 ("reference_ranges", self.reference_ranges, "analyte"),
                                 ("guidelines", self.guidelines, "guideline_id")):
            wrong = [k for k, item in items.items() if getattr(item, key) != k]
            if wrong:
                raise ValueError(f"{name}: keys {wrong} differ from the items' {key}")
        return self

    def get_hash(self) -> str:
        bank = self.shared("bank_digest", lambda: _digest(self.model_dump(mode="json", include=BANK)))
        return _digest([bank, self.model_dump(mode="json", include=WRITES)])


def _digest(value: Any) -> str:
    return sha256_hex(canonical_json(value))
