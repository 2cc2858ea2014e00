"""``DrugReference``: the drug reference indexed for queries (names, mentions in text, class membership,
interactions, allergy cross-reactivity, dose limits, renal bands, pregnancy and lactation), and ``reference()``,
the bundled one (``clinical_gym/data/drugs/*.json``), loaded once."""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from clinical_gym.cases.schema import normalize
from clinical_gym.drugs.model import (
    SEVERITY_RANK,
    AllergyGroup,
    CrossReactivity,
    DoseLimit,
    Drug,
    DrugClass,
    Enzyme,
    InteractionRule,
    ReferenceData,
    RenalBand,
    SafetyVerdict,
)

ENZYME_TAGS: dict[str, str] = {"CYP1A2": "cyp1a2", "CYP2C9": "cyp2c9", "CYP2C19": "cyp2c19", "CYP2D6": "cyp2d6",
                               "CYP3A4": "cyp3a4", "P-gp": "pgp"}
_WEAKER = {"strong": ("strong", "moderate", "weak"), "moderate": ("moderate", "weak"), "weak": ("weak",)}
DATA_FILES = ("classes", "drugs", "interactions", "allergy")
SEVERE_REACTIONS: frozenset[str] = frozenset({"severe", "life-threatening"})
AllergyConflict = Literal["same", "cross"]
Relation = Literal["same drug", "same allergy group", "cross-reactive group"]
AllergyVerdict = Literal["avoid", "use with caution", "no special precautions"]


def cyp_tags(drug: Drug) -> set[str]:
    """Tags implied by a drug's CYP450 / P-gp roles: ``<strength>_<enzyme>_inhibitor`` and ``..._inducer`` (a strong
    inhibitor also carries the moderate and weak tags: a rule naming moderate inhibitors covers stronger ones), and
    ``<enzyme>_substrate`` (e.g. ``pgp_substrate``) and ``<enzyme>_activated`` for a prodrug the enzyme activates
    (e.g. ``cyp2d6_activated``)."""
    m = drug.metabolism
    tags = {f"{s}_{ENZYME_TAGS[r.enzyme]}_inhibitor" for r in m.inhibits for s in _WEAKER[r.strength]}
    tags |= {f"{s}_{ENZYME_TAGS[r.enzyme]}_inducer" for r in m.induces for s in _WEAKER[r.strength]}
    tags |= {f"{ENZYME_TAGS[e]}_activated" for e in m.activated_by}
    return tags | {f"{ENZYME_TAGS[e]}_substrate" for e in m.substrate_of}


@dataclass(frozen=True)
class Interaction:
    """A rule that applies to two particular drugs (``drugs``: the drug asked about first)."""

    rule: InteractionRule
    drugs: tuple[str, str]

    @property
    def severity(self) -> str:
        return self.rule.severity

    @property
    def mechanism(self) -> str:
        return self.rule.mechanism

    @property
    def management(self) -> str:
        return self.rule.management

    @property
    def source(self) -> str:
        return self.rule.source


@dataclass(frozen=True)
class AllergyMatch:
    """How a drug relates to one recorded allergen, the risk that relation carries, and the advice."""

    relation: Relation
    risk: Literal["high", "low", "negligible"]
    advice: str

    def verdict(self, severity: str) -> AllergyVerdict:
        """What to do with the drug given the severity of the recorded reaction."""
        if self.risk == "high":
            return "avoid"
        if self.risk == "low":
            return "avoid" if severity in SEVERE_REACTIONS else "use with caution"
        return "no special precautions"


@dataclass(frozen=True)
class AppliedLimit:
    """The dose limit that applies to one prescription: mg a day, and what it rests on."""

    max_mg: float
    basis: str


