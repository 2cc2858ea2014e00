"""The records of the drug reference (pydantic, frozen): drugs with their classes, dosing, renal bands, pregnancy and
lactation safety, CYP450 / P-glycoprotein roles and adverse-effect profile; drug classes and what each implies;
class-level interaction rules; allergy groups and their cross-reactivity.

Every clinical rule carries the label or guideline it follows (``source``): interaction rules, dose limits by
indication, pregnancy and lactation advice and cross-reactivity. Units: doses in mg; renal function in mL/min/1.73 m²
(eGFR) or mL/min (Cockcroft-Gault creatinine clearance), as each drug's ``renal_measure`` says.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_gym.drugs.units import DOSES_PER_DAY, MG_PER_UNIT

Frequency = Literal["once", "daily", "nightly", "bid", "tid", "qid", "five times daily", "q4h", "q6h", "q8h", "q12h",
                    "q24h", "q48h", "weekly", "prn"]
DoseUnit = Literal["mg", "mcg", "g", "units", "mL", "mmol"]
Route = Literal["oral", "intravenous", "intramuscular", "subcutaneous", "inhaled", "sublingual", "topical", "rectal",
                "vaginal", "transdermal", "buccal", "nebulised"]
Severity = Literal["contraindicated", "major", "moderate", "minor"]
SEVERITY_RANK: dict[str, int] = {"minor": 1, "moderate": 2, "major": 3, "contraindicated": 4}
Enzyme = Literal["CYP1A2", "CYP2C9", "CYP2C19", "CYP2D6", "CYP3A4", "P-gp"]
Strength = Literal["strong", "moderate", "weak"]
RenalMeasure = Literal["eGFR", "CrCl"]
SafetyVerdict = Literal["compatible", "caution", "avoid", "contraindicated"]
VERDICT_RANK: dict[str, int] = {"compatible": 0, "caution": 1, "avoid": 2, "contraindicated": 3}
HepaticAdvice = Literal["no adjustment", "caution", "reduce dose", "avoid in severe impairment", "avoid"]
CrossReactivityRisk = Literal["high", "low", "negligible"]
RuleCategory = Literal["serotonergic", "qt prolongation", "metabolism", "bleeding", "hyperkalaemia", "lithium",
                       "cns depression", "cardiovascular", "renal", "other"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Regimen(_Model):
    """One dosing regimen: amount per administration, unit, frequency and route."""

    dose: float = Field(gt=0)
    unit: DoseUnit
    frequency: Frequency
    route: Route

    @property
    def daily_mg(self) -> float | None:
        """Milligrams a day (a single dose for "once"); None for non-mass units or as-needed use."""
        factor, per_day = MG_PER_UNIT.get(self.unit), DOSES_PER_DAY.get(self.frequency)
        if factor is None or per_day is None:
            return None
        return self.dose * factor * (1 if self.frequency == "once" else per_day)

    @property
    def text(self) -> str:
        return f"{self.dose:g} {self.unit} {self.frequency} {self.route}"


class DoseLimit(_Model):
    """The most that may be given a day (a course given "once" counts whole) for one indication, where it differs
    from the drug's overall ``max_daily_mg``. ``terms`` identify the indication in a prescription's stated
    indication or the patient's conditions (whole words); ``mg_per_kg`` caps the dose by body weight as well."""

    indication: str = Field(min_length=1)
    terms: list[str] = Field(min_length=1)
    max_mg: float = Field(gt=0)
    mg_per_kg: float | None = Field(default=None, gt=0)
    note: str = ""
    source: str = Field(min_length=1)


class DoseClass(_Model):
    """A class the drug belongs to only at daily doses above ``above_daily_mg`` (aspirin is an NSAID at analgesic
    doses, an antiplatelet alone at low dose)."""

    tag: str = Field(min_length=1)
    above_daily_mg: float = Field(gt=0)
    note: str = ""
    source: str = Field(min_length=1)


class RenalBand(_Model):
    """Dosing from ``low`` (inclusive) up to ``high`` (exclusive; None: no upper limit) of the drug's renal measure
    (eGFR in mL/min/1.73 m², or Cockcroft-Gault creatinine clearance in mL/min)."""

    low: float = Field(ge=0)
    high: float | None = None
    advice: str = Field(min_length=1)
    regimen: Regimen | None = None
    max_daily_mg: float | None = None
    avoid: bool = False

    def contains(self, value: float) -> bool:
        return self.low <= value and (self.high is None or value < self.high)

    @property
    def range_text(self) -> str:
        return f">= {self.low:g}" if self.high is None else f"{self.low:g} to < {self.high:g}"


