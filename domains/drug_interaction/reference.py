"""Queries over a DrugInteraction database's drug reference: drug names, class tags, interaction rules, allergy
cross-reactivity, renal dose bands, Cockcroft-Gault creatinine clearance and CYP450 / P-glycoprotein predictions.

``reference_of(db)`` builds a ``DrugReference`` once per loaded database and shares it with the database's episode
copies (the reference never changes during an episode).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

from clinical_gym.cases.schema import normalize
from clinical_gym.domains.drug_interaction.data_model import (
    SEVERITY_RANK,
    AllergySeverity,
    CrossReactivity,
    DrugInteractionDB,
    DrugMonograph,
    Enzyme,
    InteractionRule,
    RenalBand,
)

CG_FACTOR = {"male": 1.23, "female": 1.04}
ENZYME_TAGS: dict[str, str] = {"CYP1A2": "cyp1a2", "CYP2C9": "cyp2c9", "CYP2C19": "cyp2c19", "CYP2D6": "cyp2d6",
                               "CYP3A4": "cyp3a4", "P-gp": "pgp"}
SEVERE_REACTIONS: frozenset[str] = frozenset({"severe", "life-threatening"})
Relation = Literal["same drug", "same allergy group", "cross-reactive group"]
Verdict = Literal["avoid", "use with caution", "no special precautions"]


def creatinine_clearance(age: float, weight_kg: float, creatinine_umol_l: float, sex: str) -> float:
    """Cockcroft-Gault creatinine clearance in mL/min (actual body weight, creatinine in µmol/L), one decimal."""
    return round((140 - age) * weight_kg * CG_FACTOR[sex] / creatinine_umol_l, 1)


def cyp_tags(drug: DrugMonograph) -> set[str]:
    """Tags implied by a drug's CYP450 / P-gp roles: ``<strength>_<enzyme>_inhibitor`` and ``..._inducer``
    (e.g. ``strong_cyp3a4_inhibitor``), ``<enzyme>_substrate`` (e.g. ``pgp_substrate``)."""
    m = drug.metabolism
    tags = {f"{r.strength}_{ENZYME_TAGS[r.enzyme]}_inhibitor" for r in m.inhibits}
    tags |= {f"{r.strength}_{ENZYME_TAGS[r.enzyme]}_inducer" for r in m.induces}
    return tags | {f"{ENZYME_TAGS[e]}_substrate" for e in m.substrate_of}


@dataclass(frozen=True)
class AllergyMatch:
    """How a drug relates to one recorded allergen, the risk that relation carries, and the advice."""

    relation: Relation
    risk: Literal["high", "low", "negligible"]
    advice: str

    def verdict(self, severity: AllergySeverity) -> Verdict:
        """What to do with the drug given the severity of the recorded reaction."""
        if self.risk == "high":
            return "avoid"
        if self.risk == "low":
            return "avoid" if severity in SEVERE_REACTIONS else "use with caution"
        return "no special precautions"


class DrugReference:
    """The reference part of one database, indexed."""

    def __init__(self, db: DrugInteractionDB) -> None:
        self.drugs = db.drugs
        self.rules = db.interactions
        self._names = {normalize(n): d for d in db.drugs.values() for n in (d.name, *d.aliases)}
        self._tags = {d.name: frozenset({d.name, *d.classes, *cyp_tags(d)}) for d in db.drugs.values()}
        self._group_labels = {normalize(label): g.name for g in db.allergy_groups.values()
                              for label in (g.name, *g.labels)}
        self._cross: dict[tuple[str, str], CrossReactivity] = {(c.allergy_group, c.drug_group): c
                                                               for c in db.cross_reactivity}
        self._pairs: dict[tuple[str, str], InteractionRule | None] = {}
        self.indications = sorted({i for d in db.drugs.values() for i in d.indications})
        known = frozenset().union(*self._tags.values())
        unknown = sorted({s for rule in db.interactions for s in rule.between} - known)
        if unknown:
            raise ValueError(f"interaction rules name no drug or class: {unknown}")

    # -- names -------------------------------------------------------------------------------------------------
    def find(self, name: str) -> DrugMonograph | None:
        """The drug ``name`` refers to (name or alias, any case or punctuation; a trailing strength or form such as
        "simvastatin 40 mg tablets" is ignored), or None."""
        words = normalize(name).split()
        for end in range(len(words), 0, -1):
            drug = self._names.get(" ".join(words[:end]))
            if drug is not None:
                return drug
        return None

    def resolve(self, name: str) -> DrugMonograph:
        """The drug ``name`` refers to; ValueError naming close matches otherwise."""
        drug = self.find(name)
        if drug is None:
            close = difflib.get_close_matches(normalize(name), list(self._names), n=3, cutoff=0.6)
            hint = f" Did you mean {', '.join(repr(self._names[c].name) for c in close)}?" if close else ""
            raise ValueError(f"{name!r} is not in the drug reference; use the generic name.{hint}")
        return drug

    def canonical_indication(self, text: str) -> str:
        """The reference's wording of an indication; ValueError listing them otherwise."""
        wanted = normalize(text)
        for known in self.indications:
            if normalize(known) == wanted:
                return known
        raise ValueError(f"unknown indication {text!r}; known indications: {', '.join(self.indications)}")

    # -- interactions --------------------------------------------------------------------------------------------
    def tags(self, drug: DrugMonograph) -> frozenset[str]:
        """The drug's name, classes and CYP450 tags: what interaction rules can match it by."""
        return self._tags[drug.name]

    def interaction(self, a: DrugMonograph, b: DrugMonograph) -> InteractionRule | None:
        """The most severe rule matching two different drugs (the first listed among equals), or None."""
        key = (a.name, b.name) if a.name <= b.name else (b.name, a.name)
        if key not in self._pairs:
            self._pairs[key] = None if a.name == b.name else self._match(self._tags[a.name], self._tags[b.name])
        return self._pairs[key]

    def _match(self, ta: frozenset[str], tb: frozenset[str]) -> InteractionRule | None:
        best: InteractionRule | None = None
        for rule in self.rules:
            x, y = rule.between
            if ((x in ta and y in tb) or (x in tb and y in ta)) and (
                    best is None or SEVERITY_RANK[rule.severity] > SEVERITY_RANK[best.severity]):
                best = rule
        return best

    def metabolic_effects(self, a: DrugMonograph, b: DrugMonograph) -> list[str]:
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

    # -- allergy -------------------------------------------------------------------------------------------------
    def allergy_group_of(self, substance: str) -> str | None:
        """The allergy group a recorded allergen belongs to: a group label ("penicillin") or a drug's group."""
        group = self._group_labels.get(normalize(substance))
        if group is not None:
            return group
        drug = self.find(substance)
        return drug.allergy_group if drug else None

    def allergy_match(self, substance: str, drug: DrugMonograph) -> AllergyMatch | None:
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

    # -- renal -----------------------------------------------------------------------------------------------------
    @staticmethod
    def renal_band(drug: DrugMonograph, value: float) -> RenalBand | None:
        """The renal band containing ``value`` (in the drug's renal measure); None when no adjustment is needed."""
        return next((band for band in drug.renal_bands if band.contains(value)), None)


def _clears(enzyme: Enzyme) -> str:
    return "transports" if enzyme == "P-gp" else "metabolises"


def reference_of(db: DrugInteractionDB) -> DrugReference:
    """The database's ``DrugReference``, built on first use and shared with its episode copies."""
    return db.shared("reference", lambda: DrugReference(db))
