"""The drug reference: the one source of drug knowledge for every domain, tool, task generator and safety rule.

What it holds (``clinical_gym/data/drugs/*.json``; the audit page ``docs/drugs.md`` lists every rule): drugs with
their classes, indications, usual and maximum doses, dose limits by indication (alteplase: 90 mg for stroke, 100 mg
for pulmonary embolism), dose-dependent classes (aspirin is an NSAID only at analgesic doses), renal dose bands,
hepatic advice, pregnancy safety by trimester and lactation safety, allergy group, CYP450 / P-glycoprotein roles,
cautions and (psychotropics) adverse-effect profiles; drug classes and the classes each implies; class-level
interaction rules (a new drug of a class gets the class's rules at once); allergy groups and their
cross-reactivity. Each rule names the label or guideline it follows, its severity, mechanism and management.

The API (stable; everything else is internal)::

    from clinical_gym.drugs import reference
    ref = reference()                        # the bundled DrugReference, loaded once
    drug = ref.find("Sertraline 50 mg")      # Drug | None   (ref.resolve(name): Drug or ValueError with hints)
    ref.mentioned("start linezolid ...")     # the drugs named in a text
    ref.drugs, ref.classes, ref.rules        # name -> Drug, tag -> DrugClass, InteractionRule tuple
    ref.members("maoi")                      # every drug of a class (implied classes and CYP450 tags included)
    hit = ref.interaction(a, b)              # Interaction | None: the most severe rule (.severity, .mechanism,
                                             #   .management, .source, .rule); daily_mg_a/_b add dose classes
    ref.interactions_with(drug, ["warfarin", "lithium"])
    ref.allergy_match("penicillin", drug)    # AllergyMatch | None (relation, risk, advice, verdict(severity))
    ref.allergy_conflict("penicillin", drug) # "same" | "cross" | None
    ref.dose_limit(drug, ["acute ischaemic stroke"], weight_kg=70)   # AppliedLimit | None (max_mg, basis)
    ref.renal_band(drug, egfr)               # RenalBand | None
    ref.pregnancy_verdict(drug, gestation_weeks=30, indication="")   # compatible/caution/avoid/contraindicated

A ``Drug`` answers ``drug.has("ssri", "snri")``, ``drug.tags``, ``drug.max_daily_mg``, ``drug.avoid_below``,
``drug.pregnancy`` (``PregnancySafety``), ``drug.breastfeeding``, ``drug.renal_bands``, ``drug.metabolism``.
A domain that needs another view (a formulary subset, a patient-specific check) derives it from ``reference()``;
``DrugReference(load_data(folder))`` builds a reference from another folder of the same four files.
"""

from __future__ import annotations

from clinical_gym.drugs.model import (
    SEVERITY_RANK,
    AllergyGroup,
    CrossReactivity,
    DoseLimit,
    Drug,
    DrugClass,
    InteractionRule,
    LactationSafety,
    PregnancySafety,
    ReferenceData,
    Regimen,
    RenalBand,
)
from clinical_gym.drugs.reference import (
    AllergyMatch,
    AppliedLimit,
    DrugReference,
    Interaction,
    cyp_tags,
    load_data,
    reference,
)

__all__ = ["SEVERITY_RANK", "AllergyGroup", "AllergyMatch", "AppliedLimit", "CrossReactivity", "DoseLimit", "Drug",
           "DrugClass", "DrugReference", "Interaction", "InteractionRule", "LactationSafety", "PregnancySafety",
           "ReferenceData", "Regimen", "RenalBand", "cyp_tags", "load_data", "reference"]