class EnzymeRole(_Model):
    enzyme: Enzyme
    strength: Strength


class Metabolism(_Model):
    """CYP450 and P-glycoprotein roles: the pathways that clear the drug (``substrate_of``), the enzymes that
    activate a prodrug (``activated_by``), and the enzymes it inhibits or induces."""

    substrate_of: list[Enzyme] = Field(default_factory=list)
    activated_by: list[Enzyme] = Field(default_factory=list)
    inhibits: list[EnzymeRole] = Field(default_factory=list)
    induces: list[EnzymeRole] = Field(default_factory=list)
    note: str = ""


class PregnancySafety(_Model):
    """Safety in each trimester (first: to 13+6 weeks, second: 14 to 27+6, third: from 28), why, and safer
    alternatives. ``obstetric_uses``: indications (whole words of a prescription's stated indication, e.g.
    "induction") for which the drug is given in pregnancy on purpose, so the trimester verdicts do not apply."""

    first_trimester: SafetyVerdict
    second_trimester: SafetyVerdict
    third_trimester: SafetyVerdict
    note: str = ""
    alternatives: list[str] = Field(default_factory=list)
    obstetric_uses: list[str] = Field(default_factory=list)
    source: str = Field(min_length=1)

    def at(self, gestation_weeks: float | None) -> SafetyVerdict:
        """The verdict at a gestation (the most cautious of the three when it is unknown)."""
        if gestation_weeks is None:
            return max(self.verdicts, key=VERDICT_RANK.__getitem__)
        if gestation_weeks < 14:
            return self.first_trimester
        return self.second_trimester if gestation_weeks < 28 else self.third_trimester

    @property
    def verdicts(self) -> tuple[SafetyVerdict, SafetyVerdict, SafetyVerdict]:
        return self.first_trimester, self.second_trimester, self.third_trimester


class LactationSafety(_Model):
    """Safety while breastfeeding."""

    verdict: SafetyVerdict
    note: str = ""
    source: str = Field(min_length=1)


class AdverseEffects(_Model):
    """The adverse-effect profile of a drug that needs one (psychotropics): common and serious effects,
    monitoring, what toxicity looks like, and interaction points that are not drug pairs (smoking, dehydration)."""

    common_effects: list[str] = Field(default_factory=list)
    serious_effects: list[str] = Field(default_factory=list)
    monitoring: list[str] = Field(default_factory=list)
    toxicity: str = ""
    other_interactions: list[str] = Field(default_factory=list)