class DrugReference:
    """The reference, indexed. Build one from ``ReferenceData`` (or use ``reference()``, the bundled one)."""

    def __init__(self, data: ReferenceData) -> None:
        self.data = data
        self.classes: Mapping[str, DrugClass] = MappingProxyType(dict(data.classes))
        implied = {tag: self._closure(tag) for tag in data.classes}
        drugs = {}
        for d in data.drugs.values():
            tags = {d.name, *cyp_tags(d)}.union(*(implied[c] for c in d.classes))
            drugs[d.name] = d.model_copy(update={"tags": frozenset(tags)})
        self.drugs: Mapping[str, Drug] = MappingProxyType(drugs)
        self.rules: tuple[InteractionRule, ...] = tuple(data.interactions)
        self.allergy_groups: Mapping[str, AllergyGroup] = MappingProxyType(dict(data.allergy_groups))
        self.cross_reactivity: tuple[CrossReactivity, ...] = tuple(data.cross_reactivity)
        self._implied = implied
        self._names = {normalize(n): d for d in drugs.values() for n in (d.name, *d.aliases)}
        self._group_labels = {normalize(label): g.name for g in data.allergy_groups.values()
                              for label in (g.name, *g.labels)}
        self._cross = {(c.allergy_group, c.drug_group): c for c in data.cross_reactivity}
        self._pairs: dict[tuple[frozenset[str], frozenset[str]], InteractionRule | None] = {}
        known = frozenset().union(*(d.tags for d in drugs.values()), data.classes)
        unknown = sorted({s for rule in self.rules for s in rule.between} - known)
        if unknown:
            raise ValueError(f"interaction rules name no drug or class: {unknown}")
        self._mention = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(self._names, key=len, reverse=True))
                                   + r")\b")
        self.indications: tuple[str, ...] = tuple(sorted({i for d in drugs.values() for i in d.indications}))

    def _closure(self, tag: str) -> frozenset[str]:
        seen, todo = {tag}, [tag]
        while todo:
            for parent in self.data.classes[todo.pop()].implies:
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        return frozenset(seen)

    # -- names -----------------------------------------------------------------------------------------------------
    def find(self, name: str) -> Drug | None:
        """The drug ``name`` refers to (name or alias, any case or punctuation; a trailing strength or form such as
        "simvastatin 40 mg tablets" is ignored), or None."""
        return _find(self, name)

    def resolve(self, name: str) -> Drug:
        """The drug ``name`` refers to; ValueError naming close matches otherwise."""
        drug = self.find(name)
        if drug is None:
            close = difflib.get_close_matches(normalize(name), list(self._names), n=3, cutoff=0.6)
            shown = list(dict.fromkeys(repr(self._names[c].name) for c in close))
            hint = f" Did you mean {', '.join(shown)}?" if shown else ""
            raise ValueError(f"{name!r} is not in the drug reference; use the generic name.{hint}")
        return drug

    def names(self) -> list[str]:
        """Every normalised name and alias the reference knows."""
        return list(self._names)

    def mentioned(self, text: str) -> tuple[Drug, ...]:
        """The drugs named in ``text`` (whole words, any listed name), in order of first mention, without repeats."""
        return _mentioned(self, text)

    def canonical_indication(self, text: str) -> str:
        """The reference's wording of an indication; ValueError listing them otherwise."""
        wanted = normalize(text)
        for known in self.indications:
            if normalize(known) == wanted:
                return known
        raise ValueError(f"unknown indication {text!r}; known indications: {', '.join(self.indications)}")

    # -- classes ---------------------------------------------------------------------------------------------------
    def members(self, tag: str) -> list[Drug]:
        """The drugs carrying ``tag`` (a class, an implied class, a CYP450 tag), by name."""
        return sorted((d for d in self.drugs.values() if tag in d.tags), key=lambda d: d.name)

    def implied(self, tag: str) -> frozenset[str]:
        """``tag`` and every class it implies."""
        return self._implied[tag]

    def tags_at(self, drug: Drug, daily_mg: float | None = None) -> frozenset[str]:
        """The drug's tags at a daily dose: ``tags`` plus the ``dose_classes`` whose threshold the dose exceeds."""
        if daily_mg is None or not drug.dose_classes:
            return drug.tags
        extra = [self._implied[c.tag] for c in drug.dose_classes if daily_mg > c.above_daily_mg]
        return drug.tags.union(*extra)

    # -- interactions ----------------------------------------------------------------------------------------------
    def rules_for(self, drug: Drug) -> list[InteractionRule]:
        """The rules one side of which matches ``drug``."""
        return [r for r in self.rules if any(side in drug.tags for side in r.between)]

    def interaction(self, a: Drug, b: Drug, daily_mg_a: float | None = None,
                    daily_mg_b: float | None = None) -> Interaction | None:
        """The most severe rule matching two different drugs (the first listed among equals), or None. A daily
        dose, when known, adds the classes the drug has at that dose (``tags_at``)."""
        if a.name == b.name:
            return None
        ta, tb = self.tags_at(a, daily_mg_a), self.tags_at(b, daily_mg_b)
        key = (ta, tb) if a.name <= b.name else (tb, ta)
        if key not in self._pairs:
            self._pairs[key] = self._match(ta, tb)
        rule = self._pairs[key]
        return None if rule is None else Interaction(rule, (a.name, b.name))

    def _match(self, ta: frozenset[str], tb: frozenset[str]) -> InteractionRule | None:
        best: InteractionRule | None = None
        for rule in self.rules:
            x, y = rule.between
            if ((x in ta and y in tb) or (x in tb and y in ta)) and (
                    best is None or SEVERITY_RANK[rule.severity] > SEVERITY_RANK[best.severity]):
                best = rule
        return best

    def interactions_with(self, drug: Drug, others: Iterable[str]) -> list[Interaction]:
        """The interactions of ``drug`` with each of ``others`` (drug names; unknown names are skipped)."""
        found = []
        for name in others:
            other = self.find(name)
            hit = self.interaction(drug, other) if other is not None else None
            if hit is not None:
                found.append(hit)
        return found

    def metabolic_effects(self, a: Drug, b: Drug) -> list[str]:
        """Pharmacokinetic effects expected from the two drugs' CYP450 / P-gp roles, in words."""
        effects = []
        for x, y in ((a, b), (b, a)):
            for verb, roles, rise, fall in (("inhibits", x.metabolism.inhibits, "rise", "fall"),
                                            ("induces", x.metabolism.induces, "fall", "rise")):
                for role in roles:
                    actor = f"{x.name} {verb} {role.enzyme} ({role.strength})"
                    if role.enzyme in y.metabolism.substrate_of:
                        effects.append(f"{actor}, which {_clears(role.enzyme)} {y.name}: {y.name} levels are "
                                       f"expected to {rise}.")
                    if role.enzyme in y.metabolism.activated_by:
                        effects.append(f"{actor}, which activates the prodrug {y.name}: its active metabolite and "
                                       f"effect are expected to {fall}.")
        return effects

    # -- allergy ---------------------------------------------------------------------------------------------------
    def allergy_group_of(self, substance: str) -> str | None:
        """The allergy group a recorded allergen belongs to: a group label ("penicillin") or a drug's group."""
        group = self._group_labels.get(normalize(substance))
        if group is not None:
            return group
        drug = self.find(substance)
        return drug.allergy_group if drug else None

    def allergy_match(self, substance: str, drug: Drug) -> AllergyMatch | None:
        """How ``drug`` relates to an allergy recorded as ``substance``, or None if unrelated."""
        allergen = self.find(substance)
        if allergen is not None and allergen.name == drug.name:
            return AllergyMatch("same drug", "high", "The patient is allergic to this drug: do not give it.")
        group = self.allergy_group_of(substance)
        if group is None or drug.allergy_group is None:
            return None
        if group == drug.allergy_group:
            return AllergyMatch("same allergy group", "high",
                                f"{drug.name} belongs to the same allergy group ({group}): do not give it.")
        cross = self._cross.get((group, drug.allergy_group))
        return None if cross is None else AllergyMatch("cross-reactive group", cross.risk, cross.advice)

    def allergy_conflict(self, substance: str, drug: Drug) -> AllergyConflict | None:
        """How prescribing ``drug`` conflicts with an allergy to ``substance``: "same" (the drug itself or its allergy
        group), "cross" (a group with low or high cross-reactivity), or None (unrelated or negligible)."""
        match = self.allergy_match(substance, drug)
        if match is None or match.risk == "negligible":
            return None
        return "cross" if match.relation == "cross-reactive group" else "same"

    # -- dosing, renal function, pregnancy -------------------------------------------------------------------------
    @staticmethod
    def renal_band(drug: Drug, value: float) -> RenalBand | None:
        """The renal band containing ``value`` (in the drug's renal measure); None when no adjustment is needed."""
        return next((band for band in drug.renal_bands if band.contains(value)), None)

    @staticmethod
    def dose_limit(drug: Drug, indications: Iterable[str] = (), weight_kg: float | None = None
                   ) -> AppliedLimit | None:
        """The daily limit for ``drug`` given what it is for (a prescription's indication, the patient's
        conditions: the first that names one of the drug's ``dose_limits``) and body weight (rounded up to a whole
        milligram); the drug's overall
        ``max_daily_mg`` when none applies; None when the reference sets no limit."""
        texts = [t for t in indications if t]
        limit: DoseLimit | None = next((lim for lim in drug.dose_limits if any(
            _has_words(t, term) for t in texts for term in lim.terms)), None)
        if limit is None:
            if drug.max_daily_mg is None:
                return None
            return AppliedLimit(drug.max_daily_mg, "maximum adult daily dose")
        if limit.mg_per_kg is not None and weight_kg is not None and limit.mg_per_kg * weight_kg < limit.max_mg:
            by_weight = math.ceil(limit.mg_per_kg * weight_kg - 1e-9)  # doses are drawn up in whole milligrams
            return AppliedLimit(min(by_weight, limit.max_mg),
                                f"{limit.mg_per_kg:g} mg/kg for {limit.indication} at {weight_kg:g} kg")
        return AppliedLimit(limit.max_mg, f"maximum for {limit.indication}")

    @staticmethod
    def pregnancy_verdict(drug: Drug, gestation_weeks: float | None = None,
                          indication: str = "") -> SafetyVerdict | None:
        """The drug's verdict at a gestation (the most cautious when unknown); "compatible" when ``indication`` is
        one of its ``obstetric_uses``; None when the reference has no pregnancy entry."""
        safety = drug.pregnancy
        if safety is None:
            return None
        if indication and any(_has_words(indication, use) for use in safety.obstetric_uses):
            return "compatible"
        return safety.at(gestation_weeks)


