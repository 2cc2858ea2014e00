"""Name and id lookups the domain toolkits share, with the refusals the agent reads: a patient by id
(``PatientLookup``), a drug of the drug reference by name (``formulary_drug``), and the "Did you mean ...?" hint
for an unknown name (``did_you_mean``); ``drug_facts``, the reference entry as the drug tools show it; and
``with_patient_id`` for recording a call's arguments with the id the tools used."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from clinical_gym.cases.schema import normalize
from clinical_gym.drugs import Drug, reference

P = TypeVar("P")


def did_you_mean(name: str, choices: Iterable[str], label: Callable[[str], str] = str, *, unique: bool = True) -> str:
    """``" Did you mean 'a', 'b'?"`` for up to three of ``choices`` (normalised names) close to ``name``, each shown
    as ``label(choice)`` (once when ``unique``); "" when none is close."""
    close = difflib.get_close_matches(normalize(name), list(choices), n=3, cutoff=0.6)
    shown = [repr(label(c)) for c in close]
    if unique:
        shown = list(dict.fromkeys(shown))
    return f" Did you mean {', '.join(shown)}?" if shown else ""


def formulary_drug(name: str) -> Drug:
    """The drug of the drug reference (``clinical_gym.drugs``) ``name`` refers to; ValueError with close names
    otherwise."""
    drugs = reference()
    drug = drugs.find(name)
    if drug is None:
        raise ValueError(f"{name!r} is not in the formulary; use the generic drug name."
                         f"{did_you_mean(name, drugs.names(), lambda n: drugs.find(n).name)}")  # type: ignore[union-attr]
    return drug


def drug_facts(drug: Drug) -> dict[str, Any]:
    """The reference entry as the drug tools show it: classes, allergy group, maximum daily dose and limits by
    indication, renal dosing bands, and pregnancy and breastfeeding advice."""
    facts: dict[str, Any] = {
        "drug": drug.name, "other_names": list(drug.aliases), "class": drug.drug_class,
        "classes": sorted(t for t in drug.tags if t in reference().classes),
        "allergy_group": drug.allergy_group, "max_daily_dose_mg": drug.max_daily_mg}
    if drug.dose_limits:
        facts["dose_limits_by_indication"] = [f"{lim.indication}: {lim.note or f'up to {lim.max_mg:g} mg'}"
                                              for lim in drug.dose_limits]
    facts["renal_dosing"] = ({"measure": drug.renal_measure,
                              "bands": [{"range": b.range_text, "advice": b.advice} for b in drug.renal_bands]}
                             if drug.renal_bands else "no adjustment needed")
    pregnancy = drug.pregnancy
    facts["pregnancy"] = "no entry" if pregnancy is None else {
        "first_trimester": pregnancy.first_trimester, "second_trimester": pregnancy.second_trimester,
        "third_trimester": pregnancy.third_trimester, "note": pregnancy.note}
    facts["contraindicated_in_pregnancy"] = drug.pregnancy_contraindicated
    if drug.breastfeeding is not None:
        facts["breastfeeding"] = f"{drug.breastfeeding.verdict}: {drug.breastfeeding.note}".rstrip(": ")
    return facts


def with_patient_id(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a tool call's ``arguments`` with the patient id as ``PatientLookup`` reads it (spaces stripped)."""
    canonical = dict(arguments)
    if isinstance(canonical.get("patient_id"), str):
        canonical["patient_id"] = canonical["patient_id"].strip()
    return canonical


class PatientLookup(Generic[P]):
    """Mixin for a toolkit whose ``db.patients`` maps patient ids to records: ``_patient(patient_id)`` is the
    record, or a KeyError naming the id format (``patient_id_example``)."""

    patient_id_example: ClassVar[str]

    def _patient(self, patient_id: str) -> P:
        patients: Mapping[str, P] = self.db.patients  # type: ignore[attr-defined]
        patient = patients.get(patient_id.strip())
        if patient is None:
            raise KeyError(f"patient {patient_id!r} not found; patient ids look like {self.patient_id_example!r}")
        return patient