class Drug(_Model):
    """One drug. ``classes`` are its own class tags (``DrugClass``); ``tags`` (filled by the reference) adds the
    classes they imply, the CYP450 tags of its metabolism and its own name: what interaction rules match it by.
    ``max_daily_mg`` is the highest adult daily dose in any indication or route (None: dosed by weight, level or
    response); ``dose_limits`` are lower limits for particular indications. ``renal_bands`` (ascending, from 0 with
    no gap) are empty when no renal adjustment is needed. ``indications`` and ``usual_dose`` are given for the drugs
    the prescribing tools offer as choices."""

    name: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)
    drug_class: str = Field(min_length=1)
    classes: list[str] = Field(default_factory=list)
    indications: list[str] = Field(default_factory=list)
    usual_dose: Regimen | None = None
    usual_dose_note: str = ""
    max_daily_mg: float | None = None
    dose_limits: list[DoseLimit] = Field(default_factory=list)
    dose_classes: list[DoseClass] = Field(default_factory=list)
    renal_measure: RenalMeasure = "eGFR"
    renal_bands: list[RenalBand] = Field(default_factory=list)
    hepatic: HepaticAdvice = "no adjustment"
    hepatic_note: str = ""
    pregnancy: PregnancySafety | None = None
    breastfeeding: LactationSafety | None = None
    allergy_group: str | None = None
    avoid_in_conditions: list[str] = Field(default_factory=list)
    metabolism: Metabolism = Field(default_factory=Metabolism)
    cautions: list[str] = Field(default_factory=list)
    adverse_effects: AdverseEffects | None = None
    sources: list[str] = Field(default_factory=list)
    tags: frozenset[str] = frozenset()

    @model_validator(mode="after")
    def _bands_tile_the_range(self) -> Drug:
        bands = self.renal_bands
        if bands and not (bands[0].low == 0 and bands[-1].high is None
                          and all(a.high == b.low for a, b in zip(bands, bands[1:]))):
            raise ValueError(f"{self.name}: renal bands must run from 0 upwards without gaps or overlaps")
        return self

    def has(self, *tags: str) -> bool:
        """Whether the drug carries any of ``tags`` (a class, an implied class, a CYP450 tag or its own name)."""
        return not self.tags.isdisjoint(tags) or self.name in tags

    @property
    def avoid_below(self) -> float | None:
        """The renal function (in ``renal_measure``) below which the drug must be avoided, or None."""
        edge = None
        for band in self.renal_bands:
            if not band.avoid or band.low != (edge or 0):
                break
            edge = band.high
        return edge

    @property
    def avoid_egfr_below(self) -> float | None:
        """``avoid_below`` (kept under the name the safety rules first used)."""
        return self.avoid_below

    @property
    def pregnancy_contraindicated(self) -> bool:
        """Contraindicated in some trimester of pregnancy (outside its ``obstetric_uses``)."""
        return self.pregnancy is not None and "contraindicated" in self.pregnancy.verdicts

    @property
    def prescribable(self) -> bool:
        """Whether the reference gives the indications and usual dose the prescribing tools need."""
        return bool(self.indications) and self.usual_dose is not None


class DrugClass(_Model):
    """A class tag, what it means, and the broader classes membership implies (an SSRI is serotonergic)."""

    tag: str = Field(min_length=1)
    name: str = Field(min_length=1)
    description: str = ""
    implies: list[str] = Field(default_factory=list)


class InteractionRule(_Model):
    """An interaction between anything matching ``between[0]`` and anything matching ``between[1]``: each a drug
    name or a tag (a class, an implied class or a CYP450 tag such as ``strong_cyp3a4_inhibitor``)."""

    between: tuple[str, str]
    severity: Severity
    category: RuleCategory = "other"
    mechanism: str = Field(min_length=1)
    management: str = Field(min_length=1)
    source: str = Field(min_length=1)


class AllergyGroup(_Model):
    """A group of drugs that share allergenic structure; ``labels`` are how an allergy to the group is recorded."""

    name: str = Field(min_length=1)
    labels: list[str] = Field(default_factory=list)
    description: str = ""


class CrossReactivity(_Model):
    """How likely an allergy to ``allergy_group`` extends to drugs of ``drug_group``, and what to do."""

    allergy_group: str
    drug_group: str
    risk: CrossReactivityRisk
    advice: str = Field(min_length=1)
    source: str = Field(min_length=1)


class ReferenceData(_Model):
    """The whole reference as stored: classes, drugs, interaction rules, allergy groups and cross-reactivity."""

    classes: dict[str, DrugClass]
    drugs: dict[str, Drug]
    interactions: list[InteractionRule]
    allergy_groups: dict[str, AllergyGroup]
    cross_reactivity: list[CrossReactivity] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_resolve(self) -> ReferenceData:
        wrong = [k for k, c in self.classes.items() if k != c.tag]
        wrong += [k for k, d in self.drugs.items() if k != d.name]
        wrong += [k for k, g in self.allergy_groups.items() if k != g.name]
        if wrong:
            raise ValueError(f"keys must equal the item's tag or name: {wrong}")
        classes, groups = set(self.classes), set(self.allergy_groups)
        unknown = {c for k in self.classes.values() for c in k.implies} - classes
        unknown |= {c for d in self.drugs.values() for c in (*d.classes, *(x.tag for x in d.dose_classes))} - classes
        unknown |= {d.allergy_group for d in self.drugs.values() if d.allergy_group} - groups
        unknown |= {g for c in self.cross_reactivity for g in (c.allergy_group, c.drug_group)} - groups
        unknown |= {a for d in self.drugs.values() if d.pregnancy for a in d.pregnancy.alternatives} - set(self.drugs)
        if unknown:
            raise ValueError(f"unknown classes, allergy groups or drugs referenced: {sorted(unknown)}")
        return self