def _has_words(text: str, term: str) -> bool:
    return f" {normalize(term)} " in f" {normalize(text)} "


def _clears(enzyme: Enzyme) -> str:
    return "transports" if enzyme == "P-gp" else "metabolises"


@lru_cache(maxsize=8192)
def _find(ref: DrugReference, name: str) -> Drug | None:
    words = normalize(name).split()
    for end in range(len(words), 0, -1):
        drug = ref._names.get(" ".join(words[:end]))
        if drug is not None:
            return drug
    return None


@lru_cache(maxsize=8192)
def _mentioned(ref: DrugReference, text: str) -> tuple[Drug, ...]:
    found: dict[str, Drug] = {}
    for match in ref._mention.finditer(normalize(text)):
        drug = ref._names[match.group(1)]
        found.setdefault(drug.name, drug)
    return tuple(found.values())


def load_data(folder: str | Path | None = None) -> ReferenceData:
    """The reference stored as ``classes.json``, ``drugs.json``, ``interactions.json`` and ``allergy.json`` in
    ``folder`` (default: the bundled ``clinical_gym/data/drugs``)."""
    root = resources.files("clinical_gym") / "data" / "drugs" if folder is None else Path(folder)
    parts = {name: json.loads((root / f"{name}.json").read_text(encoding="utf-8")) for name in DATA_FILES}
    return ReferenceData.model_validate({
        "classes": {c["tag"]: c for c in parts["classes"]},
        "drugs": {d["name"]: d for d in parts["drugs"]},
        "interactions": parts["interactions"],
        "allergy_groups": {g["name"]: g for g in parts["allergy"]["groups"]},
        "cross_reactivity": parts["allergy"]["cross_reactivity"]})


@lru_cache(maxsize=1)
def reference() -> DrugReference:
    """The bundled drug reference (built on first use, then shared)."""
    return DrugReference(load_data())
